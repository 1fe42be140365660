"""FROZEN copy of `academiceval.scores.bertscore` at commit 0d2e4e6 (before issue 27), for measuring only.

The benchmark (`benchmarks/bertscore_speed.py`) and `tests/scores/test_bertscore.py` load this file by path to
compare today's scores with the previous window implementation (half-window stride, in-memory cache only). Never
imported by the package; never edited. Its original docstring follows.

BERTScore (Zhang et al., 2020) implemented on transformers directly.

Why not the `bert-score` package: 0.3.13 fails on transformers 5, and it cuts inputs at the model window
silently — Introduction and Related Work outputs are often longer than 512 tokens. Here the semantics follow
bert-score (same tokens incl. [CLS]/[SEP], embeddings of one layer, greedy cosine matching where the special
tokens can be matched but weigh 0, idf from the references, baseline rescaling), with two explicit choices:

* long inputs: ``"window"`` (the default) embeds overlapping windows and takes each token's vector from the
  window where it sits most centrally, so nothing is cut; ``"truncate"`` keeps the first window of tokens (what
  bert-score does — on Introduction/Related Work references that is most of the text left unseen) and records
  per pair how many tokens were cut (`academiceval audit` shows the truncation rate per task).
* batching: texts are de-duplicated and embedded in batches of similar token length (less padding, faster);
  padding never enters a similarity max (bert-score's padded positions count as similarity 0, which only
  matters if every real similarity of a token is negative).

Equal within 1e-4 to bert-score 0.3.13 on real pairs (committed reference values, tests/scores/data).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from academiceval.errors import AcademicEvalError, ConfigError

LongInputs = Literal["truncate", "window"]

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


class BertScoreError(AcademicEvalError):
    """The BERTScore model cannot be loaded or configured as asked."""

    code = "bertscore"


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


def _special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens a single sequence gets before and after its content ([CLS] … [SEP], <s> … </s>),
    read off the tokenizer itself (transformers 5 tokenizers no longer expose build_inputs_with_special_tokens)."""
    probe = "hello"
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    full = tokenizer(probe, add_special_tokens=True)["input_ids"]
    for k in range(len(full) - len(bare) + 1):
        if full[k : k + len(bare)] == bare:
            return list(full[:k]), list(full[k + len(bare) :])
    raise BertScoreError("cannot find where the content goes in this tokenizer's special-token template")


@dataclass
class BertScorer:
    """Scores candidate/reference pairs. Construct once: the model loads lazily on the first `score` call.

    `model`: "all-MiniLM-L6-v2" (the packaged offline model, default), a local checkpoint directory, or a
    Hugging Face name already in the local cache (loading never downloads when HF_HUB_OFFLINE=1).
    `layer`: which hidden state to use (0 = embeddings); default from DEFAULT_LAYERS.
    `baseline`: (P, R, F) baseline values or a bert-score baseline file; scores become (x - b) / (1 - b).
    `idf`: weight tokens by idf over `idf_refs` (default: the references of each `score` call, as bert-score).
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
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)
    _cache: dict[str, tuple[_Encoded, Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.layer is None:
            self.layer = DEFAULT_LAYERS.get(short_model_name(self.model)) or DEFAULT_LAYERS.get(self.model)
            if self.layer is None:
                raise ConfigError(f"no default layer known for BERTScore model {self.model!r}", hint="pass --layer N")
        if self.long_inputs not in ("truncate", "window"):
            raise ConfigError(f"long_inputs must be 'truncate' or 'window', not {self.long_inputs!r}")

    def derive(self, **changes: Any) -> BertScorer:
        """A scorer with other idf/baseline options that shares this one's loaded model and embedding cache
        (embeddings do not depend on idf or baseline)."""
        allowed = {"idf", "baseline", "batch_size"}
        if set(changes) - allowed:
            raise ValueError(f"derive() only changes {sorted(allowed)}")
        other = dataclasses.replace(self, **changes)
        other._loaded = self._loaded
        other._cache = self._cache
        return other

    # ---------------------------------------------------------------- identity
    @property
    def metric_name(self) -> str:
        name = f"bertscore-{short_model_name(self.model)}-L{self.layer}"
        if self.idf:
            name += "-idf"
        if self.baseline is not None:
            name += "-rescaled"
        if self.long_inputs == "window":
            name += "-window"
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
            "baseline": list(base) if base else None,
            "long_inputs": self.long_inputs,
            "window_stride": self.window_stride if self.long_inputs == "window" else None,
            "max_length": self.max_length,
        }

    def _weights_sha256(self) -> str | None:
        if short_model_name(self.model) == "all-MiniLM-L6-v2" and self.model in MINILM_ALIASES:
            from academiceval.models.embedded import MINILM_SHA256

            return MINILM_SHA256
        return None

    def _baseline_values(self) -> tuple[float, float, float] | None:
        if self.baseline is None:
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

    def _load(self) -> dict[str, Any]:
        if self._loaded:
            return self._loaded
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        path = self._resolve_path()
        try:
            config = AutoConfig.from_pretrained(path)
            kw = {"add_prefix_space": True} if config.model_type in ("roberta", "gpt2", "longformer") else {}
            tokenizer = AutoTokenizer.from_pretrained(path, use_fast=True, **kw)
            model = AutoModel.from_pretrained(path)
        except (OSError, ValueError) as e:
            raise BertScoreError(
                f"cannot load BERTScore model {self.model!r} from local files ({e})",
                source="scores.bertscore",
                hint="use the packaged all-MiniLM-L6-v2, or pass a local checkpoint path / a model in the HF cache",
            ) from None
        model.eval().to(self.device)
        n_layers = getattr(config, "num_hidden_layers", None)
        assert self.layer is not None
        if n_layers is not None and not 0 <= self.layer <= n_layers:
            raise ConfigError(f"layer {self.layer} is out of range for {self.model} (0..{n_layers})")
        # drop layers above the chosen one (as bert-score does): same hidden state, less compute
        enc = getattr(model, "encoder", None)
        if enc is not None and hasattr(enc, "layer") and n_layers:
            enc.layer = torch.nn.ModuleList(list(enc.layer[: self.layer]))
        window = self.max_length or tokenizer.model_max_length
        if not window or window > 100_000:
            window = int(getattr(config, "max_position_embeddings", 512))
        prefix, suffix = _special_template(tokenizer)
        self._loaded = {
            "torch": torch,
            "tokenizer": tokenizer,
            "model": model,
            "window": int(window),
            "prefix": prefix,
            "suffix": suffix,
            "specials": len(prefix) + len(suffix),
            "zero_ids": {tokenizer.cls_token_id, tokenizer.sep_token_id} - {None},
        }
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
        counts: Counter[int] = Counter()
        for content in self._content_ids(refs):
            counts.update(set(self._encode(content).ids))
        n = len(refs)
        return {tid: math.log((n + 1) / (c + 1)) for tid, c in counts.items()}

    # ---------------------------------------------------------------- embeddings
    def _embed(self, encoded: list[_Encoded]) -> list[Any]:
        """Unit-normalized embeddings per text ([len(ids), dim] each), batched by length."""
        m = self._load()
        torch = m["torch"]
        order = list(range(len(encoded)))
        if self.length_batching:
            order.sort(key=lambda i: len(encoded[i].ids), reverse=True)
        out: list[Any] = [None] * len(encoded)
        window = m["window"]
        # windowed texts are split into chunks first; every chunk is one row of some batch
        rows: list[tuple[int, int, list[int]]] = []  # (text index, chunk start in content, ids)
        for i in order:
            e = encoded[i]
            if len(e.ids) <= window:
                rows.append((i, 0, e.ids))
            else:
                rows.extend((i, start, ids) for start, ids in self._chunks(e.ids))
        pad = m["tokenizer"].pad_token_id or 0
        chunk_vecs: dict[int, list[tuple[int, Any]]] = {}
        with torch.inference_mode():
            for b in range(0, len(rows), self.batch_size):
                batch = rows[b : b + self.batch_size]
                width = max(len(r[2]) for r in batch)
                ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for k, (_, _, row) in enumerate(batch):
                    ids[k, : len(row)] = torch.tensor(row, dtype=torch.long)
                    mask[k, : len(row)] = 1
                res = m["model"](
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device), output_hidden_states=True
                )
                hidden = res.hidden_states[self.layer] if res.hidden_states is not None else res.last_hidden_state
                hidden = hidden.float().cpu()
                for k, (i, start, row) in enumerate(batch):
                    chunk_vecs.setdefault(i, []).append((start, hidden[k, : len(row)]))
        for i, chunks in chunk_vecs.items():
            emb = chunks[0][1] if len(chunks) == 1 else self._stitch(encoded[i].ids, chunks)
            out[i] = emb / emb.norm(dim=-1, keepdim=True)
        return out

    def _chunks(self, ids: list[int]) -> list[tuple[int, list[int]]]:
        """Overlapping windows over the content tokens (specials re-added per window)."""
        m = self._load()
        pre, suf = m["prefix"], m["suffix"]
        content = ids[len(pre) : len(ids) - len(suf)]
        size = m["window"] - m["specials"]
        stride = self.window_stride or max(1, size // 2)
        starts = list(range(0, max(1, len(content) - size + stride), stride))
        starts = [s for s in starts if s < len(content)] or [0]
        if starts[-1] + size < len(content):
            starts.append(len(content) - size)
        return [(s, [*pre, *content[s : s + size], *suf]) for s in starts]

    def _stitch(self, ids: list[int], chunks: list[tuple[int, Any]]) -> Any:
        """Each content token's vector from the window where it is farthest from an edge; the leading special
        tokens from the first window, the trailing ones from the last."""
        m = self._load()
        torch = m["torch"]
        npre, nsuf = len(m["prefix"]), len(m["suffix"])
        n = len(ids) - npre - nsuf
        chunks = sorted(chunks, key=lambda c: c[0])
        best = [-1] * n
        rows: list[Any] = [None] * n
        for start, emb in chunks:
            length = emb.shape[0] - npre - nsuf
            for k in range(length):
                centrality = min(k, length - 1 - k)
                if centrality > best[start + k]:
                    best[start + k] = centrality
                    rows[start + k] = emb[npre + k]
        first, last = chunks[0][1], chunks[-1][1]
        return torch.cat([first[:npre], torch.stack(rows), last[last.shape[0] - nsuf :]])

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
        local = {t: self._cache[t] for t in uniq if t in self._cache}
        todo = [t for t in uniq if t not in local]
        if todo:
            new = [self._encode(c) for c in self._content_ids(todo)]
            local.update(zip(todo, zip(new, self._embed(new), strict=True), strict=True))
            for t in todo if self.cache_size > 0 else ():  # keep the newest `cache_size` texts
                if len(self._cache) >= self.cache_size:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[t] = local[t]
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
