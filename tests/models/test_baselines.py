"""Model-free baselines on real papers: lead, demo-copy, extractive."""

from __future__ import annotations

import asyncio

import pytest

from academiceval.errors import ConfigError
from academiceval.models.base import GenerationOptions
from academiceval.models.baselines import BaselineBackend, BaselineError, split_sentences
from academiceval.models.rag.retrievers import terms
from academiceval.rounds.prompts import retrieval_query
from academiceval.store.tasks import task_spec
from conftest import make_sample

TARGET = "2212.11808"
OPTS = GenerationOptions()


def gen(backend: BaselineBackend, sample):
    return asyncio.run(backend.generate("ignored prompt", OPTS, sample))


@pytest.mark.parametrize("task", ["title", "abstract", "introduction", "related_work"])
def test_lead_is_the_opening_cut_to_length(papers, task):
    sample = make_sample(papers[TARGET], task)
    out = gen(BaselineBackend("lead"), sample)
    n = task_spec(task).target_words
    source = sample.fields["abstract"] if task == "title" else sample.fields["body"]
    assert out.text.split() == source.split()[:n]
    assert out.output_tokens == n and out.raw["source_field"] == ("abstract" if task == "title" else "body")


def test_demo_copy_picks_the_most_similar_demo(papers):
    # a target in computational linguistics; demos from NLP, astrophysics and pure maths
    demos = [papers["2212.11889"], papers["2212.11772"], papers["2212.11885"]]
    sample = make_sample(papers[TARGET], "abstract", demos=demos)
    for similarity in ("tfidf", "bm25"):
        out = gen(BaselineBackend("demo-copy", similarity=similarity), sample)
        assert out.text == papers["2212.11772"]["abstract"]  # the other cs.CL paper
        assert out.raw["demo_arxiv_id"] == "2212.11772" and out.raw["similarity"] == similarity
    # reorder: the choice follows content, not position
    flipped = sample.model_copy(update={"demos": list(reversed(sample.demos))})
    assert gen(BaselineBackend("demo-copy"), flipped).raw["demo_arxiv_id"] == "2212.11772"


def test_demo_copy_falls_back_to_lead_without_demos(papers):
    sample = make_sample(papers[TARGET], "abstract")
    out = gen(BaselineBackend("demo-copy"), sample)
    assert out.raw["fallback"] == "lead" and "no demonstrations" in out.raw["fallback_reason"]
    assert out.text == gen(BaselineBackend("lead"), sample).text


@pytest.mark.parametrize("task", ["abstract", "introduction", "related_work"])
def test_extractive_takes_query_matching_sentences_in_order(papers, task):
    sample = make_sample(papers[TARGET], task)
    out = gen(BaselineBackend("extractive"), sample)
    words = out.text.split()
    assert task_spec(task).target_words * 0.8 <= len(words) <= task_spec(task).target_words
    sentences = split_sentences(sample.fields["body"])
    chosen = out.raw["sentences"]
    eligible = [s for s in sentences if len(s.split()) >= 4]
    assert chosen == sorted(chosen)  # document order
    assert out.text == " ".join(eligible[i] for i in chosen)
    # the chosen sentences share more query terms than the text as a whole does on average
    query = set(terms([retrieval_query(sample)])[0])
    overlap = [len(query & set(t)) for t in terms(eligible)]
    picked = sum(overlap[i] for i in chosen) / len(chosen)
    assert picked > 1.5 * (sum(overlap) / len(overlap))
    assert out.text != gen(BaselineBackend("lead"), sample).text


def test_extractive_title_is_one_cut_sentence(papers):
    sample = make_sample(papers[TARGET], "title")
    out = gen(BaselineBackend("extractive"), sample)
    assert 1 <= len(out.text.split()) <= 10
    assert out.text in " ".join(sample.fields["abstract"].split())


def test_baseline_errors():
    with pytest.raises(ConfigError):
        BaselineBackend("oracle")
    with pytest.raises(ConfigError):
        BaselineBackend("demo-copy", similarity="jaccard")
    with pytest.raises(BaselineError):
        asyncio.run(BaselineBackend("lead").generate("prompt only", OPTS, None))
    ident = BaselineBackend("demo-copy").cache_identity()
    assert ident["backend"] == "baseline" and ident["model"] == "demo-copy" and ident["similarity"] == "tfidf"
    assert BaselineBackend("lead").cache_identity() != BaselineBackend("extractive").cache_identity()


def test_first_choice_takes_its_form_from_the_family_not_the_gold() -> None:
    from academiceval.models.baselines import first_choice
    from academiceval.store.models import Sample

    def sample(task: str, label: str) -> Sample:
        return Sample.model_construct(task=task, label=label, fields={})

    assert first_choice(sample("elaipbench", "B,C")) == first_choice(sample("elaipbench", "")) == "<answer>A</answer>"
    assert first_choice(sample("citation_cloze", "2")) == first_choice(None) == "<answer>0</answer>"
