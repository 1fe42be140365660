"""Truncation and prompt preparation on real papers: what is cut, in which order, and exactly how much."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from academiceval.errors import ConfigError
from academiceval.models.prepare import prepare_prompt
from academiceval.models.tokenize import load_tokenizer
from academiceval.rounds.prompts import render_prompt
from conftest import citations_from, cited_papers, make_sample

TARGET = "2212.11808"  # cs.CL, has a related-works section
DEMOS = ("2212.11772", "2212.11790", "2212.11803")


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def demo_sample(papers):
    return make_sample(papers[TARGET], "abstract", demos=[papers[d] for d in DEMOS])


def skeleton_lines(sample, result) -> list[str]:
    """Lines that must survive any cut: the rendering with all paper content emptied but the same demos kept."""
    demos = [
        d.model_copy(update={"fields": {k: "" for k in d.fields}, "label": ""})
        for d in sample.demos[: result.demos_kept]
    ]
    cites = sample.citations[: len(sample.citations) - result.citations_dropped]
    view = sample.model_copy(update={"fields": {**sample.fields, "body": ""}, "demos": demos, "citations": cites})
    return [ln for ln in render_prompt(view).splitlines() if ln.strip()]


def check_exact(tok, sample, result, budget) -> None:
    full = tok.count(render_prompt(sample))
    assert result.full_tokens == full
    assert result.input_tokens == tok.count(result.prompt)  # re-count the final text
    assert result.tokens_cut == full - result.input_tokens
    assert result.input_tokens <= budget
    assert result.budget == budget


@pytest.mark.parametrize("context", [40_000, 16_000, 9_000, 4_000, 1_200])
def test_cuts_only_content_and_records_exact_counts(tok, demo_sample, context):
    out = 512
    res = prepare_prompt(demo_sample, tokenizer=tok, context_length=context, max_output_tokens=out)
    budget = context - out
    assert not res.skipped
    check_exact(tok, demo_sample, res, budget)
    lines = res.prompt.splitlines()
    for line in skeleton_lines(demo_sample, res):  # instruction, headers, title are all still there, verbatim
        assert line in lines
    assert demo_sample.fields["title"] in res.prompt
    if res.tokens_cut:
        assert budget - res.input_tokens <= 8  # the budget is used, not wasted
    if context == 40_000:
        assert res.policy == "none" and res.tokens_cut == 0 and res.prompt == render_prompt(demo_sample)


def test_demos_go_before_the_body(tok, demo_sample):
    body = demo_sample.fields["body"]
    body_tokens = tok.count(body)
    # room for the whole target but not for all demonstrations
    context = tok.count(render_prompt(demo_sample.model_copy(update={"demos": []}))) + 512 + 2_000
    res = prepare_prompt(demo_sample, tokenizer=tok, context_length=context, max_output_tokens=512)
    assert body in res.prompt  # the target body is intact
    assert "demos-dropped" in res.policy or "demo-shortened" in res.policy
    assert "body-tail-cut" not in res.policy
    assert res.demos_kept + res.demos_dropped == len(demo_sample.demos)
    # a tighter budget: every demo is gone before a single body token is cut
    small = prepare_prompt(demo_sample, tokenizer=tok, context_length=body_tokens // 2, max_output_tokens=256)
    assert "body-tail-cut" in small.policy
    assert small.demos_kept == 0 and small.demos_dropped == len(demo_sample.demos)
    assert not any(d.label in small.prompt for d in demo_sample.demos)


def test_body_is_cut_from_its_tail(tok, papers):
    sample = make_sample(papers[TARGET], "abstract")
    res = prepare_prompt(sample, tokenizer=tok, context_length=1_500, max_output_tokens=512)
    assert res.policy == "body-tail-cut"
    body = sample.fields["body"]
    start = res.prompt.index(body[:200])
    kept = res.prompt[start:].split("\n\n[Target paper · title]")[0]
    assert body.startswith(kept)  # a verbatim prefix: the beginning is kept, the end is cut
    assert len(kept) < len(body)
    overhead = tok.count(render_prompt(sample.model_copy(update={"fields": {**sample.fields, "body": ""}})))
    assert abs(tok.count(kept) - (1_500 - 512 - overhead)) <= 3  # the body got all the room the template leaves


def test_shortened_demo_keeps_its_label(tok, demo_sample):
    d0 = demo_sample.demos[0]
    context = tok.count(render_prompt(demo_sample.model_copy(update={"demos": [d0]}))) + 512 - 400
    res = prepare_prompt(demo_sample, tokenizer=tok, context_length=context, max_output_tokens=512)
    assert res.policy == "demos-dropped+demo-shortened"
    assert res.demos_kept == 1
    assert d0.label in res.prompt  # the demo's answer stays; only its paper text is shortened
    assert d0.fields["title"] in res.prompt
    assert d0.fields["body"] not in res.prompt
    check_exact(tok, demo_sample, res, context - 512)


def test_related_work_keeps_citation_header_and_drops_entries_last(tok, papers):
    paper = papers[TARGET]
    sample = make_sample(paper, "related_work", citations=citations_from(paper, 12) + cited_papers(papers, list(DEMOS)))
    cites_only = sample.model_copy(update={"fields": {**sample.fields, "body": ""}})
    needed = tok.count(render_prompt(cites_only))
    # the body must go entirely and some citations too
    res = prepare_prompt(sample, tokenizer=tok, context_length=needed - 150 + 1024, max_output_tokens=1024)
    assert res.policy == "body-tail-cut+citations-dropped"
    assert 0 < res.citations_dropped < len(sample.citations)
    for line in skeleton_lines(sample, res):
        assert line in res.prompt.splitlines()
    kept = sample.citations[: len(sample.citations) - res.citations_dropped]
    assert all(c.title in res.prompt for c in kept)
    assert sample.fields["abstract"] in res.prompt


def test_skip_policy_and_impossible_budget(tok, demo_sample):
    full = tok.count(render_prompt(demo_sample))
    res = prepare_prompt(demo_sample, tokenizer=tok, context_length=8_000, max_output_tokens=512, on_overflow="skip")
    assert res.skipped and res.policy == "skip" and res.tokens_cut == 0
    assert res.input_tokens == full and str(full) in res.reason and "7488" in res.reason
    assert res.prompt == render_prompt(demo_sample)
    fits = prepare_prompt(
        demo_sample, tokenizer=tok, context_length=full + 512, max_output_tokens=512, on_overflow="skip"
    )
    assert not fits.skipped and fits.input_tokens == full
    # the never-cut parts alone exceed the budget: skipped with a reason, not silently mangled
    tiny = prepare_prompt(demo_sample, tokenizer=tok, context_length=600, max_output_tokens=512)
    assert tiny.skipped and "never cut" in tiny.reason
    with pytest.raises(ConfigError):
        prepare_prompt(demo_sample, tokenizer=tok, context_length=500, max_output_tokens=512)
    with pytest.raises(ConfigError):
        prepare_prompt(demo_sample, tokenizer=tok, context_length=None, max_output_tokens=1, on_overflow="drop")


def test_no_context_length_means_no_cut(tok, demo_sample):
    res = prepare_prompt(demo_sample, tokenizer=tok, context_length=None, max_output_tokens=512)
    assert res.prompt == render_prompt(demo_sample)
    assert res.tokens_cut == 0 and res.budget is None and res.input_tokens == tok.count(res.prompt)
    assert len(res.prompt_sha256) == 64 and res.tokenizer["tokenizer"] == "bert-base-uncased"


def test_title_only_probe(tok, papers):
    sample = make_sample(papers[TARGET], "abstract", demos=[papers[DEMOS[0]]])
    res = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512, probe="title-only")
    assert res.probe == "title-only" and not res.skipped
    assert sample.fields["title"] in res.prompt
    assert sample.fields["body"][:300] not in res.prompt
    assert sample.demos[0].label not in res.prompt
    assert res.input_tokens < 300
    intro = make_sample(papers[TARGET], "introduction")
    res = prepare_prompt(intro, tokenizer=tok, context_length=None, max_output_tokens=512, probe="title-only")
    assert intro.fields["abstract"] not in res.prompt and intro.fields["title"] in res.prompt
    title_task = make_sample(papers[TARGET], "title")
    res = prepare_prompt(title_task, tokenizer=tok, context_length=None, max_output_tokens=32, probe="title-only")
    assert res.skipped and "title is the label" in res.reason


def test_no_context_probe(tok, papers):
    sample = make_sample(papers[TARGET], "introduction", demos=[papers[DEMOS[0]]])
    res = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512, probe="no-context")
    assert sample.fields["title"] in res.prompt and sample.fields["abstract"] in res.prompt
    assert sample.fields["body"][:300] not in res.prompt
    assert sample.demos[0].label not in res.prompt
    with pytest.raises(ConfigError):
        prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=1, probe="half-context")
    with pytest.raises(ConfigError):
        prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=1, probe="no-context", rag="bm25")


def test_length_instruction(tok, papers):
    sample = make_sample(papers[TARGET], "abstract")
    words = len(sample.label.split())
    plain = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512)
    lie = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512, length_instruction=True)
    assert lie.length_words == words and plain.length_words is None
    assert str(words) in lie.prompt and str(words) not in plain.prompt
    assert lie.prompt_sha256 != plain.prompt_sha256


def test_model_spec_picks_tokenizer(papers, recwarn):
    sample = make_sample(papers[TARGET], "title")
    res = prepare_prompt(sample, context_length=None, max_output_tokens=32, model="baseline/lead")
    assert res.tokenizer["tokenizer"] == "bert-base-uncased" and res.tokenizer["exact"]


def test_round_templates_are_used_for_prompt_and_query(tok, papers, tmp_path):
    """A round's own templates (--templates DIR) drive rendering, truncation and the retrieval query."""
    (tmp_path / "abstract_plain.j2").write_text("MY TEMPLATE for {{ title }}\n{{ body }}\nWrite the abstract.")
    (tmp_path / "abstract_query.j2").write_text("dataset mutation operators COCO captions")
    sample = make_sample(papers[TARGET], "abstract")
    res = prepare_prompt(sample, tokenizer=tok, context_length=800, max_output_tokens=256, templates_dir=tmp_path)
    assert res.prompt.startswith(f"MY TEMPLATE for {sample.fields['title']}\n")
    assert res.prompt.rstrip().endswith("Write the abstract.") and res.policy == "body-tail-cut"
    assert res.input_tokens == tok.count(res.prompt) <= 544
    from academiceval.models.rag import RagConfig, retrieve

    config = RagConfig(retriever="bm25", top_k=3, chunk_size=128, chunk_overlap=16)
    custom = [r.chunk.chunk_id for r in retrieve(sample, config, tok, templates_dir=tmp_path)]
    explicit = [
        r.chunk.chunk_id for r in retrieve(sample, config, tok, query="dataset mutation operators COCO captions")
    ]
    assert custom == explicit


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_budget_keeps_the_invariants(tok, papers, data):
    """For every budget between 'only the never-cut parts' and 'everything': fits, exact, nothing protected lost."""
    small = {pid: {**papers[pid], "sections": papers[pid]["sections"][:4]} for pid in (TARGET, *DEMOS)}
    task = data.draw(st.sampled_from(["abstract", "introduction", "related_work"]))
    cites = cited_papers(papers, ["2212.11889", "2212.11765"]) if task == "related_work" else None
    sample = make_sample(small[TARGET], task, demos=[small[d] for d in DEMOS[:2]], citations=cites)
    full = tok.count(render_prompt(sample))
    floor = tok.count(
        render_prompt(sample.model_copy(update={"fields": {**sample.fields, "body": ""}, "demos": [], "citations": []}))
    )
    budget = data.draw(st.integers(min_value=floor, max_value=full + 50))
    res = prepare_prompt(sample, tokenizer=tok, context_length=budget + 100, max_output_tokens=100)
    assert not res.skipped
    check_exact(tok, sample, res, budget)
    lines = res.prompt.splitlines()
    assert all(line in lines for line in skeleton_lines(sample, res))
    if budget >= full:
        assert res.policy == "none" and res.prompt == render_prompt(sample)
    if "body-tail-cut" in res.policy:
        assert res.demos_kept == 0  # demos always go first
    if "citations-dropped" in res.policy:
        assert "body-tail-cut" in res.policy
