"""BERTScore: parity with bert-score 0.3.13 (committed reference values), long inputs, idf, naming."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from academiceval.errors import AcademicEvalError
from academiceval.scores.bertscore import BertScorer, read_baseline

pytestmark = pytest.mark.ml
DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "bertscore_reference.json").read_text(encoding="utf-8"))
TOL = 1e-4


def _sha(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


@pytest.fixture(scope="module")
def ref_pairs(corpus):
    """The reference script's pair selection, rebuilt from the corpus and checked against the recorded hashes
    (the script is loaded from its file, never imported as part of the test package)."""
    spec = importlib.util.spec_from_file_location("_make_ref", DATA / "make_bertscore_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pairs = mod.select_pairs(corpus)
    assert len(pairs) == len(REFERENCE["pairs"])
    for got, want in zip(pairs, REFERENCE["pairs"], strict=True):
        assert (_sha(got["ref"]), _sha(got["cand"])) == (want["ref_sha256"], want["cand_sha256"])
    return pairs


@pytest.fixture(scope="module")
def scorer_l6():
    # bert-score parity is defined for its own behaviour, cutting at the model window (no longer the default)
    return BertScorer("all-MiniLM-L6-v2", layer=6, batch_size=16, long_inputs="truncate")


def _max_diff(results, expected) -> float:
    return max(
        abs(a - b) for r, e in zip(results, expected, strict=True) for a, b in zip((r.p, r.r, r.f), e, strict=True)
    )


def test_reference_made_with_the_packaged_weights():
    from academiceval.models.embedded import MINILM_SHA256

    assert REFERENCE["model_sha256"] == MINILM_SHA256
    assert REFERENCE["versions"]["bert_score"] == "0.3.13"
    assert REFERENCE["versions"]["transformers"].startswith("4.")


def test_parity_layer6_plain_idf_and_rescaled(ref_pairs, scorer_l6):
    cands = [p["cand"] for p in ref_pairs]
    refs = [p["ref"] for p in ref_pairs]
    plain = scorer_l6.score(cands, refs)
    assert _max_diff(plain, REFERENCE["values"]["L6"]) <= TOL
    idf = scorer_l6.derive(idf=True).score(cands, refs)
    assert _max_diff(idf, REFERENCE["values"]["L6-idf"]) <= TOL
    rescaled = scorer_l6.derive(baseline=DATA / REFERENCE["baseline_file"]).score(cands, refs)
    assert _max_diff(rescaled, REFERENCE["values"]["L6-rescaled"]) <= TOL
    # the set is informative: idf really changes scores, long pairs exist and were cut like bert-score cuts
    assert max(abs(a.f - b.f) for a, b in zip(plain, idf, strict=True)) > 1e-3
    cut = [r for r in plain if r.cand_cut or r.ref_cut]
    assert len(cut) >= 4
    for r in cut:
        assert r.cand_cut == max(0, r.cand_tokens - 510) and r.ref_cut == max(0, r.ref_tokens - 510)
    empty = [r for p, r in zip(ref_pairs, plain, strict=True) if not p["cand"]]
    assert [(r.p, r.r, r.f) for r in empty] == [(0.0, 0.0, 0.0)]


def test_parity_layer3(ref_pairs):
    """Another layer (and unsorted batching) on the first 15 pairs, to keep the suite fast."""
    cands = [p["cand"] for p in ref_pairs[:15]]
    refs = [p["ref"] for p in ref_pairs[:15]]
    res = BertScorer("all-MiniLM-L6-v2", layer=3, length_batching=False, long_inputs="truncate").score(cands, refs)
    assert _max_diff(res, REFERENCE["values"]["L3"][:15]) <= TOL


def test_long_inputs_window_mode_cuts_nothing(ref_pairs, scorer_l6):
    long = sorted((p for p in ref_pairs if p["set"] == "sections"), key=lambda p: len(p["ref"]) + len(p["cand"]))[:1]
    short = [p for p in ref_pairs if p["set"] == "text"][1:2]
    win = BertScorer("all-MiniLM-L6-v2", layer=6, long_inputs="window", window_stride=400)
    res_w = win.score([p["cand"] for p in long + short], [p["ref"] for p in long + short])
    res_t = scorer_l6.score([p["cand"] for p in long + short], [p["ref"] for p in long + short])
    assert all(r.cand_cut == 0 and r.ref_cut == 0 for r in res_w)
    assert res_w[0].cand_tokens > 510 or res_w[0].ref_tokens > 510
    # short texts fit in one window: identical to truncate mode; long ones are scored on all tokens
    for w, t in zip(res_w[1:], res_t[1:], strict=True):
        assert math.isclose(w.f, t.f, abs_tol=1e-6)
    assert abs(res_w[0].r - res_t[0].r) > 1e-4 or abs(res_w[0].p - res_t[0].p) > 1e-4
    assert win.metric_name.endswith("-window")


def test_small_windows_approximate_full_context(ref_pairs, scorer_l6):
    """Stitching 128-token windows must come close to a single full-context pass — closer than cutting at 128
    tokens (a wrong stitch, with misplaced vectors or lost tokens, would not)."""
    text = [p for p in ref_pairs if p["set"] == "text" and p["cand"]]
    scored = scorer_l6.score([p["cand"] for p in text], [p["ref"] for p in text])  # cached by the parity test
    fit = [r.cand_tokens > 128 and r.cand_tokens + r.ref_tokens < 700 and not (r.cand_cut or r.ref_cut) for r in scored]
    pairs = [p for p, ok in zip(text, fit, strict=True) if ok][:3]
    cands, refs = [p["cand"] for p in pairs], [p["ref"] for p in pairs]
    full = scorer_l6.score(cands, refs)
    assert len(full) == 3 and all(r.cand_tokens > 128 and r.cand_cut == r.ref_cut == 0 for r in full)
    small = BertScorer("all-MiniLM-L6-v2", layer=6, long_inputs="window", max_length=128, window_stride=40)
    res = small.score(cands, refs)
    trunc = BertScorer("all-MiniLM-L6-v2", layer=6, max_length=128, long_inputs="truncate").score(cands, refs)
    assert all(r.cand_cut == r.cand_tokens - 126 for r in trunc)
    for w, t, f in zip(res, trunc, full, strict=True):
        assert w.cand_cut == 0 and abs(w.f - f.f) < 0.05
        assert abs(w.r - f.r) < abs(t.r - f.r) or abs(w.p - f.p) < abs(t.p - f.p)


def test_idf_weights_follow_bert_score(scorer_l6):
    refs = ["graph neural networks", "graph kernels", "graph neural networks"]
    idf = scorer_l6.idf_weights(refs)
    tok = scorer_l6._load()["tokenizer"]
    graph = tok("graph", add_special_tokens=False)["input_ids"][0]
    kernels = tok("kernels", add_special_tokens=False)["input_ids"][-1]
    assert idf[graph] == pytest.approx(math.log(4 / 4)) and idf[tok.cls_token_id] == 0.0
    assert idf[kernels] == pytest.approx(math.log(4 / 2))
    res = scorer_l6.derive(idf=True).score(["graph kernels"], ["graph neural networks"], idf_refs=refs)
    assert 0 < res[0].f < 1


def test_identical_texts_score_one_and_names(scorer_l6):
    text = "We study the sample complexity of learning sparse linear models from streaming data."
    res = scorer_l6.score([text], [text])[0]
    assert res.p == pytest.approx(1.0, abs=1e-5) and res.f == pytest.approx(1.0, abs=1e-5)
    assert scorer_l6.metric_name == "bertscore-all-MiniLM-L6-v2-L6"
    assert scorer_l6.derive(idf=True).metric_name == "bertscore-all-MiniLM-L6-v2-L6-idf"
    assert BertScorer("roberta-large").layer == 17
    assert scorer_l6.config()["weights_sha256"] == REFERENCE["model_sha256"]


def test_baseline_file_and_bad_model(tmp_path):
    assert read_baseline(DATA / "minilm_baseline_example.csv", 6) == (0.42, 0.43, 0.425)
    with pytest.raises(AcademicEvalError):
        BertScorer(str(tmp_path / "no-such-model"), layer=2).score(["a"], ["b"])
    with pytest.raises(AcademicEvalError, match="--layer"):
        BertScorer("some/unknown-model")
