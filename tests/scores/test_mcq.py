"""The multiple-choice protocol core: parsing, accuracy with CIs, unparsed counts, position bias, truncation."""

from __future__ import annotations

import pytest

from academiceval.families.cloze.tokens import WordPieceCounter
from academiceval.scores.mcq import (
    ItemScore,
    accuracy_by_level,
    bootstrap_ci,
    parse_answer,
    parse_answer_set,
    score_item,
    split_closing,
    truncate_head,
)


@pytest.mark.parametrize(
    ("response", "strict", "lenient"),
    [
        ("<answer>2</answer>", "2", "2"),
        ("<answer> index 3 </answer>", "3", "3"),  # SCALAR removes "index" and whitespace
        ("<answer>Index 1</answer>", "1", "1"),
        ("Format: <answer>index</answer>. Thinking... <answer>0</answer>", "0", "0"),  # the last match wins
        ("<answer>1</answer> on second thought <answer>2</answer>", "2", "2"),
        ("<answer>[2]</answer>", None, "2"),
        ("<answer>Candidate 3</answer>", None, "3"),
        ("<answer>7</answer>", None, None),  # out of range
        ("The answer is 2.", None, None),  # no tag: never guessed from free text
        ("reasoning...\nAnswer: 1", None, "1"),
        ("I pick <answer>2", None, "2"),  # unclosed final tag
        ("", None, None),
        (None, None, None),
        ("<answer>\n1\n</answer>", "1", "1"),  # multi-line content
    ],
)
def test_parsers(response, strict, lenient) -> None:
    assert parse_answer(response, parser="strict").choice == strict
    got = parse_answer(response, parser="lenient")
    assert got.choice == lenient and got.parser == "lenient"


def test_letters_and_sets() -> None:
    assert parse_answer("<answer>c</answer>", letters=True).choice == "C"
    assert parse_answer("<answer>(B)</answer>", letters=True, parser="lenient").choice == "B"
    assert parse_answer("<answer>E</answer>", letters=True).choice is None
    assert parse_answer_set("<answer>A, C</answer>")[0] == frozenset({"A", "C"})
    assert parse_answer_set("<answer>A and D</answer>")[0] == frozenset({"A", "D"})
    assert parse_answer_set("<answer>A, X</answer>")[0] is None
    assert parse_answer_set("no tag")[0] is None


def test_score_item_records_parser_and_rule() -> None:
    s = score_item("q1", "<answer>[1]</answer>", 1, level="easy", parser="lenient")
    assert s.value == 1.0 and s.rule == "tag-lenient" and s.parser == "lenient"
    s = score_item("q1", "<answer>[1]</answer>", 1, level="easy", parser="strict")
    assert s.value == 0.0 and not s.parsed


def test_accuracy_levels_unparsed_and_slots() -> None:
    scores = [
        ItemScore(f"e{i}", "easy", str(i % 4), str(i % 4) if i % 5 else None, "strict", "tag", 1.0 if i % 5 else 0.0)
        for i in range(40)
    ] + [ItemScore(f"h{i}", "hard", str(i % 4), "0", "strict", "tag", 1.0 if i % 4 == 0 else 0.0) for i in range(40)]
    acc = accuracy_by_level(scores, n_boot=500)
    assert acc["easy"].n == 40 and acc["easy"].unparsed == 8 and acc["easy"].accuracy == pytest.approx(0.8)
    assert acc["easy"].parsed_accuracy == pytest.approx(1.0)
    lo, hi = acc["easy"].ci
    assert lo < 0.8 < hi
    # a model that always picks slot 0: right only when gold is 0 (position bias shows per gold slot)
    hard = acc["hard"]
    assert hard.by_gold_slot["0"] == (10, 1.0) and hard.by_gold_slot["1"] == (10, 0.0)
    assert hard.picks == {"0": 40}
    assert acc["all"].n == 80
    d = hard.as_dict()
    assert d["accuracy"] == 0.25 and d["by_gold_slot"]["0"]["n"] == 10


def test_bootstrap_is_seeded() -> None:
    v = [1.0, 0.0] * 30
    assert bootstrap_ci(v, seed=3) == bootstrap_ci(v, seed=3)
    lo, hi = bootstrap_ci(v)
    assert lo < 0.5 < hi


def test_head_truncation_keeps_the_closing_instruction() -> None:
    counter = WordPieceCounter()
    closing = "Remember to answer with <answer>index</answer>."
    prompt = "Intro line.\n" + " ".join(f"word{i}" for i in range(3000)) + "\n" + closing + "\n"
    _body, close = split_closing(prompt)
    assert close == closing
    t = truncate_head(prompt, 500, counter)
    assert t.text.rstrip().endswith(closing)  # SCALAR's head cut would have dropped it
    assert t.tokens <= 500 and t.cut_tokens > 0 and not t.over_budget
    assert t.text.startswith("Intro line.")
    # fits: unchanged
    assert truncate_head("short\n" + closing, 500, counter).text == "short\n" + closing
    # an explicit multi-line closing
    two = "A\nB " * 400 + "\nLine one.\nLine two."
    t2 = truncate_head(two, 100, counter, closing="Line one.\nLine two.")
    assert t2.text.rstrip().endswith("Line one.\nLine two.")


def test_gold_decides_the_answer_form() -> None:
    from academiceval.scores.mcq import gold_kind, score_response

    assert gold_kind("2") == ("index", "2") and gold_kind("c") == ("letter", "C")
    assert gold_kind("A,C") == ("set", frozenset({"A", "C"})) and gold_kind("AC") == ("set", frozenset({"A", "C"}))
    assert score_response("q", "<answer>2</answer>", "2").value == 1.0
    assert score_response("q", "<answer>B</answer>", "B").value == 1.0
    assert score_response("q", "<answer>C, A</answer>", "A,C").value == 1.0
    assert score_response("q", "<answer>A</answer>", "A,C").value == 0.0  # no partial credit
    s = score_response("q", "no answer", "A,C")
    assert not s.parsed and s.value == 0.0


def test_accuracy_tables_from_score_records() -> None:
    from datetime import date

    from academiceval.scores.mcq import item_scores_from_records
    from academiceval.store.models import ScoreRecord

    recs = [
        ScoreRecord(
            sample_id=f"s{i}",
            task="citation_cloze",
            setting="easy" if i < 6 else "hard",
            split="test",
            published=date(2025, 1, 1),
            metric="accuracy",
            config_hash="x",
            values={"accuracy": float(i % 2), "unparsed": 0.0},
            details={"gold": str(i % 4), "choice": str(i % 4) if i % 2 else "0", "parser": "strict", "rule": "tag"},
        )
        for i in range(10)
    ]
    recs.append(recs[0].model_copy(update={"sample_id": "err", "error": "no output"}))
    acc = accuracy_by_level(item_scores_from_records(recs), n_boot=200)
    assert acc["easy"].n == 6 and acc["hard"].n == 4 and acc["all"].n == 10
    assert acc["easy"].accuracy == 0.5


def test_bootstrap_ci_equals_the_pure_python_loop() -> None:
    """The numpy stream reproduces `random.Random(seed).randrange(n)` draw for draw, so every CI is the one the
    former loop gave (0/1 accuracies and arbitrary floats, n = 1 included)."""
    import random

    from academiceval.scores.mcq import bootstrap_ci, python_randrange_stream

    def loop(values, n_boot=2000, alpha=0.05, seed=0):
        rng = random.Random(seed)
        n = len(values)
        means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(n_boot))
        return means[int((alpha / 2) * n_boot)], means[min(n_boot - 1, int((1 - alpha / 2) * n_boot))]

    for n in (1, 3, 100, 1000):
        r = random.Random(n)
        assert python_randrange_stream(r, n, 3000).tolist() == [r.randrange(n) for _ in range(3000)]
    rr = random.Random(3)
    for n in (1, 5, 37, 120):
        for values in ([float(rr.random() < 0.3) for _ in range(n)], [rr.random() for _ in range(n)]):
            for seed in (0, 12345):
                assert bootstrap_ci(values, n_boot=500, seed=seed) == loop(values, n_boot=500, seed=seed)
