"""Light page entries: what a caller scanning thousands of hits reads, without decoding each full record.

`graph update` reads a month's window pages (2,000 hits each) to find the papers of its authors: of each hit it
needs the id, the v1 date and the author keys; the full `PaperMeta` only for the few papers that
involve graph authors. A page of 2,000 full records costs ~30 µs each to decode (pydantic objects for the record
and every author: `benchmarks/mirror_scale.py`); an entry is built from the index's columns in ~1-2 µs, and
`meta()` decodes the full record on demand (issue 27 item 2: "decode only what the caller reads").

`search_entries(source, ...)` gives entries from any `MetadataSource`: natively from the local mirror (its disk
index has the columns), else from the source's ordinary page (the full records are already there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from academiceval.store.paper_models import PaperMeta


@dataclass(frozen=True, slots=True)
class PageEntry:
    """One hit: `author_keys` are `Author.key` of the record's authors in order (`names.author_key` of the
    name where a record had none, as `graph.names.fill_keys` does); `meta()` is the full record."""

    arxiv_id: str
    published: date
    author_keys: tuple[str, ...]
    load: Callable[[], PaperMeta] = field(repr=False, compare=False)

    def meta(self) -> PaperMeta:
        return self.load()


@dataclass
class EntryPage:
    total_results: int
    start: int
    items: list[PageEntry]


def entry_of(meta: PaperMeta) -> PageEntry:
    """The entry of a record already decoded (sources without a light page)."""
    from academiceval.sources.names import author_key

    keys = tuple(a.key or author_key(a.name) for a in meta.authors)
    return PageEntry(meta.arxiv_id, meta.published, keys, lambda: meta)


def search_entries(
    source: Any,
    query: str,
    *,
    start: int = 0,
    max_results: int = 100,
    sort_by: str = "submittedDate",
    sort_order: str = "descending",
) -> EntryPage:
    """One page of `query` as entries (one request, counted like `search`)."""
    native = getattr(source, "search_entries", None)
    if native is not None:
        page: EntryPage = native(query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order)
        return page
    feed = source.search(query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order)
    return EntryPage(feed.total_results, feed.start, [entry_of(m) for m in feed.items])
