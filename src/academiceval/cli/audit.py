"""`academiceval audit ROUND`: validity statistics of a round (overlap, label lengths, debris, citations, gate,
BERTScore truncation, splits) as tables and JSON — what a maintainer checks before releasing a round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from academiceval.cli.common import HomeOption, console, fail, summary_table


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def render(a: dict[str, Any]) -> None:
    """Print the audit dict as rich tables (wide: sample ids and reasons must stay readable)."""
    from rich.console import Console

    out = Console(width=max(console.width, 160)) if not console.is_terminal else console
    ov = a["overlap"]
    rows = []
    for task, t in ov["tasks"].items():
        c, r = t["coverage"], t["run"]
        rows.append(
            (
                task,
                t["samples"],
                f"{c.get('p50', 0):.2f} / {c.get('p95', 0):.2f} / {c.get('max', 0):.2f}",
                f"{r.get('p50', 0):.0f} / {r.get('p95', 0):.0f} / {r.get('max', 0):.0f}",
                t["coverage_over_0.2"],
                t["coverage_over_0.5"],
                t["run_40_plus"],
                t["over_limits"],
            )
        )
    lim = ov["limits"]
    out.print(
        summary_table(
            f"label/input overlap ({ov['n']}-gram coverage, longest common run in words; limits: coverage >"
            f" {lim['max_coverage']}, run ≥ {lim['max_run']})",
            (
                "task",
                "samples",
                "coverage p50/p95/max",
                "run p50/p95/max",
                "cov>0.2",
                "cov>0.5",
                "run≥40",
                "over limits",
            ),
            rows,
        )
    )
    out.print(
        summary_table(
            "worst overlaps",
            ("sample", "split", "input", "coverage", "run", "label words"),
            [
                (r["sample_id"], r["split"], r["field"], f"{r['coverage']:.2f}", r["run"], r["label_words"])
                for r in ov["worst"]
            ],
        )
    )
    lw = a["label_words"]
    out.print(
        summary_table(
            "label length (words)",
            ("task", "labels", "min", "p50", "p95", "max", "plausible", "outside"),
            [
                (
                    t,
                    v["labels"],
                    f"{v.get('min', 0):.0f}",
                    f"{v.get('p50', 0):.0f}",
                    f"{v.get('p95', 0):.0f}",
                    f"{v.get('max', 0):.0f}",
                    "–".join(map(str, v.get("plausible", []))) or "—",
                    v.get("outside_plausible", "—"),
                )
                for t, v in lw.items()
            ],
        )
    )
    drows = []
    for t, v in a["debris"].items():
        for sp in ("train", "val", "test"):
            e = v.get(sp)
            if not isinstance(e, dict):
                continue
            kinds = [
                f"{k} {x['labels_with']}/{x['occurrences']}"
                for k, x in e.items()
                if isinstance(x, dict) and x["labels_with"]
            ]
            drows.append((t, sp, e["labels"], e["labels_with_any"], ", ".join(kinds) or "none"))
    out.print(
        summary_table(
            "debris in labels after cleaning (kind labels with / occurrences)",
            ("task", "split", "labels", "with any", "kinds"),
            drows,
        )
    )
    ts = a.get("title_samples") or {}
    if ts:
        out.print(
            summary_table(
                "papers with a title sample",
                ("split", "papers", "with a title sample"),
                [(sp, v["papers"], v["with_title_sample"]) for sp, v in ts.items()],
            )
        )
    tr = a["title_removal"]
    c = a["citations"]
    sp = a["splits"]
    rows2: list[tuple[str, object]] = [
        ("title inputs with removal holes", f"{tr['with_holes']} of {tr['title_inputs']} ({tr['holes']} holes)"),
        ("cited works resolved (related work)", f"{c['resolved']} of {c['cited']} ({_pct(c['rate'])})"),
        ("related-work samples", c["related_work_samples"]),
    ]
    for metric, tasks in a["bertscore_truncation"].items():
        for task, t in tasks.items():
            rows2.append((f"{metric} truncated · {task}", f"{t['truncated']} of {t['scores']} ({_pct(t['rate'])})"))
    if not a["bertscore_truncation"]:
        rows2.append(("BERTScore truncation", "no BERTScore records for this round"))
    asked = sp.get("asked") or {}
    rows2.append(
        (
            "split fractions asked → delivered (papers)",
            " · ".join(
                f"{k} {_pct(asked.get(k))}→{_pct(sp['delivered'].get(k))} ({sp['papers'].get(k, 0)})"
                for k in ("train", "val", "test")
            ),
        )
    )
    rows2.append(("single-day windows", ", ".join(sp["single_day_windows"]) or "none"))
    later = sp.get("later_text_versions") or {}
    if later:
        rows2.append(
            (
                "papers whose text is a later version than v1",
                ", ".join(f"{k} v{v['version']} ({v['date'] or 'date unknown'})" for k, v in sorted(later.items())),
            )
        )
    for k, v in a["quality_exclusions"].items():
        for reason, n in v.items():
            rows2.append((f"gate · {k}", f"{reason} ×{n}"))
    for k, v in (a.get("debris_exclusions") or {}).items():
        for reason, n in v.items():
            rows2.append((f"debris · {k}", f"{reason} ×{n}"))
    for k, v in (a.get("train_label_debris") or {}).items():
        rows2.append((f"train labels kept with debris · {k}", ", ".join(f"{kk} ×{n}" for kk, n in v.items())))
    for k, v in a["leakage_exclusions"].items():
        for reason, n in v.items():
            rows2.append((f"leakage · {k}", f"{reason} ×{n}"))
    out.print(summary_table(f"round {a['round']}: {a['samples']} samples from {a['papers']} papers", ("", ""), rows2))


def audit(
    round_ref: Annotated[
        str, typer.Argument(metavar="ROUND", help="Round name in the workspace, or a round directory.")
    ],
    home: HomeOption = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the full audit as JSON to this file.")
    ] = None,
    runs: Annotated[
        Path | None,
        typer.Option("--runs", help="Runs of this round (for BERTScore truncation). Default: the workspace's."),
    ] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip checking file sha256s.")] = False,
) -> None:
    """Validity statistics of a round: label/input overlap (n-gram coverage, longest common run) and worst cases,
    label length per task, debris in labels, title-removal holes, citation-resolution rate, quality-gate and
    leakage exclusions, BERTScore truncation rate, split fractions asked vs delivered."""
    from academiceval.errors import AcademicEvalError
    from academiceval.rounds.audit import audit_round
    from academiceval.store.artifacts import Layout, load_round
    from academiceval.store.workspace import resolve_home

    try:
        layout = Layout.of(resolve_home(home))
        rnd = load_round(layout.find_round(round_ref), verify=not no_verify)
        result = audit_round(rnd, runs_dir=runs if runs is not None else layout.runs_dir / rnd.manifest.round)
    except AcademicEvalError as exc:
        raise fail(exc) from None
    render(result)
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
        console.print(f"JSON written to {json_out}")
