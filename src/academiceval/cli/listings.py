"""`academiceval models` and `academiceval metrics`: what can be run and what can be scored, from the registries.

A new user should not have to read the source to learn that `baseline/cite-copy` exists or what
`citation-unlisted` counts: both lists are built from the registries themselves (providers, `BASELINE_SUMMARIES`,
the metric registry with each metric's summary and options), so they cannot fall behind the code.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from academiceval.cli.common import console, summary_table


def models(as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False) -> None:
    """Model specs `run --model` takes: the providers, and the baselines that need no model."""
    from academiceval.models.baselines import BASELINE_SUMMARIES, BASELINES
    from academiceval.models.registry import provider_examples

    rows = [(example, "provider (see `run --help`)") for example in provider_examples()]
    rows += [(f"baseline/{b}", BASELINE_SUMMARIES[b]) for b in BASELINES]
    if as_json:
        typer.echo(json.dumps([{"model": m, "what": w} for m, w in rows], indent=2))
        return
    console.print(
        summary_table("Models (`run --model SPEC`)", ["spec", "what it is"], [tuple(map(escape, r)) for r in rows])
    )
    console.print(
        "A local OpenAI-compatible test server: python -m academiceval.testing.fake_server --port 8000 "
        "(then --model openai/fake-model --base-url http://127.0.0.1:8000/v1)",
        soft_wrap=True,
    )


def metrics(as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False) -> None:
    """Metrics `score --metrics` takes, what each measures, and its options (`--metric-arg METRIC.OPTION=VALUE`)."""
    from academiceval.scores import registry

    rows = []
    for name in registry.names():
        m = registry.get(name)
        opts = ", ".join(m.options.model_fields) if m.options is not None else ""
        rows.append((name, m.summary, opts))
    if as_json:
        typer.echo(json.dumps([{"metric": n, "summary": s, "options": o} for n, s, o in rows], indent=2))
        return
    cols = ["metric", "what it measures", "options"]
    console.print(summary_table("Metrics (`score --metrics NAME,...`)", cols, [tuple(map(escape, r)) for r in rows]))
