"""Retrieval-augmented prompts: chunk the sample's own inputs, rank the chunks by the task's query, keep top-k.

`--rag bm25|tfidf|dense[:MODEL]` parses into `RagConfig`; `retrieve(sample, config, tokenizer)` returns the
ranked chunks that fill the retrieval-augmented template. `retrieve_text` ranks the chunks of one text only: a
long-document QA item (L-Eval) retrieves from its document, with its instruction as the query, as L-Eval's
retrieval baselines do (`Baselines/turbo4k-retrieve-test.py`: 1,024-token chunks, no overlap, top 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

from pydantic import BaseModel, Field, model_validator

from academiceval.errors import ConfigError
from academiceval.models.rag.chunking import Chunk, chunk_sample, sample_sources, split_tokens
from academiceval.models.rag.retrievers import Retriever, get_retriever, terms, top_k
from academiceval.models.tokenize import Tokenizer, load_tokenizer
from academiceval.rounds.prompts import retrieval_query
from academiceval.store.models import Sample

__all__ = [
    "Chunk",
    "RagConfig",
    "Ranked",
    "chunk_sample",
    "get_retriever",
    "retrieve",
    "retrieve_text",
    "sample_sources",
    "split_tokens",
    "terms",
    "top_k",
]


class RagConfig(BaseModel):
    """Retrieval settings of a run (stored in the run spec)."""

    retriever: Literal["bm25", "tfidf", "dense"] = "bm25"
    top_k: int = Field(12, ge=1)
    chunk_size: int = Field(512, ge=8)
    chunk_overlap: int = Field(64, ge=0)
    model: str | None = None  # dense: local checkpoint; None = the packaged, pinned all-MiniLM-L6-v2
    query_model: str | None = None  # dense dual encoders (DPR, Dragon): a separate query encoder
    pooling: Literal["mean", "cls"] | None = None

    @classmethod
    def from_spec(cls, spec: str, **kw: Any) -> RagConfig:
        """Parse `bm25`, `tfidf`, `dense`, `dense:PATH` or `dense:PATH?query=QPATH&pooling=cls`."""
        kind, _, rest = spec.strip().partition(":")
        kind = {"tf-idf": "tfidf"}.get(kind.lower(), kind.lower())
        if kind not in ("bm25", "tfidf", "dense"):
            raise ConfigError(f"unknown retriever {spec!r}", source="--rag", hint="use bm25, tfidf or dense[:MODEL]")
        extra: dict[str, Any] = {}
        if rest:
            if kind != "dense":
                raise ConfigError(f"{kind} takes no model ({spec!r})", source="--rag")
            path, _, query = rest.partition("?")
            extra["model"] = path or None
            for key, value in parse_qsl(query):
                if key not in ("query", "pooling"):
                    raise ConfigError(f"unknown dense option {key!r}", source="--rag", hint="query=PATH, pooling=cls")
                extra["query_model" if key == "query" else "pooling"] = value
        return cls(retriever=kind, **{**extra, **kw})

    @classmethod
    def coerce(cls, value: RagConfig | dict[str, Any] | str | None) -> RagConfig | None:
        """Accept a config, a spec string, or the runner's dict (whose "retriever" may be "dense:PATH")."""
        if value is None or isinstance(value, RagConfig):
            return value
        if isinstance(value, str):
            return cls.from_spec(value)
        data = {k: v for k, v in value.items() if v is not None}
        spec = str(data.pop("retriever", "bm25"))
        known = set(cls.model_fields) - {"retriever"}
        return cls.from_spec(spec, **{k: v for k, v in data.items() if k in known})

    @model_validator(mode="after")
    def _check_overlap(self) -> RagConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ConfigError(
                f"chunk overlap {self.chunk_overlap} must be smaller than chunk size {self.chunk_size}",
                source="--chunk-overlap",
            )
        return self

    def identity(self) -> dict[str, Any]:
        """For the run spec: every setting that changes which chunks a prompt gets."""
        out = self.model_dump()
        out.update(self.retriever_obj().identity())
        return out

    def retriever_obj(self) -> Retriever:
        return get_retriever(self.retriever, model=self.model, query_model=self.query_model, pooling=self.pooling)


@dataclass(frozen=True)
class Ranked:
    chunk: Chunk
    score: float
    rank: int


def default_query(sample: Sample, templates_dir: str | Path | None = None) -> str:
    """The task's retrieval query, as the round's templates define it."""
    return retrieval_query(sample, templates_dir=templates_dir)


def retrieve(
    sample: Sample,
    config: RagConfig,
    tokenizer: Tokenizer | None = None,
    *,
    query: str | None = None,
    templates_dir: str | Path | None = None,
) -> list[Ranked]:
    """Top-k chunks of the sample's own inputs for its retrieval query (or `query`), best first."""
    tok = tokenizer or load_tokenizer()
    chunks = chunk_sample(sample, tok, size=config.chunk_size, overlap=config.chunk_overlap)
    if not chunks:
        return []
    q = default_query(sample, templates_dir) if query is None else query
    scores = config.retriever_obj().scores(q, [c.text for c in chunks])
    best = top_k(scores, config.top_k)
    return [Ranked(chunk=chunks[i], score=float(scores[i]), rank=r) for r, i in enumerate(best)]


def retrieve_text(text: str, query: str, config: RagConfig, tokenizer: Tokenizer, *, source: str) -> list[Ranked]:
    """Top-k windows of one text (`config.chunk_size` tokens, `config.chunk_overlap`) for `query`, best first;
    each chunk is named `<source>#<n>` (n = its position in the text)."""
    pieces = split_tokens(text, tokenizer, config.chunk_size, config.chunk_overlap)
    if not pieces:
        return []
    chunks = [Chunk(chunk_id=f"{source}#{n}", source=source, text=t, tokens=k) for n, (t, k) in enumerate(pieces)]
    scores = config.retriever_obj().scores(query, [c.text for c in chunks])
    best = top_k(scores, config.top_k)
    return [Ranked(chunk=chunks[i], score=float(scores[i]), rank=r) for r, i in enumerate(best)]
