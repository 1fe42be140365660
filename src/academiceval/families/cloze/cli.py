"""`academiceval cloze build|import`: the citation-cloze family (SCALAR) — thin over families.cloze.

    academiceval cloze build --round cloze-2025-01 [--level easy --level hard] [--cutoff 2024-12-31]
        [--set max_candidate_tokens=20000] [--judge openai/gpt-4o-mini --type-decider judge] [--seed S]
    academiceval cloze import PATH... --round scalar-published [--level hard]

Both write a round in the one round format; `run`, `score --metrics accuracy` and `report` take it from there.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, fail, progress, summary_table

app = typer.Typer(help="Citation cloze (SCALAR): build questions from the store, or import published ones.")


def _value(raw: str) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


@app.command("build")
def build(
    round_name: Annotated[str, typer.Option("--round", help="Name of the round (its directory under rounds/).")],
    home: HomeOption = None,
    level: Annotated[
        list[str] | None, typer.Option("--level", help="easy, medium, hard (repeatable; default all three).")
    ] = None,
    cutoff: Annotated[
        str | None, typer.Option("--cutoff", help="Live guard: only question papers with v1 date after this day.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a knob on every level, e.g. max_questions=50 (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Round seed; every question's seed derives from it.")] = 0,
    tokenizer: Annotated[
        str | None, typer.Option("--tokenizer", help="wordpiece (default) or tiktoken:<encoding> for the caps.")
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="A model spec that also annotates citation types (judge role).")
    ] = None,
    type_decider: Annotated[
        str | None, typer.Option("--type-decider", help="heuristic (default), judge or source (SCALAR's labels).")
    ] = None,
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Directory overriding citation_cloze*.j2.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the round if it exists (a round, nothing else).")
    ] = False,
) -> None:
    """Build citation-cloze questions (SCALAR presets) from the papers in the workspace."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.cloze.build import build_cloze_round
    from academiceval.families.cloze.classify import JudgeClassifier
    from academiceval.store import Workspace

    overrides: dict[str, object] = {}
    for kv in set_ or []:
        k, sep, v = kv.partition("=")
        if not sep:
            raise fail(f"--set {kv!r}: use knob=value")
        overrides[k.strip()] = _value(v.strip())
    if type_decider:
        overrides["type_decider"] = type_decider
    try:
        day = date.fromisoformat(cutoff) if cutoff else None
    except ValueError:
        raise fail(f"--cutoff {cutoff!r} is not a date; use YYYY-MM-DD") from None
    ws = Workspace(home)
    role = None
    if judge:
        from academiceval.models.cache import ResponseCache
        from academiceval.models.registry import load_backend
        from academiceval.runs.roles import role_ask

        try:
            backend = load_backend(judge)
        except AcademicEvalError as exc:
            raise fail(exc) from None
        role = JudgeClassifier(role_ask(backend, cache=ResponseCache.in_workspace(ws.home)), judge, ws)
    with progress() as bar:
        task = bar.add_task("questions", total=None)
        try:
            rep = build_cloze_round(
                ws,
                round_name,
                judge=role,
                progress=lambda _s, done, total: bar.update(task, completed=done, total=total),
                levels=level or ["easy", "medium", "hard"],
                overrides=overrides,
                cutoff=day,
                seed=seed,
                tokenizer=tokenizer,
                templates_dir=str(templates) if templates else None,
                force=force,
            )
        except AcademicEvalError as exc:
            raise fail(exc) from None
    rows = []
    for cfg, items in rep.items.items():
        slots = [sum(1 for it in items if it.label == str(k)) for k in range(4)]
        rows.append((cfg, len(items), len({it.paper_id for it in items}), "/".join(map(str, slots))))
    console.print(summary_table(f"cloze round {round_name}", ["config", "items", "papers", "gold slots 0/1/2/3"], rows))
    for lv, c in rep.skips.items():
        top = ", ".join(f"{k} {n}" for k, n in c.most_common(4))
        console.print(f"[dim]{lv} skipped: {top}[/dim]")
    console.print(f"{rep.question_papers} question papers, {rep.seconds:.1f}s → {rep.path}")


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="SCALAR question files or folders (per-question or HF list).")],
    round_name: Annotated[str, typer.Option("--round", help="Name of the round to write.")],
    home: HomeOption = None,
    level: Annotated[
        str | None, typer.Option("--level", help="Level of every file (default: from the file or folder name).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the round if it exists (a round, nothing else).")
    ] = False,
) -> None:
    """Import SCALAR's published questions as a round (prompts kept verbatim)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.families.cloze.importer import import_scalar
    from academiceval.store import Workspace

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise fail(f"not found: {', '.join(missing)}")
    ws = Workspace(home)
    try:
        rep = import_scalar(paths, ws.rounds_dir, round_name, level=level, force=force, home=ws.home)
    except AcademicEvalError as exc:
        raise fail(exc) from None
    rows = [(lv, len(v)) for lv, v in sorted(rep.items.items())]
    console.print(summary_table(f"imported into {round_name}", ["level", "items"], rows))
    for reason, n in rep.problems.most_common():
        console.print(f"[yellow]{n} skipped: {reason}[/yellow] (e.g. {rep.examples[reason]})")
    if not rep.items:
        raise fail("no usable question found: nothing was written", code=1)
    console.print(f"→ {rep.path}")
