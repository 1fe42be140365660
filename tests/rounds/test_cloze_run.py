"""Cloze rounds through the generic machinery: the round reader, prompt preparation with a budget, baselines."""

from __future__ import annotations

from academiceval.families.cloze.models import MASK
from academiceval.families.cloze.prompt import closing_text
from academiceval.families.cloze.samples import sample_to_item
from academiceval.models.baselines import BaselineBackend
from academiceval.models.prepare import prepare_prompt
from academiceval.scores.mcq import parse_answer
from academiceval.store.artifacts import load_round


def test_cloze_samples_read_and_prepared_within_budget(scalar_round) -> None:
    _, report = scalar_round
    loaded = load_round(report.path)
    samples = list(loaded.samples("citation_cloze-hard"))
    assert samples and all(s.task == "citation_cloze" and "item" in s.fields for s in samples)
    assert sample_to_item(samples[0]) == report.items["citation_cloze-hard"][0]
    big = max(samples, key=lambda s: s.input_tokens or 0)
    for ctx in (None, 16_000, 6_000):
        p = prepare_prompt(big, context_length=ctx, max_output_tokens=512, templates_dir=loaded.templates_dir)
        assert not p.skipped, p.reason
        paper = p.prompt.split("<Paper>\n", 1)[1].split("</Paper>", 1)[0]
        assert paper.count(MASK) == 1 and p.prompt.count("<Candidate>Candidate [") == 4
        assert p.prompt.rstrip().endswith(closing_text())
        if ctx is not None:
            assert p.input_tokens <= ctx - 512 and p.tokens_cut > 0 and "cut" in p.policy
    skipped = prepare_prompt(big, context_length=6_000, max_output_tokens=512, on_overflow="skip")
    assert skipped.skipped and skipped.full_tokens > 5_488


def test_baselines_answer_round_samples(scalar_round) -> None:
    _, report = scalar_round
    loaded = load_round(report.path)
    s = next(iter(loaded.samples("citation_cloze-easy")))
    for name in ("random-choice", "lexical-choice"):
        out = BaselineBackend(name).choose(s)
        assert parse_answer(out.text).choice in {"0", "1", "2", "3"}


def test_examples_page_texts(scalar_round) -> None:
    from academiceval.report.choice import choice_view, pick_text, question_text

    _, report = scalar_round
    s = next(iter(load_round(report.path).samples("citation_cloze-easy")))
    item = choice_view(s)
    assert item is not None
    q = question_text(item)
    assert MASK in q and q.count("[") >= 4 and "✓" in q
    assert pick_text(item, f"<answer>{s.label}</answer>").endswith("✓")
    assert pick_text(item, "I do not know").startswith("unparsed")
