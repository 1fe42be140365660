"""The cloze family's part of `academiceval audit` (the round port "audit", `rounds.audit.AuditPort`).

For any cloze round on disk — built (either construction) or imported from SCALAR's published files — it
recomputes from the items alone: the blind guessers' accuracy per level with bootstrap 95% CIs (`guess`), the item
defects by kind (`defects`), the citation-type agreement of the heuristic with the source's stored types, and the
paper dates per level. Returned as data plus printable tables (`tables`: title, columns, rows).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from academiceval.families.cloze.defects import KINDS, round_defects
from academiceval.families.cloze.export import load_items
from academiceval.families.cloze.guess import TABLE, as_json, guesser_accuracy, level_of, over_limit
from academiceval.families.cloze.samples import item_date
from academiceval.families.cloze.stats import agreement
from academiceval.store.artifacts import LoadedRound

LEVELS = ("easy", "medium", "hard")


def _order(lv: str) -> tuple[int, str]:
    return (LEVELS.index(lv) if lv in LEVELS else len(LEVELS), lv)


def audit_cloze(rnd: LoadedRound, *, seed: int = 0) -> dict[str, Any]:
    """Blind guessers, defects, type agreement and dates of a cloze round (see the module docstring)."""
    items = list(load_items(rnd))
    if not items:
        return {}
    table = guesser_accuracy(items, seed=seed)
    guessers = as_json(table)
    defects = round_defects(items, level_of=level_of)
    levels = sorted({level_of(it) for it in items}, key=_order)
    types = {
        lv: agreement((it.citation_type.heuristic, it.citation_type.source) for it in items if level_of(it) == lv)
        for lv in levels
    }
    months: dict[str, Counter[str]] = defaultdict(Counter)
    for it in items:
        d = item_date(it)
        months[level_of(it)][f"{d.year}" if d else "undated"] += 1
    tables = [
        {
            "title": "blind guessers: accuracy [95% CI] per level (chance 0.25)",
            "columns": ["guesser", *levels],
            "rows": [[name, *(_cell(guessers[name].get(lv)) for lv in levels)] for name in TABLE if name in guessers],
        },
        {
            "title": "item defects per level",
            "columns": ["level", "items", *KINDS],
            "rows": [[lv, defects[lv]["items"], *(defects[lv]["defects"][k] for k in KINDS)] for lv in levels],
        },
        {
            "title": "citation type: heuristic vs the source's stored type (items that have one)",
            "columns": ["level", "items typed by the source", "agree", "rate", "confusion (heuristic|source)"],
            "rows": [
                [lv, t["n"], t["agree"], "—" if t["rate"] is None else f"{t['rate']:.2f}", str(t["confusion"])]
                for lv, t in types.items()
            ],
        },
        {
            "title": "question papers by year of first submission",
            "columns": ["level", "years"],
            "rows": [[lv, ", ".join(f"{y} ×{n}" for y, n in sorted(months[lv].items()))] for lv in levels],
        },
    ]
    return {
        "items": len(items),
        "guessers": guessers,
        "over_0.35": over_limit(table),
        "defects": defects,
        "type_agreement": types,
        "years": {lv: dict(c) for lv, c in months.items()},
        "tables": tables,
    }


def _cell(a: dict[str, Any] | None) -> str:
    return f"{a['accuracy']:.2f} [{a['ci'][0]:.2f}, {a['ci'][1]:.2f}] n={a['n']}" if a else "—"
