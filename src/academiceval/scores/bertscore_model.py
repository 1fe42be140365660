"""The BERTScore model side: load a checkpoint once per process, embed token ids in length-sorted batches, and
cut texts longer than the model window into overlapping windows whose vectors are stitched back together.

Split from scores.bertscore (which keeps the scorer: tokens, caches, matching, idf, baseline). Loaded models are
kept per process, keyed by (path, layer, device, window): the demo's two rounds, repeated `score_runs` calls and
every `BertScorer.derive` share one load (importing torch and transformers is most of a load: seconds).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from academiceval.errors import AcademicEvalError, ConfigError

STITCH = "most-central"  # how window vectors are joined (in the embedding cache key: a new way, new keys)
_MODELS: dict[tuple[Any, ...], dict[str, Any]] = {}  # loaded tokenizer + model per (path, layer, device, window)
_MODELS_LOCK = threading.Lock()


class BertScoreError(AcademicEvalError):
    """The BERTScore model cannot be loaded or configured as asked."""

    code = "bertscore"


def special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens a single sequence gets before and after its content ([CLS] … [SEP], <s> … </s>),
    read off the tokenizer itself (transformers 5 tokenizers no longer expose build_inputs_with_special_tokens)."""
    probe = "hello"
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    full = tokenizer(probe, add_special_tokens=True)["input_ids"]
    for k in range(len(full) - len(bare) + 1):
        if full[k : k + len(bare)] == bare:
            return list(full[:k]), list(full[k + len(bare) :])
    raise BertScoreError("cannot find where the content goes in this tokenizer's special-token template")


def load_model(path: str, *, name: str, layer: int, device: str, max_length: int | None) -> dict[str, Any]:
    """torch, tokenizer, model (cut above `layer`), window, special-token template: loaded once per process."""
    key = (path, layer, device, max_length)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _load(path, name=name, layer=layer, device=device, max_length=max_length)
        return _MODELS[key]


def is_loaded(path: str, *, layer: int, device: str, max_length: int | None) -> bool:
    """Whether `load_model` would return at once (this process already loaded that model)."""
    with _MODELS_LOCK:
        return (path, layer, device, max_length) in _MODELS


def _load(path: str, *, name: str, layer: int, device: str, max_length: int | None) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(path)
        kw = {"add_prefix_space": True} if config.model_type in ("roberta", "gpt2", "longformer") else {}
        tokenizer = AutoTokenizer.from_pretrained(path, use_fast=True, **kw)
        model = AutoModel.from_pretrained(path)
    except (OSError, ValueError) as e:
        raise BertScoreError(
            f"cannot load BERTScore model {name!r} from local files ({e})",
            source="scores.bertscore",
            hint="use the packaged all-MiniLM-L6-v2, or pass a local checkpoint path / a model in the HF cache",
        ) from None
    model.eval().to(device)
    n_layers = getattr(config, "num_hidden_layers", None)
    if n_layers is not None and not 0 <= layer <= n_layers:
        raise ConfigError(f"layer {layer} is out of range for {name} (0..{n_layers})")
    # drop layers above the chosen one (as bert-score does): same hidden state, less compute
    enc = getattr(model, "encoder", None)
    if enc is not None and hasattr(enc, "layer") and n_layers:
        enc.layer = torch.nn.ModuleList(list(enc.layer[:layer]))
    window = max_length or tokenizer.model_max_length
    if not window or window > 100_000:
        window = int(getattr(config, "max_position_embeddings", 512))
    prefix, suffix = special_template(tokenizer)
    return {
        "torch": torch,
        "tokenizer": tokenizer,
        "model": model,
        "window": int(window),
        "prefix": prefix,
        "suffix": suffix,
        "specials": len(prefix) + len(suffix),
        "zero_ids": {tokenizer.cls_token_id, tokenizer.sep_token_id} - {None},
    }


def embed_ids(
    m: dict[str, Any],
    encoded: list[list[int]],
    *,
    layer: int,
    stride: int,
    batch_size: int,
    length_batching: bool,
    device: str,
) -> list[Any]:
    """Unit-normalized embeddings per token-id list ([len(ids), dim] each), batched by length; ids longer than
    the model window go through `window_chunks` and `stitch`."""
    torch = m["torch"]
    order = list(range(len(encoded)))
    if length_batching:
        order.sort(key=lambda i: len(encoded[i]), reverse=True)
    out: list[Any] = [None] * len(encoded)
    window = m["window"]
    # windowed texts are split into chunks first; every chunk is one row of some batch
    rows: list[tuple[int, int, list[int]]] = []  # (text index, chunk start in content, ids)
    for i in order:
        e = encoded[i]
        if len(e) <= window:
            rows.append((i, 0, e))
        else:
            rows.extend((i, start, ids) for start, ids in window_chunks(e, m, stride))
    pad = m["tokenizer"].pad_token_id or 0
    chunk_vecs: dict[int, list[tuple[int, Any]]] = {}
    with torch.inference_mode():
        for b in range(0, len(rows), batch_size):
            batch = rows[b : b + batch_size]
            width = max(len(r[2]) for r in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for k, (_, _, row) in enumerate(batch):
                ids[k, : len(row)] = torch.tensor(row, dtype=torch.long)
                mask[k, : len(row)] = 1
            res = m["model"](input_ids=ids.to(device), attention_mask=mask.to(device), output_hidden_states=True)
            hidden = res.hidden_states[layer] if res.hidden_states is not None else res.last_hidden_state
            hidden = hidden.float().cpu()
            for k, (i, start, row) in enumerate(batch):
                chunk_vecs.setdefault(i, []).append((start, hidden[k, : len(row)]))
    for i, chunks in chunk_vecs.items():
        emb = chunks[0][1] if len(chunks) == 1 else stitch(encoded[i], chunks, m)
        out[i] = emb / emb.norm(dim=-1, keepdim=True)
    return out


def window_chunks(ids: list[int], m: dict[str, Any], stride: int) -> list[tuple[int, list[int]]]:
    """Overlapping windows over the content tokens of `ids` (specials re-added per window), one every `stride`
    tokens, the last one ending at the text's end; (start in content, window ids) each."""
    pre, suf = m["prefix"], m["suffix"]
    content = ids[len(pre) : len(ids) - len(suf)]
    size = m["window"] - m["specials"]
    starts = list(range(0, max(1, len(content) - size + stride), stride))
    starts = [s for s in starts if s < len(content)] or [0]
    if starts[-1] + size < len(content):
        starts.append(len(content) - size)
    return [(s, [*pre, *content[s : s + size], *suf]) for s in starts]


def stitch(ids: list[int], chunks: list[tuple[int, Any]], m: dict[str, Any]) -> Any:
    """Each content token's vector from the window where it is farthest from an edge; the leading special
    tokens from the first window, the trailing ones from the last."""
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
