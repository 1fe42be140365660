"""Retrievers that score documents against ONE query string.

The original AcademicEval code passed its query string where a list was expected, so every retriever saw
only the first character and returned the same chunks whatever the task asked (see research notes). Here a
query is always a whole string, scored against every document, and ties are broken by document order so
rankings are deterministic.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from academiceval.errors import ConfigError
from academiceval.models.embedded import MINILM_NAME, MINILM_SHA256, load_sentence_model


class Retriever(Protocol):
    name: str

    def scores(self, query: str, docs: list[str]) -> np.ndarray: ...

    def identity(self) -> dict[str, Any]: ...


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best scores, best first; equal scores keep document order."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    return order[: max(0, k)]


@lru_cache(maxsize=1)
def _bm25s() -> Any:
    """bm25s, with its logger put back to WARNING (it sets itself to DEBUG on import, flooding any log handler)."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


def terms(texts: list[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free word terms (bm25s's tokenizer).

    No stemmer: NLTK's costs seconds to import and PyStemmer would be one more native dependency; chunk
    rankings within one paper barely depend on it.
    """
    return _bm25s().tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


class BM25Retriever:
    """Okapi BM25 over the chunks of one sample (bm25s), indexed per call: chunk sets are small and per-sample."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def scores(self, query: str, docs: list[str]) -> np.ndarray:
        if not docs:
            return np.zeros(0)
        toks = terms([query, *docs])
        index = _bm25s().BM25(k1=self.k1, b=self.b)
        index.index(toks[1:], show_progress=False)
        return np.asarray(index.get_scores(toks[0]), dtype=float)

    def identity(self) -> dict[str, Any]:
        return {"retriever": "bm25", "k1": self.k1, "b": self.b, "library": "bm25s", "stopwords": "en"}


class TfidfRetriever:
    """TF-IDF cosine similarity (scikit-learn), vocabulary and idf fitted on the sample's chunks."""

    name = "tfidf"

    def scores(self, query: str, docs: list[str]) -> np.ndarray:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.metrics.pairwise import linear_kernel

        if not docs:
            return np.zeros(0)
        vec = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        try:
            matrix = vec.fit_transform(docs)
        except ValueError:  # every chunk is stop words only
            return np.zeros(len(docs))
        return linear_kernel(vec.transform([query]), matrix)[0]

    def identity(self) -> dict[str, Any]:
        return {"retriever": "tfidf", "library": "scikit-learn", "sublinear_tf": True}


class DenseRetriever:
    """Cosine similarity of sentence embeddings; default the pinned, packaged all-MiniLM-L6-v2.

    `model` may be any local checkpoint (Contriever: mean pooling; DPR/Dragon: `pooling="cls"` and a separate
    `query_model` for their query encoder). Models are loaded once per process and shared by threads.
    """

    name = "dense"
    memo_size = 50_000  # chunk embeddings kept (384 floats each for MiniLM: ~75 MB at most)

    def __init__(
        self, model: str | None = None, *, query_model: str | None = None, pooling: str | None = None, device="cpu"
    ) -> None:
        self.model_path, self.query_model_path, self.pooling, self.device = model, query_model, pooling, device
        self._lock = threading.Lock()
        self._memo: dict[str, np.ndarray] = {}
        self._ctx = load_sentence_model(model, device=device, pooling=pooling)
        self._query = load_sentence_model(query_model, device=device, pooling=pooling) if query_model else self._ctx

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Normalised embeddings; context embeddings are memoised (a run re-ranks the same demo chunks often)."""
        model = self._query if query else self._ctx
        with self._lock:
            if query:
                return self._encode(model, texts)
            missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
            if missing:
                for text, vec in zip(missing, self._encode(model, missing), strict=True):
                    if len(self._memo) >= self.memo_size:
                        self._memo.pop(next(iter(self._memo)))
                    self._memo[text] = vec
            return np.stack([self._memo[t] for t in texts])

    def missing(self, texts: list[str]) -> list[str]:
        """The distinct texts of `texts` whose embedding is not memoised yet, in order."""
        with self._lock:
            return [t for t in dict.fromkeys(texts) if t not in self._memo]

    @property
    def model_name(self) -> str:
        return self.model_path or MINILM_NAME

    @staticmethod
    def _encode(model: Any, texts: list[str]) -> np.ndarray:
        out = model.encode(
            texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32)

    def scores(self, query: str, docs: list[str]) -> np.ndarray:
        if not docs:
            return np.zeros(0)
        return self.embed(docs) @ self.embed([query], query=True)[0]

    def identity(self) -> dict[str, Any]:
        out: dict[str, Any] = {"retriever": "dense", "model": self.model_path or MINILM_NAME, "pooling": self.pooling}
        if self.model_path is None:
            out["model_sha256"] = MINILM_SHA256
        if self.query_model_path:
            out["query_model"] = self.query_model_path
        return out


_cache: dict[tuple[Any, ...], Retriever] = {}
_cache_lock = threading.Lock()


def get_retriever(
    kind: str, *, model: str | None = None, query_model: str | None = None, pooling: str | None = None
) -> Retriever:
    """A (cached) retriever by name: "bm25", "tfidf" or "dense"."""
    key = (kind, model, query_model, pooling)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if kind == "bm25":
            retriever: Retriever = BM25Retriever()
        elif kind in ("tfidf", "tf-idf"):
            retriever = TfidfRetriever()
        elif kind == "dense":
            retriever = DenseRetriever(model, query_model=query_model, pooling=pooling)
        else:
            raise ConfigError(
                f"unknown retriever {kind!r}", source="--rag", hint="use bm25, tfidf or dense[:MODEL_PATH]"
            )
        _cache[key] = retriever
        return retriever
