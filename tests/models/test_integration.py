"""The runner's adapters reach this area's code with the options `academiceval run` passes (contract check)."""

from __future__ import annotations

import pytest

from academiceval.models.tokenize import load_tokenizer
from conftest import make_sample

TARGET = "2212.11808"


def test_runner_prompt_preparer_uses_prepare_prompt(papers):
    prepare = pytest.importorskip("academiceval.runs.prepare")
    sample = make_sample(papers[TARGET], "abstract", demos=[papers["2212.11772"]])
    preparer = prepare.PromptPreparer(
        context_length=2_000,
        tokenizer=None,
        on_overflow="truncate",
        rag=None,
        probe=None,
        length_instruction=True,
        model="baseline/lead",
    )
    assert preparer.name == "models.prepare.prepare_prompt"
    out = preparer(sample, 512)
    assert out.truncation == "demos-dropped+body-tail-cut" and not out.skipped
    assert out.input_tokens == load_tokenizer().count(out.prompt) <= 1_488
    assert out.tokens_cut > 5_000 and len(out.prompt_sha256) == 64
    assert str(len(sample.label.split())) in out.prompt  # the length instruction went through

    skip = prepare.PromptPreparer(context_length=2_000, on_overflow="skip", model="baseline/lead")(sample, 512)
    assert skip.skipped and "exceeds the budget" in skip.reason

    rag = prepare.PromptPreparer(
        context_length=None, rag={"retriever": "tfidf", "top_k": 3, "chunk_size": 128, "chunk_overlap": 16}
    )(sample, 512)
    assert "[Passage 3]" in rag.prompt and "[Passage 4]" not in rag.prompt

    probe = prepare.PromptPreparer(context_length=None, probe="title-only")(sample, 512)
    assert sample.fields["title"] in probe.prompt and sample.fields["body"][:200] not in probe.prompt


def test_runner_records_refined_answers():
    worker = pytest.importorskip("academiceval.runs.worker")
    from academiceval.models import postprocess

    assert worker.postprocess is postprocess.postprocess
    raw = 'Sure! Here is a title:\n\n**"Mutation-based Text Generation"**'
    assert worker.postprocess("title", raw) == "Mutation-based Text Generation"
