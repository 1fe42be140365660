"""ElaipBench's intra-paper retrieval settings, for the round writer (`elaip import`) and the question filter:
the retriever of a setting and `context_builder`, what each setting shows the model (`items.context_for`).

Running ElaipBench items is the one run path: `academiceval run ROUND --preset elaipbench` (3 epochs at
temperature 0.1, 32 new tokens; `elaipbench-cot` for the chain-of-thought variant), scored by `academiceval score`
(mean ± sd across epochs per SA/MA); `academiceval elaip run` is that, for a rows file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from academiceval.errors import ConfigError
from academiceval.families.elaip.items import (
    AUX_SETTINGS,
    BUDGET_TOKENS,
    SETTINGS,
    ElaipItem,
    context_for,
    is_retrieval,
)
from academiceval.models.tokenize import load_tokenizer


def retrieval_for(setting: str, *, model: str | None = None) -> tuple[Any, Callable[[str], int]]:
    """(retriever, token counter) for the retrieval settings (`rag-*`, `passages-*`): bm25s, or a sentence model —
    the packaged all-MiniLM-L6-v2 by default, any local checkpoint by path (`model`; ElaipBench used BGE-m3) —, and
    the packaged WordPiece counter for the ~512-token passages."""
    from academiceval.models.rag.retrievers import get_retriever  # heavy optional deps (bm25s, sentence models)

    kind = setting.rsplit("-", 1)[-1]
    if kind != "dense" and model:
        raise ConfigError(f"--dense-model applies to the dense settings, not {setting!r}", source="--dense-model")
    return get_retriever(kind, model=model if kind == "dense" else None), load_tokenizer(None).count


def context_builder(
    setting: str,
    *,
    top_k: int = 5,
    budget: int | None = BUDGET_TOKENS,
    dense_model: str | None = None,
    tokenizer: str | None = None,
) -> Callable[[ElaipItem], tuple[str, dict[str, Any]]]:
    """item → (context, what was chosen) for one setting, with its retriever loaded once: what `elaip import`,
    `elaip run` and the question filter show the model. `budget` (rag-* only) is counted in `tokenizer`'s tokens
    (default the packaged WordPiece estimator; ElaipBench counted in each model's own)."""
    if setting not in SETTINGS:
        raise ConfigError(f"unknown ElaipBench setting {setting!r}", hint=f"one of {', '.join(SETTINGS)}")
    if not is_retrieval(setting):
        if dense_model:
            raise ConfigError(f"--dense-model applies to the dense settings, not {setting!r}", source="--dense-model")
        return lambda item: context_for(item, setting)
    retriever, count = retrieval_for(setting, model=dense_model)
    measure = load_tokenizer(tokenizer).count if tokenizer else count
    limit = budget if setting in AUX_SETTINGS else None
    return lambda item: context_for(
        item, setting, top_k=top_k, retriever=retriever, count=count, budget=limit, measure=measure
    )
