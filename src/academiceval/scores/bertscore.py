"""BERTScore (Zhang et al., 2020) implemented on transformers directly.

Why not the `bert-score` package: it cuts inputs at the model window silently — Introduction and Related Work
outputs are often longer than 512 tokens — and it re-embeds every label on every call. Here the semantics follow
bert-score (same tokens incl. [CLS]/[SEP], embeddings of one layer, greedy cosine matching where the special
tokens can be matched but weigh 0, idf from the references, baseline rescaling), with explicit choices:

* long inputs: ``"window"`` (the default) embeds overlapping windows and takes each token's vector from the
  window where it sits most centrally, so nothing is cut; ``"truncate"`` keeps the first window of tokens (what
  bert-score does — on Introduction/Related Work references that is most of the text left unseen) and records
  per pair how many tokens were cut (`academiceval audit` shows the truncation rate per task).
  Window geometry: windows start every half window (`window_stride`), so every token keeps at least a quarter
  window of context on each side; this embeds ~1.8× the text of a long input. Kept as it is after issue 27:
  cheaper geometries were measured (notes/scores.md) and move F by 0.005 on average and up to 0.02-0.03 on real
  section pairs (less context per token), for at most 1.75× less compute; they stay available by
  `window_stride` (`--metric-arg bertscore.window_stride=N`: its own metric name `…-window-strideN`, config hash
  and cache key, so records are never mixed). No geometry that sees every token reaches bert-score's truncated
  speed: on 300 real section pairs windows without overlap still embed 3.0× its tokens (notes/scores.md).
* batching: texts are de-duplicated and embedded in batches of similar token length (less padding, faster;
  cutting batches further to bound padding was measured slower on this 2-core machine: notes/scores.md);
  padding never enters a similarity max (bert-score's padded positions count as similarity 0, which only
  matters if every real similarity of a token is negative).
* reuse: the model is loaded once per process (shared by every scorer with the same model, layer and window),
  and label embeddings persist in the workspace (`embedding_cache`, scores.embed_cache) across `score` calls
  and runs, so each label of a round is embedded once.

Equal within 1e-4 to bert-score 0.3.13 on real pairs (committed reference values, tests/scores/data).
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import math
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from academiceval.errors import ConfigError
from academiceval.scores.bertscore_model import (
    STITCH,
    BertScoreError,
    embed_ids,
    is_loaded,
    load_model,
    window_chunks,
)
from academiceval.scores.embed_cache import CachedEmbedding, EmbeddingCache, embedding_key
from academiceval.store.hashing import sha256_hex

__all__ = ["BertScoreError", "BertScoreResult", "BertScorer", "read_baseline", "short_model_name"]

LongInputs = Literal["truncate", "window"]
log = logging.getLogger(__name__)

# baseline="store": rescaled against unrelated pairs of the round's labels (scores.bertscore_baseline computes it)
STORE = "store"
BASELINE_PAIRS = 200  # unrelated pairs per task at most (a round has a few hundred labels per task)
# what a store baseline is, for the configuration hash (its values depend on the round: each record holds them)
STORE_BASELINE = {"kind": STORE, "pairs": "unrelated labels of one task, distinct papers", "max_pairs": BASELINE_PAIRS}

# bert-score's tuned layers for common models (model2layers in bert_score/utils.py); others need --layer
DEFAULT_LAYERS: dict[str, int] = {
    "all-MiniLM-L6-v2": 6,
    "roberta-large": 17,
    "roberta-base": 10,
    "bert-base-uncased": 9,
    "bert-large-uncased": 18,
    "microsoft/deberta-xlarge-mnli": 40,
    "microsoft/deberta-large-mnli": 18,
    "distilbert-base-uncased": 5,
    "allenai/scibert_scivocab_uncased": 8,
}
MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm")


@dataclass(frozen=True)
class BertScoreResult:
    p: float
    r: float
    f: float
    cand_tokens: int  # content tokens (no specials) of the candidate before any cut
    ref_tokens: int
    cand_cut: int = 0  # content tokens not seen by the model ("truncate" only)
    ref_cut: int = 0

    def values(self) -> dict[str, float]:
        return {"p": self.p, "r": self.r, "f": self.f}


@dataclass
class _Encoded:
    ids: list[int]  # with special tokens, possibly truncated
    full_len: int  # content tokens before truncation
    cut: int


def short_model_name(model: str) -> str:
    """`roberta-large` → `roberta-large`; `/x/y/all-MiniLM-L6-v2` → `all-MiniLM-L6-v2`; for metric names."""
    if model in MINILM_ALIASES:
        return "all-MiniLM-L6-v2"
    return Path(model.rstrip("/")).name or model


def read_baseline(path: str | Path, layer: int) -> tuple[float, float, float]:
    """A bert-score baseline file (CSV with header `LAYER,P,R,F`, one row per layer from 0): the row of `layer`."""
    rows = list(csv.DictReader(Path(path).read_text(encoding="utf-8").splitlines()))
    for row in rows:
        if int(float(row["LAYER"])) == layer:
            return float(row["P"]), float(row["R"]), float(row["F"])
    raise ConfigError(f"baseline file {path} has no row for layer {layer}", hint="rows LAYER,P,R,F, one per layer")


@dataclass
class BertScorer:
    """Scores candidate/reference pairs. Construct once: the model loads lazily on the first `score` call.

    `model`: "all-MiniLM-L6-v2" (the packaged offline model, default), a local checkpoint directory, or a
    Hugging Face name already in the local cache (loading never downloads when HF_HUB_OFFLINE=1).
    `layer`: which hidden state to use (0 = embeddings); default from DEFAULT_LAYERS.
    `baseline`: (P, R, F) baseline values or a bert-score baseline file: scores become (x - b) / (1 - b); or
    "store": the values stay raw and the metric adds the rescaled ones beside them, against a per-task baseline
    from unrelated pairs of the round's labels (scores.bertscore_baseline).
    `idf`: weight tokens by idf over `idf_refs` (default: the references of each `score` call, as bert-score).
    `embedding_cache`: where reference embeddings persist across calls and processes (an EmbeddingCache or the
    path of its SQLite file; `score` passes the workspace's). None: kept in memory only (`cache_size` texts).
    """

    model: str = "all-MiniLM-L6-v2"
    layer: int | None = None
    idf: bool = False
    baseline: tuple[float, float, float] | str | Path | None = None
    long_inputs: LongInputs = "window"  # nothing cut by default; "truncate" (bert-score's behaviour) is marked
    window_stride: int | None = None  # tokens between window starts ("window"); default half a window
    batch_size: int = 32
    length_batching: bool = True
    device: str = "cpu"
    max_length: int | None = None  # model window incl. special tokens; default from the tokenizer/config
    cache_size: int = 4096  # texts whose embeddings are kept between calls (labels recur across settings/runs)
    cache_tokens: int = 1_000_000  # ... and at most this many tokens of vectors in memory (1.5 GB at 384 dims)
    embedding_cache: EmbeddingCache | str | Path | None = None
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)
    _cache: dict[str, tuple[_Encoded, Any]] = field(default_factory=dict, repr=False)
    _idf_memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.layer is None:
            self.layer = DEFAULT_LAYERS.get(short_model_name(self.model)) or DEFAULT_LAYERS.get(self.model)
            if self.layer is None:
                raise ConfigError(f"no default layer known for BERTScore model {self.model!r}", hint="pass --layer N")
        if self.long_inputs not in ("truncate", "window"):
            raise ConfigError(f"long_inputs must be 'truncate' or 'window', not {self.long_inputs!r}")
        if isinstance(self.embedding_cache, str | Path):
            self.embedding_cache = EmbeddingCache(self.embedding_cache)

    def derive(self, **changes: Any) -> BertScorer:
        """A scorer with other idf/baseline options that shares this one's loaded model and embedding cache
        (embeddings do not depend on idf or baseline)."""
        allowed = {"idf", "baseline", "batch_size"}
        if set(changes) - allowed:
            raise ValueError(f"derive() only changes {sorted(allowed)}")
        other = dataclasses.replace(self, **changes)
        other._loaded = self._loaded
        other._cache = self._cache
        other._idf_memo = self._idf_memo
        return other

    # ---------------------------------------------------------------- identity
    @property
    def metric_name(self) -> str:
        name = f"bertscore-{short_model_name(self.model)}-L{self.layer}"
        if self.idf:
            name += "-idf"
        if self.baseline == STORE:  # raw values, and beside them the rescaled ones (`f_rescaled`, ...)
            name += "-storebaseline"
        elif self.baseline is not None:
            name += "-rescaled"
        if self.long_inputs == "window":
            name += "-window"
            if self.window_stride is not None:  # another geometry, other values: never mixed with the default's
                name += f"-stride{self.window_stride}"
        return name

    def config(self) -> dict[str, Any]:
        """Everything that changes the values (for the score config hash)."""
        base = self._baseline_values()
        return {
            "metric": "bertscore",
            "model": short_model_name(self.model),
            "weights_sha256": self._weights_sha256(),
            "layer": self.layer,
            "idf": self.idf,
            "baseline": list(base) if base else (STORE_BASELINE if self.baseline == STORE else None),
            "long_inputs": self.long_inputs,
            "window_stride": self.window_stride if self.long_inputs == "window" else None,
            "max_length": self.max_length,
        }

    def embedding_identity(self) -> dict[str, Any]:
        """Everything a text's vectors depend on (the embedding cache key), and nothing else (not idf/baseline)."""
        return {
            "model": short_model_name(self.model),
            "weights": self._weights_sha256() or self._checkpoint_files(),
            "layer": self.layer,
            "max_length": self.max_length,
            "long_inputs": self.long_inputs,
            "window_stride": self.window_stride if self.long_inputs == "window" else None,  # None: half a window
            "stitch": STITCH,
        }

    def _checkpoint_files(self) -> list[Any]:
        """A local checkpoint's weight files by name, size and mtime (a replaced checkpoint changes the key);
        a hub name in the local cache is identified by its name."""
        path = Path(self.model).expanduser()
        if not path.is_dir():
            return [self.model]
        files = sorted(p for p in path.iterdir() if p.suffix in (".safetensors", ".bin", ".json", ".txt"))
        return [str(path.resolve()), *[(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]]

    def _weights_sha256(self) -> str | None:
        if short_model_name(self.model) == "all-MiniLM-L6-v2" and self.model in MINILM_ALIASES:
            from academiceval.models.embedded import MINILM_SHA256

            return MINILM_SHA256
        return None

    def _baseline_values(self) -> tuple[float, float, float] | None:
        if self.baseline is None or self.baseline == STORE:  # a store baseline is per task: the metric applies it
            return None
        if isinstance(self.baseline, str | Path):
            assert self.layer is not None
            return read_baseline(self.baseline, self.layer)
        p, r, f = (float(x) for x in self.baseline)
        return p, r, f

    # ---------------------------------------------------------------- model
    def _resolve_path(self) -> str:
        if self.model in MINILM_ALIASES:
            from academiceval.models.embedded import verified_minilm_dir

            return str(verified_minilm_dir())
        return self.model

    def loading(self) -> str | None:
        """What the first `score` call will load (the model: importing torch and reading its weights takes tens of
        seconds on a small machine), or None when this process has it already."""
        assert self.layer is not None
        if self._loaded:
            return None
        path = self._resolve_path()
        if is_loaded(path, layer=self.layer, device=self.device, max_length=self.max_length):
            return None
        return f"BERTScore model {short_model_name(self.model)} (layer {self.layer}, {self.device})"

    def load(self) -> None:
        """Load the model now (rather than inside the first `score` call), so a caller can say it is loading."""
        self._load()

    def _load(self) -> dict[str, Any]:
        """The tokenizer and model, loaded once per process for every scorer of the same model, layer, device
        and window (a second `score_runs` call, or the demo's second round, reuses them)."""
        if not self._loaded:
            assert self.layer is not None
            loaded = load_model(
                self._resolve_path(), name=self.model, layer=self.layer, device=self.device, max_length=self.max_length
            )
            self._loaded.update(loaded)  # in place: scorers made by derive() share this dict
        return self._loaded

    # ---------------------------------------------------------------- tokens
    def _content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        tok = self._load()["tokenizer"]
        stripped = [t.strip() for t in texts]
        enc = tok(stripped, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [list(e) if s else [] for e, s in zip(enc, stripped, strict=True)]

    def _encode(self, content: list[int]) -> _Encoded:
        m = self._load()
        keep = m["window"] - m["specials"]
        kept = content[:keep] if self.long_inputs == "truncate" else content
        ids = [*m["prefix"], *kept, *m["suffix"]]
        return _Encoded(ids=ids, full_len=len(content), cut=len(content) - len(kept))

    def idf_weights(self, refs: Sequence[str]) -> dict[int, float]:
        """bert-score's `get_idf_dict`: log((N+1)/(df+1)) over the token sets of the references (N = number of
        references, duplicates included); unseen tokens get log(N+1) via `unseen_idf`."""
        digest = sha256_hex("\x00".join(refs))  # the same refs every chunk of a run
        if digest in self._idf_memo:
            return self._idf_memo[digest]
        counts: Counter[int] = Counter()
        for content in self._content_ids(refs):
            counts.update(set(self._encode(content).ids))
        n = len(refs)
        weights = {tid: math.log((n + 1) / (c + 1)) for tid, c in counts.items()}
        self._idf_memo.clear()
        self._idf_memo[digest] = weights
        return weights

    # ---------------------------------------------------------------- embeddings
    def _embed(self, encoded: list[_Encoded]) -> list[Any]:
        """Unit-normalized embeddings per text ([len(ids), dim] each), batched by length."""
        assert self.layer is not None
        return embed_ids(
            self._load(),
            [e.ids for e in encoded],
            layer=self.layer,
            stride=self._stride(),
            batch_size=self.batch_size,
            length_batching=self.length_batching,
            device=self.device,
        )

    def _stride(self) -> int:
        """Content tokens between window starts: `window_stride`, else half a window."""
        m = self._load()
        return self.window_stride or max(1, (m["window"] - m["specials"]) // 2)

    def _chunks(self, ids: list[int]) -> list[tuple[int, list[int]]]:
        return window_chunks(ids, self._load(), self._stride())

    # ---------------------------------------------------------------- caches
    def _embeddings(self, texts: list[str], *, persist: set[str]) -> dict[str, tuple[_Encoded, Any]]:
        """(tokens, unit vectors) of each text: from memory, else from the persistent cache (texts in `persist`,
        the labels), else embedded now; new labels are written to the persistent cache in one transaction."""
        local = {t: self._cache[t] for t in texts if t in self._cache}
        missing = [t for t in texts if t not in local]
        keys: dict[str, str] = {}
        if missing and self._store() is not None:
            identity = self.embedding_identity()
            keys = {t: embedding_key(identity, t) for t in missing if t in persist}
            hits = self._cache_call("read", lambda: self._store().get_many(list(keys.values())), {})
            torch = self._load()["torch"]
            for t, key in keys.items():
                if key in hits:
                    e = hits[key]
                    local[t] = (_Encoded(ids=e.ids, full_len=e.full_len, cut=e.cut), torch.from_numpy(e.vectors))
        todo = [t for t in missing if t not in local]
        if todo:
            new = [self._encode(c) for c in self._content_ids(todo)]
            local.update(zip(todo, zip(new, self._embed(new), strict=True), strict=True))
            fresh = [(keys[t], local[t]) for t in todo if t in keys]
            if fresh:
                items = [(k, CachedEmbedding(e.ids, v.numpy(), e.full_len, e.cut)) for k, (e, v) in fresh]
                self._cache_call("write", lambda: self._store().put_many(items), None)
        self._remember({t: local[t] for t in missing})
        return local

    def _remember(self, new: dict[str, tuple[_Encoded, Any]]) -> None:
        """Keep the newest texts in memory, at most `cache_size` texts and `cache_tokens` tokens."""
        if self.cache_size <= 0:
            return
        self._cache.update(new)
        tokens = sum(len(e.ids) for e, _ in self._cache.values())
        while self._cache and (len(self._cache) > self.cache_size or tokens > self.cache_tokens):
            enc, _ = self._cache.pop(next(iter(self._cache)))
            tokens -= len(enc.ids)

    def _store(self) -> EmbeddingCache | None:
        cache = self.embedding_cache
        return cache if isinstance(cache, EmbeddingCache) else None

    def _cache_call(self, what: str, call: Any, fallback: Any) -> Any:
        """A persistent-cache read or write; if the cache cannot be used (unwritable, locked for a minute, damaged
        beyond the set-aside), say so once and go on without it: it only saves time."""
        try:
            return call()
        except sqlite3.Error as e:
            log.warning("BERTScore embedding cache %s: cannot %s (%s); going on without it", self._store(), what, e)
            self.embedding_cache = None
            return fallback

    # ---------------------------------------------------------------- scoring
    def score(
        self, cands: Sequence[str], refs: Sequence[str], *, idf_refs: Sequence[str] | None = None
    ) -> list[BertScoreResult]:
        if len(cands) != len(refs):
            raise ValueError(f"{len(cands)} candidates but {len(refs)} references")
        if not cands:
            return []
        m = self._load()
        torch = m["torch"]
        uniq = list(dict.fromkeys([*refs, *cands]))
        index = {t: k for k, t in enumerate(uniq)}
        local = self._embeddings(uniq, persist=set(refs))
        encoded = [local[t][0] for t in uniq]
        embs = [local[t][1] for t in uniq]
        if self.idf:
            idf = self.idf_weights(list(idf_refs) if idf_refs is not None else list(refs))
            unseen = math.log(len(idf_refs if idf_refs is not None else refs) + 1)
        base = self._baseline_values()
        results: list[BertScoreResult] = []
        for cand, ref in zip(cands, refs, strict=True):
            ci, ri = index[cand], index[ref]
            ce, re_ = embs[ci], embs[ri]

            def weights(ids: list[int]) -> Any:
                if self.idf:
                    w = [idf.get(t, unseen) for t in ids]
                else:
                    w = [0.0 if t in m["zero_ids"] else 1.0 for t in ids]
                return torch.tensor(w, dtype=torch.float32)

            cw, rw = weights(encoded[ci].ids), weights(encoded[ri].ids)
            if encoded[ci].full_len == 0 or encoded[ri].full_len == 0 or cw.sum() == 0 or rw.sum() == 0:
                p = r = f = 0.0
            else:
                sim = ce @ re_.T
                p = float((sim.max(dim=1).values * (cw / cw.sum())).sum())
                r = float((sim.max(dim=0).values * (rw / rw.sum())).sum())
                f = 2 * p * r / (p + r) if p + r != 0 else 0.0
                if math.isnan(f):
                    f = 0.0
            if base is not None:
                p, r, f = ((x - b) / (1 - b) for x, b in zip((p, r, f), base, strict=True))
            results.append(
                BertScoreResult(
                    p=p,
                    r=r,
                    f=f,
                    cand_tokens=encoded[ci].full_len,
                    ref_tokens=encoded[ri].full_len,
                    cand_cut=encoded[ci].cut,
                    ref_cut=encoded[ri].cut,
                )
            )
        return results
