"""Blind guessers, item defects and the filtered construction, on SCALAR's real published files and papers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from academiceval.families.cloze.balance import level_check
from academiceval.families.cloze.defects import (
    ITEM_KINDS,
    KINDS,
    in_group,
    item_defects,
    name_fragment,
    round_defects,
    whole_citation,
)
from academiceval.families.cloze.guess import guesser_accuracy, views_of
from academiceval.families.cloze.importer import read_scalar_questions
from academiceval.families.cloze.prompt import choice_of
from academiceval.models.baselines import GUESSER_BASELINES, BaselineBackend, lexical_choice
from academiceval.models.choice_guessers import PER_ITEM, SCORERS, guess, guess_table, item_view


@pytest.fixture(scope="module")
def published(corpus: Path):
    """SCALAR's 300 published question files, imported."""
    return read_scalar_questions([corpus / "samples" / "scalar_questions"])


def test_lexical_guesser_is_the_lexical_baseline(published) -> None:
    """The guessers' BM25 (term counts cached per text) scores as bm25s does, and `lexical` picks what
    `baseline/lexical-choice` picks, on SCALAR's real questions."""
    items = [it for lv in ("easy", "hard") for it in published.items[lv][:40]]
    for it in items:
        ch = choice_of(it)
        view = item_view(ch)
        k, scores = lexical_choice(ch)
        assert guess("lexical", view) == k, it.sample_id
        ours = np.array(SCORERS["lexical"](view))
        assert np.allclose(ours, np.asarray(scores, dtype=np.float64), rtol=1e-4, atol=1e-5), it.sample_id


def test_guessers_are_runnable_baselines(published) -> None:
    it = published.items["medium"][0]
    sample_item = choice_of(it)
    for model, name in GUESSER_BASELINES.items():
        out = BaselineBackend(model).choose_item(sample_item)
        assert out.text == f"<answer>{sample_item.options[guess(name, item_view(sample_item))].key}</answer>"
    assert set(GUESSER_BASELINES.values()) == set(PER_ITEM) - {"lexical"}


def test_defect_rules_on_the_issue_examples() -> None:
    text = "as shown by Doshi-Velez & Kim, 2017 before"
    start = text.index("Velez")
    s, e = whole_citation(text, start, text.index(" before"))
    assert text[s:e] == "Doshi-Velez & Kim, 2017"
    grouped = "methods (Smith et al., 2020; Lee and Park, 2021; Chen, 2019) work"
    at = grouped.index("Lee")
    assert in_group(grouped, at, at + len("Lee and Park, 2021"))
    single = "the GLU variant (Shazeer, 2020) works"
    at = single.index("Shazeer")
    assert not in_group(single, at, at + len("Shazeer, 2020"))
    assert name_fragment("as Doshi-[M] shows", "[M]", "Velez & Kim, 2017")
    assert name_fragment("as Smith et al. ([M]) shows", "[M]", "2020")
    assert name_fragment("as [M] shows", "[M]", "Smith et al., 2020") is None


def test_defects_and_guessers_on_scalar_published(published) -> None:
    """All 300 import; the defects and the guesser table are computed on them (the anchor's own weaknesses)."""
    assert sum(len(v) for v in published.items.values()) == 300 and not published.problems
    items = [it for v in published.items.values() for it in v]
    table = round_defects(items, level_of=lambda it: it.preset.removeprefix("imported-"))
    assert set(table) == {"easy", "medium", "hard"}
    assert all(set(row["defects"]) == set(KINDS) and row["items"] == 100 for row in table.values())
    acc = guesser_accuracy(items, n_boot=200)
    assert acc["random"]["all"].n == 300
    # the word-before-the-mask title match finds SCALAR's easy questions (attributional: "BERT [MASK]")
    assert acc["title-overlap"]["easy"].accuracy > 0.4


def test_filtered_round_has_no_defects(filtered_round) -> None:
    """The filtered construction on the 6 SCALAR papers: zero defects of every kind, one question per masked
    citation across levels, at most 5 per paper and level, the guessers' table stored with the round."""
    _, rep = filtered_round
    items = [it for v in rep.items.values() for it in v]
    assert items
    table = round_defects(items)
    for lv, row in table.items():
        assert all(n == 0 for n in row["defects"].values()), (lv, row)
    for it in items:
        assert len({c.paper_id for c in it.candidates}) == len(it.candidates)
        assert item_defects(it) == []
    per_paper = Counter((it.preset, it.paper_id) for it in items)
    assert max(per_paper.values()) <= 5
    stats = json.loads((rep.path / "stats.json").read_text())
    assert set(stats["guessers"]) >= {"random", *PER_ITEM, "candidates-only", "combined"}
    assert set(stats["defects"]) == set(rep.items and {it.preset for it in items})
    assert rep.manifest.build_options["construction"] == "filtered"
    assert set(ITEM_KINDS) <= set(KINDS)


def test_level_check_leaves_no_guesser_above_the_limit(scalar_round) -> None:
    """On SCALAR's construction (uncapped), the level check removes items until no blind guesser, fitted ones
    included, is above the limit — or the level would fall below its minimum."""
    _, rep = scalar_round
    # SCALAR's construction is flagged: a blind guesser beats chance by more than 0.10 on easy
    assert any(f.split(" ")[1] == "easy" for f in rep.flags), rep.flags
    assert "flags" in json.loads((rep.path / "stats.json").read_text())
    items = rep.items["citation_cloze-easy"]
    views = views_of(items)
    golds = [it.gold for it in items]
    groups = [it.paper_id for it in items]
    keep, removed, table = level_check(views, golds, groups, limit=0.35, min_items=10, seed=0)
    assert len(keep) < len(items) and sum(removed.values()) == len(items) - len(keep)
    kept = [items[i] for i in sorted(keep)]
    if table is not None:  # the picks the check ends with are the table the build reports without refitting
        fresh = guess_table(views_of(kept), [it.gold for it in kept], [it.paper_id for it in kept], seed=0)
        assert table == fresh
        known = {"easy": (tuple(it.sample_id for it in kept), table)}
        assert guesser_accuracy(kept, n_boot=50, known=known)["lexical"]["all"].accuracy == pytest.approx(
            guesser_accuracy(kept, n_boot=50)["lexical"]["all"].accuracy
        )
    if len(kept) > 10:
        acc = guesser_accuracy(kept, n_boot=50)
        for name in PER_ITEM:
            assert acc[name]["all"].accuracy <= 0.35 + 1e-9, (name, acc[name]["all"].accuracy)


def test_level_floor_lets_a_small_level_lose_half() -> None:
    from academiceval.families.cloze.build import level_floor

    assert level_floor(100, 20) == 20 and level_floor(21, 20) == 20  # the minimum holds above it
    assert level_floor(20, 20) == 10 and level_floor(13, 20) == 7 and level_floor(1, 20) == 1
