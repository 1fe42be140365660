"""Splitting a sample's own inputs into overlapping token windows for retrieval.

Each source (the target body, each demonstration's fields and label, each cited paper) is chunked on its own,
so a chunk never straddles two papers and its origin stays known. Windows are counted in the tokenizer's
tokens and cut on character offsets, so chunk text is verbatim paper text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from academiceval.errors import ConfigError
from academiceval.models.tokenize import Tokenizer
from academiceval.models.truncate import PROTECTED_FIELDS, content_field
from academiceval.store.models import Sample


@dataclass(frozen=True)
class Chunk:
    chunk_id: str  # "<source>#<n>"
    source: str  # "body", "demo:0:body", "demo:0:label", "citation:3"
    text: str
    tokens: int


def split_tokens(text: str, tok: Tokenizer, size: int, overlap: int) -> list[tuple[str, int]]:
    """Windows of `size` tokens advancing by `size - overlap`; returns (text, tokens) per window.

    Memoised: demonstration papers recur across a round's samples, and tokenising them is most of the cost.
    """
    if size <= 0 or not 0 <= overlap < size:
        raise ConfigError(
            f"chunk size {size} and overlap {overlap} are invalid",
            source="--chunk-size/--chunk-overlap",
            hint="need chunk size > 0 and 0 <= overlap < chunk size",
        )
    return list(_split_cached(text.strip(), tok, size, overlap))


@lru_cache(maxsize=512)
def _split_cached(text: str, tok: Tokenizer, size: int, overlap: int) -> tuple[tuple[str, int], ...]:
    if not text:
        return ()
    ends = tok.token_ends(text)
    if len(ends) <= size:
        return ((text, len(ends)),)
    out: list[tuple[str, int]] = []
    step = size - overlap
    start = 0
    while start < len(ends):
        stop = min(start + size, len(ends))
        begin = ends[start - 1] if start else 0
        piece = text[begin : ends[stop - 1]].strip()
        if piece:
            out.append((piece, stop - start))
        if stop == len(ends):
            break
        start += step
    return tuple(out)


def sample_sources(sample: Sample) -> list[tuple[str, str]]:
    """(source name, text) for everything a retrieval-augmented prompt may draw from."""
    sources: list[tuple[str, str]] = []
    body = content_field(sample.fields)
    if body and sample.fields.get(body):
        sources.append(("body", sample.fields[body]))
    for name, value in sample.fields.items():  # any other unprotected inputs (e.g. a separate conclusion)
        if name != body and name not in PROTECTED_FIELDS and value:
            sources.append((name, value))
    for i, demo in enumerate(sample.demos):
        for name, value in demo.fields.items():
            if value:
                sources.append((f"demo:{i}:{name}", value))
        if demo.label:
            sources.append((f"demo:{i}:label", demo.label))
    for i, cited in enumerate(sample.citations):
        text = f"{cited.title}. {cited.abstract}".strip() if cited.abstract else cited.title
        if text:
            sources.append((f"citation:{i}", text))
    return sources


def chunk_sample(sample: Sample, tok: Tokenizer, *, size: int = 512, overlap: int = 64) -> list[Chunk]:
    chunks: list[Chunk] = []
    for source, text in sample_sources(sample):
        for n, (piece, tokens) in enumerate(split_tokens(text, tok, size, overlap)):
            chunks.append(Chunk(chunk_id=f"{source}#{n}", source=source, text=piece, tokens=tokens))
    return chunks
