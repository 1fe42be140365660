"""Tokenizer loading and exact counting/cutting on real paper text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from academiceval.models import tokenize
from academiceval.models.embedded import bert_tokenizer_json
from academiceval.models.registry import tokenizer_for_model
from academiceval.models.tokenize import TokenizerError, load_tokenizer
from conftest import load_papers


@pytest.fixture(scope="module")
def text(corpus) -> str:
    paper = load_papers(corpus)["2212.11808"]
    return "\n\n".join(t for _, t in paper["sections"])[:20_000]


def test_default_is_packaged_wordpiece(text):
    tok = load_tokenizer()
    assert tok.name == "bert-base-uncased" and tok.exact and tok.prompt_overhead == 0
    assert tok.count("Attention is all you need") == 5  # no [CLS]/[SEP]
    ids = tok.encode(text)
    assert len(ids) == tok.count(text) > 3_000  # padding/truncation baked into the json file are off
    assert tok.decode(tok.encode("Attention Is All You Need")) == "attention is all you need"
    assert load_tokenizer("bert-base-uncased") is tok  # cached


@pytest.mark.parametrize("spec", [None, "tokenizer.json"])
def test_truncate_tail_is_an_exact_verbatim_prefix(text, spec):
    tok = load_tokenizer(None if spec is None else str(bert_tokenizer_json()))
    for n in (1, 7, 64, 500, 1_999):
        cut = tok.truncate_tail(text, n)
        assert text.startswith(cut)
        assert tok.count(cut) == n
    assert tok.truncate_tail(text, 10**9) == text and tok.truncate_tail(text, 0) == ""
    ends = tok.token_ends(text)
    assert len(ends) == tok.count(text) and ends == sorted(ends) and ends[-1] <= len(text)


def test_tiktoken_wrapper_with_a_local_encoding(text):
    """tiktoken's real Encoding class over byte-level ranks (no download needed): counts and cuts exactly."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    enc = tiktoken.Encoding(
        name="bytes-only", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 256}
    )
    tok = load_tokenizer(enc)
    assert tok.kind == "tiktoken"
    sample = "Résumé <|endoftext|> " + text[:300]
    assert tok.count(sample) == len(sample.encode("utf-8"))  # special-token text counts as plain text
    assert tok.decode(tok.encode(sample)) == sample
    cut = tok.truncate_tail(sample, 40)
    assert sample.startswith(cut) and tok.count(cut) <= 40


def test_tiktoken_offline_falls_back_with_a_clear_message(monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")

    def offline(name):
        raise ConnectionError("Failed to resolve openaipublic.blob.core.windows.net")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    tokenize._load_cached.cache_clear()
    with pytest.warns(UserWarning, match="TIKTOKEN_CACHE_DIR"):
        tok = load_tokenizer("tiktoken:o200k_base")
    assert not tok.exact and "estimate" in tok.fallback_reason
    assert tok.identity()["exact"] is False and tok.count("a b c") == 3
    with pytest.raises(TokenizerError, match="downloads encoding files"):
        load_tokenizer("tiktoken:o200k_base", strict=True)
    tokenize._load_cached.cache_clear()


def test_unknown_specs_fail_clearly(tmp_path):
    with pytest.raises(TokenizerError, match="unknown tokenizer"):
        load_tokenizer("no-such-tokenizer")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(TokenizerError, match="cannot read"):
        load_tokenizer(str(bad))
    with pytest.raises(TokenizerError):
        load_tokenizer(str(tmp_path))  # a folder without any tokenizer files


def test_model_spec_implies_a_tokenizer(tmp_path):
    assert tokenizer_for_model("openai/gpt-4o-mini") == "tiktoken:gpt-4o-mini"
    assert tokenizer_for_model(f"hf/{tmp_path}") == str(tmp_path)
    assert tokenizer_for_model("hf/not/a/local/path") is None
    assert tokenizer_for_model("baseline/lead") is None and tokenizer_for_model(None) is None


def test_paragraph_memo_counts_exactly(corpus):
    """The estimator counts long texts paragraph by paragraph (memoised); the sum equals one full encoding."""
    tok = load_tokenizer()
    assert tok.additive
    papers = load_papers(corpus)
    for pid in ("2212.11808", "2212.11885", "2212.11773"):  # NLP, maths with formulas, chemistry
        text = "\n\n".join(f"[{name}]\n{body}" for name, body in papers[pid]["sections"])
        assert len(text) > 2_000
        assert tok.count(text) == len(tok.encode(text))
        assert tok.count(text + "\n\nextra closing words") == len(tok.encode(text + "\n\nextra closing words"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=300),
    n=st.integers(min_value=0, max_value=120),
)
@example(text=" ", n=0)  # found by hypothesis: a whitespace-only text holds no token, so it fits in 0
def test_truncate_tail_properties(text, n):
    """Any text, any n: a verbatim prefix with at most n tokens; nothing is cut when the text fits."""
    tok = load_tokenizer()
    cut = tok.truncate_tail(text, n)
    assert text.startswith(cut)
    assert tok.count(cut) <= n
    if tok.count(text) <= n:
        assert cut == text
