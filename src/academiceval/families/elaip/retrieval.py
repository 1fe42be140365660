"""ElaipBench's intra-paper retrieval settings, for the round writer (`elaip import`) and the question filter.

Running ElaipBench items is the one run path: `academiceval run ROUND --preset elaipbench` (3 epochs at
temperature 0.1, 32 new tokens; `elaipbench-cot` for the chain-of-thought variant), scored by `academiceval score`
(mean ± sd across epochs per SA/MA); `academiceval elaip run` is that, for a rows file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def retrieval_for(setting: str, *, model: str | None = None) -> tuple[Any, Callable[[str], int]]:
    """(retriever, token counter) for `rag-bm25` / `rag-dense`: bm25s or a sentence model (default the packaged
    all-MiniLM-L6-v2), and the packaged WordPiece counter for the ~512-token passages."""
    from academiceval.models.rag.retrievers import get_retriever  # heavy optional deps (bm25s, sentence models)
    from academiceval.models.tokenize import load_tokenizer

    return get_retriever(setting.removeprefix("rag-"), model=model), load_tokenizer(None).count
