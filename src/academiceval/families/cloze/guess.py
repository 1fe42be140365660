"""The blind guessers (`models.choice_guessers`) on cloze items: accuracy per level with a bootstrap CI.

`cloze build` prints this table and stores it in the round (`stats.json` → `guessers`), `academiceval audit`
recomputes it from the round on disk, `benchmarks/cloze_guessers.py` prints it before/after and on SCALAR's own
published questions. Next to the guessers stand the two runnable baselines every cloze report shows:
`random` (`baseline/random-choice`, seed 0) and `lexical` (= `baseline/lexical-choice`). The fitted guessers are
cross-validated with folds grouped by question paper.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from academiceval.families.cloze.models import ClozeItem
from academiceval.families.cloze.prompt import choice_of
from academiceval.models.baselines import random_choice
from academiceval.models.choice_guessers import GUESSERS, ItemView, TermCache, guess_table, item_view
from academiceval.scores.mcq import LevelAccuracy, accuracy_by_level, score_item

TABLE = ("random", *GUESSERS)  # rows of the table, in order
CHANCE = 0.25  # four candidates
CHANCE_LIMIT = 0.35  # issue 24's target: no blind guesser above this on any level (chance + 0.10)


def views_of(items: Sequence[ClozeItem], cache: TermCache | None = None) -> list[ItemView]:
    cache = cache if cache is not None else TermCache()
    return [item_view(choice_of(it), cache) for it in items]


def level_of(item: ClozeItem) -> str:
    return item.preset.removeprefix("imported-").removeprefix("scalar-")


Known = dict[str, tuple[tuple[str, ...], dict[str, list[int]]]]  # level → (its items' ids, guesser → picks)


def guesser_picks(
    items: Sequence[ClozeItem], *, seed: int = 0, folds: int = 5, known: Known | None = None
) -> dict[str, list[int]]:
    """Every guesser's pick (slot index) per item; the fitted ones are cross-validated within each level.
    `known` holds levels whose picks were computed already on exactly these items in this order (the build's
    level check): they are taken as they are, not fitted again."""
    known = known or {}
    views: list[ItemView] | None = None
    out: dict[str, list[int]] = {name: [0] * len(items) for name in TABLE}
    out["random"] = [random_choice(len(it.candidates), seed=seed, key=it.sample_id) for it in items]
    by_level: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_level[level_of(it)].append(i)
    for lv, idx in by_level.items():
        hit = known.get(lv)
        if hit is not None and hit[0] == tuple(items[i].sample_id for i in idx):
            table = hit[1]
        else:
            views = views if views is not None else views_of(items)
            table = guess_table(
                [views[i] for i in idx],
                [items[i].gold for i in idx],
                [items[i].paper_id for i in idx],
                seed=seed,
                folds=folds,
            )
        for name, picks in table.items():
            for i, p in zip(idx, picks, strict=True):
                out[name][i] = p
    return out


def guesser_accuracy(
    items: Sequence[ClozeItem], *, seed: int = 0, n_boot: int = 2000, folds: int = 5, known: Known | None = None
) -> dict[str, dict[str, LevelAccuracy]]:
    """guesser → level (and "all") → accuracy with its bootstrap 95% CI (`known`: see `guesser_picks`)."""
    picks = guesser_picks(items, seed=seed, folds=folds, known=known)
    out: dict[str, dict[str, LevelAccuracy]] = {}
    for name, chosen in picks.items():
        scores = [
            score_item(it.sample_id, f"<answer>{it.candidates[k].slot}</answer>", it.label, level=level_of(it))
            for it, k in zip(items, chosen, strict=True)
        ]
        out[name] = accuracy_by_level(scores, n_boot=n_boot, seed=seed)
    return out


def as_json(table: dict[str, dict[str, LevelAccuracy]]) -> dict[str, Any]:
    return {
        name: {
            lv: {"n": a.n, "accuracy": round(a.accuracy, 4), "ci": [round(a.ci[0], 4), round(a.ci[1], 4)]}
            for lv, a in levels.items()
        }
        for name, levels in table.items()
    }


def over_limit(table: dict[str, dict[str, LevelAccuracy]], limit: float = CHANCE_LIMIT) -> list[str]:
    """ "guesser level accuracy" for every blind guesser above `limit` on a level (random excluded)."""
    return [
        f"{name} {lv} {a.accuracy:.2f}"
        for name, levels in table.items()
        if name != "random"
        for lv, a in levels.items()
        if lv != "all" and a.accuracy > limit
    ]


def flagged(table: dict[str, dict[str, LevelAccuracy]], limit: float = CHANCE_LIMIT) -> list[str]:
    """`over_limit` for the round's flag: the per-level lines, worst first."""
    return sorted(over_limit(table, limit), key=lambda s: -float(s.rsplit(" ", 1)[1]))


def format_table(
    table: dict[str, dict[str, LevelAccuracy]], levels: Iterable[str] = ("easy", "medium", "hard")
) -> list[str]:
    """One line per guesser: accuracy [95% CI] per level."""
    levels = [lv for lv in levels if any(lv in v for v in table.values())]
    lines = [f"{'guesser':16s}" + "".join(f"{lv:>24s}" for lv in levels)]
    for name in TABLE:
        if name not in table:
            continue
        cells = []
        for lv in levels:
            a = table[name].get(lv)
            cells.append(f"{a.accuracy:.2f} [{a.ci[0]:.2f}, {a.ci[1]:.2f}] n={a.n}" if a else "—")
        lines.append(f"{name:16s}" + "".join(f"{c:>24s}" for c in cells))
    return lines
