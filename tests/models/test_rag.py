"""Retrieval ranks a sample's chunks by the query — provably (the original code ignored the query)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from academiceval.errors import ConfigError
from academiceval.models.embedded import MINILM_SHA256, EmbeddedModelError
from academiceval.models.prepare import prepare_prompt
from academiceval.models.rag import RagConfig, chunk_sample, retrieve, split_tokens, terms
from academiceval.models.tokenize import load_tokenizer
from academiceval.rounds.prompts import retrieval_query
from conftest import cited_papers, make_sample

TARGET = "2212.11808"
RETRIEVERS = ["bm25", "tfidf", "dense"]


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def sample(papers):
    return make_sample(
        papers[TARGET],
        "introduction",
        demos=[papers["2212.11772"]],
        citations=cited_papers(papers, ["2212.11790", "2212.11803", "2212.11889"]),
    )


@pytest.fixture(scope="module")
def chunks(sample, tok):
    return chunk_sample(sample, tok, size=128, overlap=16)


@pytest.fixture(scope="module")
def small(sample):
    """A lighter sample for ranking (dense embedding on a shared 2-core CPU is slow): ~2,000 words of body."""
    body = " ".join(sample.fields["body"].split(" ")[:2_000])
    return sample.model_copy(update={"fields": {**sample.fields, "body": body}, "demos": []})


@pytest.fixture(scope="module")
def small_chunks(small, tok):
    return chunk_sample(small, tok, size=128, overlap=16)


def rare_terms(chunks, index: int) -> list[str]:
    """Terms of chunk `index` that occur in no other chunk (the query's rare terms)."""
    bags = terms([c.text for c in chunks])
    df = Counter(t for bag in bags for t in set(bag))
    return [t for t in dict.fromkeys(bags[index]) if df[t] == 1 and len(t) > 3 and t.isalpha()]


def distinctive(chunks, candidates: list[int]) -> int:
    """The candidate chunk with the most rare terms (overlapping windows share many of theirs)."""
    return max(candidates, key=lambda i: (len(rare_terms(chunks, i)), -i))


def sentence_of(chunks, index: int) -> str:
    """The sentence of chunk `index` that no other chunk contains, with the most of its rare terms."""
    rare = set(rare_terms(chunks, index))
    parts = [p.strip() for p in chunks[index].text.replace("\n", " ").split(". ") if len(p.split()) >= 10]
    own = [p for p in parts if not any(p in c.text for j, c in enumerate(chunks) if j != index)]
    return max(own, key=lambda p: (len(rare & set(terms([p])[0])), len(p)))


def test_chunks_cover_all_sources_with_overlap(chunks, sample, tok):
    sources = {c.source.split("#")[0] for c in chunks}
    assert "body" in sources and "demo:0:body" in sources and "demo:0:label" in sources
    assert {"citation:0", "citation:1", "citation:2"} <= sources
    assert all(c.tokens <= 128 for c in chunks)
    body_chunks = [c for c in chunks if c.source == "body"]
    assert len(body_chunks) > 10
    for a, b in itertools.pairwise(body_chunks):  # consecutive windows share their overlap
        assert a.text in sample.fields["body"] and b.text in sample.fields["body"]
        assert sample.fields["body"].index(b.text) < sample.fields["body"].index(a.text) + len(a.text)
    with pytest.raises(ConfigError):
        split_tokens("some text here", tok, 10, 10)


@pytest.mark.parametrize("kind", RETRIEVERS)
def test_ranking_depends_on_the_query(kind, small_chunks, small, tok):
    chunks, sample = small_chunks, small
    config = RagConfig(retriever=kind, top_k=5, chunk_size=128, chunk_overlap=16)
    body = [i for i, c in enumerate(chunks) if c.source == "body"]
    half = len(body) // 2
    a, b = distinctive(chunks, body[:half]), distinctive(chunks, body[half:])  # two body chunks far apart
    tops = {}
    for target in (a, b):
        words = chunks[target].text.split()
        queries = [" ".join(words[len(words) // 4 : 3 * len(words) // 4])]  # a passage from the chunk's middle
        if kind != "dense":  # sparse retrievers: one sentence, even a bag of the chunk's rare terms finds it
            queries.append(sentence_of(chunks, target))
            rare = rare_terms(chunks, target)
            assert len(rare) >= 3
            queries.append(" ".join(rare[:5]))
        for q in queries:
            ranked = retrieve(sample, config, tok, query=q)
            assert ranked[0].chunk == chunks[target], (kind, q)
            assert [r.rank for r in ranked] == list(range(5))
            assert all(x.score >= y.score for x, y in itertools.pairwise(ranked))
        tops[target] = [r.chunk.chunk_id for r in ranked]
    assert tops[a] != tops[b]
    # the task's own query (from title/abstract) gives yet another, non-trivial ranking: not the last k chunks
    own = [r.chunk.chunk_id for r in retrieve(sample, config, tok)]
    assert own != [c.chunk_id for c in chunks[-5:]]
    assert retrieval_query(sample)  # the rounds template defines it


def test_rag_prompt_carries_the_top_chunks(sample, tok):
    config = RagConfig(retriever="bm25", top_k=4, chunk_size=128, chunk_overlap=16)
    res = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=1536, rag=config)
    assert res.variant == "rag" and len(res.retrieved) == 4
    ranked = retrieve(sample, config, tok)
    assert [r["chunk_id"] for r in res.retrieved] == [r.chunk.chunk_id for r in ranked]
    positions = [res.prompt.index(r.chunk.text) for r in ranked]
    assert positions == sorted(positions)  # best chunk first
    assert sample.fields["title"] in res.prompt and sample.fields["abstract"] in res.prompt
    assert sample.fields["body"] not in res.prompt
    # a tight budget drops the lowest-ranked chunks first, exactly counted
    tight = prepare_prompt(
        sample, tokenizer=tok, context_length=res.input_tokens + 1536 - 150, max_output_tokens=1536, rag=config
    )
    assert tight.policy.startswith("chunks-dropped") and tight.chunks_dropped >= 1
    assert ranked[0].chunk.text in tight.prompt and ranked[-1].chunk.text not in tight.prompt
    assert tight.input_tokens == tok.count(tight.prompt) <= tight.budget


def test_rag_config_parsing(tmp_path):
    assert RagConfig.from_spec("bm25").retriever == "bm25"
    assert RagConfig.from_spec("tf-idf").retriever == "tfidf"
    dense = RagConfig.from_spec("dense:/models/dragon-ctx?query=/models/dragon-q&pooling=cls", top_k=6)
    assert (dense.model, dense.query_model, dense.pooling, dense.top_k) == (
        "/models/dragon-ctx",
        "/models/dragon-q",
        "cls",
        6,
    )
    runner_dict = RagConfig.coerce({"retriever": "dense", "top_k": 3, "chunk_size": 256, "chunk_overlap": 32})
    assert runner_dict.model is None and runner_dict.top_k == 3
    for bad in ("bm26", "bm25:model", "dense:x?foo=1"):
        with pytest.raises(ConfigError):
            RagConfig.from_spec(bad)
    with pytest.raises(ConfigError):
        RagConfig(chunk_size=64, chunk_overlap=64)
    with pytest.raises(EmbeddedModelError):  # a model that is not a local folder is refused, never downloaded
        RagConfig.from_spec(f"dense:{tmp_path / 'missing'}").retriever_obj()


def test_dense_identity_pins_the_packaged_model():
    ident = RagConfig(retriever="dense").identity()
    assert ident["model_sha256"] == MINILM_SHA256 and ident["retriever"] == "dense"


def test_dense_refuses_a_tampered_model(monkeypatch, tmp_path):
    from academiceval.models import embedded

    fake = tmp_path / "model"
    fake.mkdir()
    (fake / "tokenizer.json").write_text("{}")
    (fake / "model.safetensors").write_bytes(b"not the pinned weights")
    monkeypatch.setattr(embedded, "package_model_dir", lambda: fake)
    embedded.verified_minilm_dir.cache_clear()
    try:
        with pytest.raises(EmbeddedModelError, match="expected the pinned"):
            embedded.verified_minilm_dir()
    finally:
        embedded.verified_minilm_dir.cache_clear()


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_dense_accepts_any_local_checkpoint(tmp_path, small_chunks, pooling):
    """A plain transformers encoder folder (how Contriever/DPR/Dragon checkpoints come) works as `dense:PATH`."""
    pytest.importorskip("transformers")
    import shutil

    from transformers import BertConfig, BertModel

    from academiceval.models.embedded import package_model_dir

    folder = tmp_path / "tiny-encoder"
    BertModel(
        BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    ).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(package_model_dir() / name, folder / name)
    config = RagConfig.from_spec(f"dense:{folder}" + ("?pooling=cls" if pooling == "cls" else ""))
    retriever = config.retriever_obj()
    docs = [c.text for c in small_chunks[:6]]
    scores = retriever.scores(docs[2], docs)
    assert scores.shape == (6,) and int(scores.argmax()) == 2  # identical text: cosine 1 with its own chunk
    assert config.identity()["model"] == str(folder) and config.identity()["pooling"] == config.pooling
