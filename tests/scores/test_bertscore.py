"""BERTScore: parity with bert-score 0.3.13 (committed reference values), long inputs, idf, naming."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from academiceval.errors import AcademicEvalError
from academiceval.scores.bertscore import BertScorer, read_baseline
from academiceval.scores.config import ScoreConfig
from academiceval.scores.embed_cache import CachedEmbedding, EmbeddingCache, embedding_key
from academiceval.scores.rescore import score_runs
from academiceval.store.artifacts import Layout, read_scores

from .conftest import build_round_and_run

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
    assert win.metric_name.endswith("-window-stride400")  # a non-default geometry is named (issue 27)


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


# ---------------------------------------------------------------- issue 27: geometry, label cache, one model load
def _frozen_class():
    """The previous implementation (tests/scores/bertscore_frozen.py), loaded by path."""
    spec = importlib.util.spec_from_file_location("_bertscore_frozen", Path(__file__).with_name("bertscore_frozen.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.BertScorer


def test_windows_equal_the_previous_implementation(ref_pairs, tmp_path):
    """Issue 27 kept the window geometry: on a long real section pair, today's scorer (model shared per process,
    labels through the workspace cache, padding-bounded batches) gives the frozen previous code's scores, cold
    and warm."""
    long = sorted((p for p in ref_pairs if p["set"] == "sections"), key=lambda p: len(p["ref"]) + len(p["cand"]))[:1]
    cands, refs = [p["cand"] for p in long], [p["ref"] for p in long]
    before = _frozen_class()("all-MiniLM-L6-v2", layer=6).score(cands, refs)
    assert before[0].cand_tokens > 510 or before[0].ref_tokens > 510
    cache_file = tmp_path / "embeddings.sqlite"
    cold = BertScorer("all-MiniLM-L6-v2", layer=6, embedding_cache=cache_file).score(cands, refs)
    warm = BertScorer("all-MiniLM-L6-v2", layer=6, embedding_cache=cache_file).score(cands, refs)
    for res in (cold, warm):  # batches of other shapes than before: float noise only
        for a, b in zip(res, before, strict=True):
            assert (a.cand_tokens, a.ref_tokens) == (b.cand_tokens, b.ref_tokens)
            assert max(abs(a.p - b.p), abs(a.r - b.r), abs(a.f - b.f)) < 1e-6
    assert BertScorer("all-MiniLM-L6-v2", layer=6)._stride() == 255


def test_embedding_identity_separates_what_changes_vectors():
    base = BertScorer("all-MiniLM-L6-v2", layer=6)
    key = embedding_key(base.embedding_identity(), "some label")
    assert key == embedding_key(base.derive(idf=True, baseline=(0.1, 0.2, 0.3)).embedding_identity(), "some label")
    for other in (
        BertScorer("all-MiniLM-L6-v2", layer=5),
        BertScorer("all-MiniLM-L6-v2", layer=6, long_inputs="truncate"),
        BertScorer("all-MiniLM-L6-v2", layer=6, window_stride=300),
        BertScorer("all-MiniLM-L6-v2", layer=6, max_length=128),
    ):
        assert embedding_key(other.embedding_identity(), "some label") != key
    assert embedding_key(base.embedding_identity(), "some label.") != key


def test_labels_persist_and_are_not_embedded_again(ref_pairs, tmp_path, monkeypatch):
    """A second scorer (as a second `score` call) reads the labels from the workspace cache: only the outputs
    go through the tokenizer and the model, and the scores equal a cache-less scorer's."""
    text = [p for p in ref_pairs if p["set"] == "text" and p["cand"]][:6]
    cands, refs = [p["cand"] for p in text], [p["ref"] for p in text]
    cache_file = tmp_path / "cache" / "embeddings.sqlite"
    first = BertScorer("all-MiniLM-L6-v2", layer=6, embedding_cache=cache_file)
    expect = first.score(cands, refs)
    assert first.embedding_cache.writes == len(set(refs)) and len(EmbeddingCache(cache_file)) == len(set(refs))

    seen: list[str] = []
    real = BertScorer._content_ids
    monkeypatch.setattr(BertScorer, "_content_ids", lambda self, texts: seen.extend(texts) or real(self, texts))
    second = BertScorer("all-MiniLM-L6-v2", layer=6, embedding_cache=EmbeddingCache(cache_file))
    got = second.score(cands, refs)
    assert second.embedding_cache.hits == len(set(refs)) and second.embedding_cache.writes == 0
    assert set(seen) == set(cands) - set(refs)
    for a, b in zip(got, expect, strict=True):
        assert abs(a.f - b.f) < 1e-6 and (a.cand_tokens, a.ref_tokens) == (b.cand_tokens, b.ref_tokens)
    assert second._load()["model"] is first._load()["model"]  # loaded once per process


def test_score_runs_second_call_reads_labels_from_the_workspace(corpus, tmp_path, monkeypatch):
    home = tmp_path / "home"
    run1 = build_round_and_run(corpus, home, "baseline__lead")
    run2 = build_round_and_run(corpus, home, "baseline__second", lead_paragraph=1)
    config = ScoreConfig(metrics=["bertscore"])
    score_runs([run1], config, home=home)
    cache = EmbeddingCache(Layout.of(home).embedding_cache)
    assert len(cache) == 11  # the labels of the 11 usable records (one run record is an error)

    embedded: list[int] = []
    real = BertScorer._embed
    monkeypatch.setattr(BertScorer, "_embed", lambda self, enc: embedded.append(len(enc)) or real(self, enc))
    score_runs([run2], config, home=home)  # a new call: new scorer objects, as a second `score` process has
    assert sum(embedded) == 11  # the outputs of run 2 only
    recs = [r for r in read_scores(run2) if not r.error]
    assert len(recs) == 11 and all(0 < r.values["f"] <= 1 for r in recs)


def test_cache_survives_concurrent_writers_kill_and_damage(tmp_path):
    """Three processes writing the same and different keys at once, one killed mid-write: every row that
    is there is whole; a row whose blobs do not add up is a miss; a damaged file is set aside, not fatal."""
    path = tmp_path / "embeddings.sqlite"
    writer = (
        "import sys, numpy as np\n"
        "from academiceval.scores.embed_cache import EmbeddingCache, CachedEmbedding\n"
        "c = EmbeddingCache(sys.argv[1]); k = int(sys.argv[2])\n"
        "for i in range(int(sys.argv[3])):\n"
        "    n = 1 + (i % 37)\n"
        "    v = np.full((n, 8), i, dtype='float32')\n"
        "    c.put_many([(f'shared-{i}', CachedEmbedding(list(range(n)), v, n, 0)),\n"
        "                (f'own-{k}-{i}', CachedEmbedding(list(range(n)), v + k, n, 0))])\n"
    )
    # writers 1 and 2 finish; writer 3 would write for minutes and is killed mid-write
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(path), str(k), str(n)])
        for k, n in ((1, 400), (2, 400), (3, 10**6))
    ]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and procs[2].poll() is None:  # kill -9 once it is writing
        time.sleep(0.02)
        with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(path, timeout=5)) as conn:
            if conn.execute("SELECT count(*) FROM embedding WHERE key LIKE 'own-3-%'").fetchone()[0] >= 20:
                break
    procs[2].kill()
    assert [p.wait(timeout=120) for p in procs[:2]] == [0, 0]
    assert procs[2].wait(timeout=30) == -9
    cache = EmbeddingCache(path)
    assert cache.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    keys = [f"shared-{i}" for i in range(400)] + [f"own-{k}-{i}" for k in (1, 2) for i in range(400)]
    got = cache.get_many(keys)
    assert len(got) == 1200
    killed = [k for (k,) in cache.conn.execute("SELECT key FROM embedding WHERE key LIKE 'own-3-%'")]
    assert len(killed) >= 20
    got.update(cache.get_many(killed))
    assert len(got) == 1200 + len(killed)  # the killed writer's committed rows are whole too
    for key, e in got.items():
        i = int(key.rsplit("-", 1)[1])
        n, plus = 1 + (i % 37), (int(key.split("-")[1]) if key.startswith("own") else 0)
        assert e.ids == list(range(n)) and e.vectors.shape == (n, 8) and (e.vectors == i + plus).all()
    cache.conn.execute("UPDATE embedding SET vectors = substr(vectors, 1, 4) WHERE key = 'shared-7'")
    assert "shared-7" not in cache.get_many(["shared-7"])
    cache.close()

    path.write_bytes(b"this is not a database" * 100)
    damaged = EmbeddingCache(path)
    damaged.put_many([("k", CachedEmbedding([1, 2], np.ones((2, 4), dtype="float32"), 2, 0))])
    assert damaged.recovered and damaged.recovered[0].exists() and list(damaged.get_many(["k"])) == ["k"]


def _unarxive_abstracts(corpus) -> list[str]:
    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [d["abstract"]["text"].strip() for d in docs if (d.get("abstract") or {}).get("text")]


def test_store_baseline_makes_unrelated_zero(corpus):
    """Issue 23: raw BERTScore of unrelated papers' texts is far from 0. A baseline from unrelated pairs of half of
    the real abstracts (bert-score's recipe: a random split into two halves, the mean P/R/F) puts the *other*
    half's unrelated pairs at 0 within their sampling error, and an abstract against itself at 1."""
    from academiceval.scores.bertscore_baseline import baseline_from_pairs, rescale, unrelated_pairs

    abstracts = _unarxive_abstracts(corpus)
    assert len(abstracts) == 49
    fit, held = abstracts[0::2], abstracts[1::2]
    pairs = unrelated_pairs(fit, seed=1)
    assert len(pairs) == 12 and not {a for a, _ in pairs} & {b for _, b in pairs}  # two disjoint halves
    assert unrelated_pairs(fit, seed=1) == pairs and unrelated_pairs(fit, seed=2) != pairs
    scorer = BertScorer("all-MiniLM-L6-v2", layer=6)
    fitted = scorer.score([c for c, _ in pairs], [r for _, r in pairs])
    base = baseline_from_pairs(scorer, pairs)
    assert base[2] == pytest.approx(statistics.fmean(x.f for x in fitted)) and 0.2 < base[2] < 0.5
    others = unrelated_pairs(held, seed=3)
    raw = scorer.score([c for c, _ in others], [r for _, r in others])
    rescaled = [rescale((x.p, x.r, x.f), base)[2] for x in raw]
    # 0 means unrelated: the held-out mean is 0 within 3 standard errors (of the held-out mean and the baseline)
    se = math.hypot(*(statistics.stdev(v) / math.sqrt(len(v)) for v in ([x.f for x in raw], [x.f for x in fitted])))
    assert abs(statistics.fmean(rescaled)) < 3 * se / (1 - base[2])
    assert statistics.fmean(x.f for x in raw) > 0.2  # while the raw floor is far from 0
    same = scorer.score(held[:2], held[:2])
    assert all(abs(rescale((x.p, x.r, x.f), base)[2] - 1.0) < 1e-5 for x in same)


def test_store_baseline_scored_beside_the_raw_values(corpus, tmp_path):
    """`--metric-arg bertscore.baseline=store`: each record keeps raw p/r/f and adds the rescaled values against
    the task's baseline from the round's labels; the record names the baseline and its pairs."""
    from academiceval.scores.bertscore_baseline import rescale

    home = tmp_path / "home"
    run = build_round_and_run(corpus, home, "baseline__lead")
    score_runs([run], ScoreConfig(metrics=["bertscore"], options={"bertscore": {"baseline": "store"}}), home=home)
    recs = [r for r in read_scores(run) if not r.error]
    assert recs and {r.metric for r in recs} == {"bertscore-all-MiniLM-L6-v2-L6-storebaseline-window"}
    base = recs[0].details["baseline"]
    assert base["task"] == "abstract" and base["pairs"] == 6  # 12 abstracts of distinct papers, two halves
    for r in recs:
        assert r.details["baseline"] == base
        want = rescale((r.values["p"], r.values["r"], r.values["f"]), (base["p"], base["r"], base["f"]))
        assert [r.values[k] for k in ("p_rescaled", "r_rescaled", "f_rescaled")] == pytest.approx(list(want))
    # a lead paragraph shares the paper's content: above the unrelated floor, below its own abstract
    assert 0 < statistics.fmean(r.values["f_rescaled"] for r in recs) < 1
    plain = ScoreConfig(metrics=["bertscore"])
    score_runs([run], plain, home=home)  # the plain metric is another name: both kept, never mixed
    assert {r.metric for r in read_scores(run)} == {
        "bertscore-all-MiniLM-L6-v2-L6-storebaseline-window",
        "bertscore-all-MiniLM-L6-v2-L6-window",
    }
    raw = {r.sample_id: r.values["f"] for r in read_scores(run) if r.metric.endswith("L6-window") and not r.error}
    assert all(abs(raw[r.sample_id] - r.values["f"]) < 1e-6 for r in recs)


def test_a_status_line_shows_while_the_model_loads(corpus, tmp_path, monkeypatch):
    """Issue 28 item 8: the first BERTScore call loads torch and the model (35-40 s here) — the progress callback
    gets a 'loading …' line (0/1) before, and 1/1 after, and only then the metric's own ticks; a process that has
    the model already shows no such line."""
    from academiceval.scores import bertscore_model

    monkeypatch.setattr(bertscore_model, "_MODELS", {})  # as in a fresh `academiceval score` process
    home = tmp_path / "home"
    run = build_round_and_run(corpus, home, "baseline__lead")
    events: list[tuple[str, int, int]] = []
    loads: list[float] = []
    real = bertscore_model._load
    monkeypatch.setattr(bertscore_model, "_load", lambda *a, **kw: loads.append(len(events)) or real(*a, **kw))
    score_runs([run], ScoreConfig(metrics=["bertscore"]), home=home, progress=lambda *e: events.append(e))
    status = [e for e in events if e[0].startswith("loading ")]
    assert status == [
        ("loading BERTScore model all-MiniLM-L6-v2 (layer 6, cpu)", 0, 1),
        ("loading BERTScore model all-MiniLM-L6-v2 (layer 6, cpu)", 1, 1),
    ]
    assert loads == [1]  # the model loaded after the status line was shown, before it said done
    ticks = [i for i, e in enumerate(events) if "bertscore" in e[0]]
    assert ticks and min(ticks) > events.index(status[1]) and events[ticks[-1]][1] == events[ticks[-1]][2] == 11
    events.clear()
    score_runs([run], ScoreConfig(metrics=["bertscore"], options={"bertscore": {"idf": True}}), home=home,
               progress=lambda *e: events.append(e))  # fmt: skip
    assert events and not any(e[0].startswith("loading ") for e in events)  # loaded once per process
