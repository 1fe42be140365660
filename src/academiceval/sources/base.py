"""The one interface every metadata source offers: the live arXiv API client, an HTTP server speaking the
arXiv protocol (`--api-url`, e.g. `mirror serve`), and the in-process local mirror (`--source DIR`).

Collectors (graph crawl/update, round building) depend only on this protocol, so they behave the same over
live arXiv, a served mirror, and an in-process mirror.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from academiceval.store.paper_models import PaperMeta

SortBy = Literal["relevance", "lastUpdatedDate", "submittedDate"]
SortOrder = Literal["ascending", "descending"]


class FeedPage(BaseModel):
    """One page of results, as arXiv returns it (`opensearch:totalResults`, `startIndex`, entries)."""

    total_results: int
    start: int
    items: list[PaperMeta] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)  # entries that could not be read, with reasons


@runtime_checkable
class MetadataSource(Protocol):
    """What collectors need from a source. `requests_made` counts API calls (for cost reports)."""

    requests_made: int

    def search(
        self,
        query: str,
        *,
        start: int = 0,
        max_results: int = 100,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> FeedPage:
        """One page for an arXiv `search_query` string (build it with `sources.query`)."""
        ...

    def iter_search(
        self,
        query: str,
        *,
        page_size: int = 100,
        limit: int | None = None,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> Iterator[PaperMeta]:
        """Every result of a query, page by page."""
        ...

    def fetch_ids(self, arxiv_ids: Sequence[str]) -> list[PaperMeta]:
        """Metadata for ids (batched `id_list` requests). Unknown ids are simply absent from the result."""
        ...

    def fetch_pdf(self, arxiv_id: str, dest_dir: Path) -> Path:
        """The PDF of a paper, written atomically under dest_dir; raises a typed source error on failure."""
        ...


def iter_pages(
    search: Callable[..., FeedPage],
    query: str,
    *,
    page_size: int = 100,
    limit: int | None = None,
    sort_by: SortBy = "submittedDate",
    sort_order: SortOrder = "descending",
    on_errors: Callable[[list[str]], None] | None = None,
) -> Iterator[PaperMeta]:
    """Every result of a query through a source's `search`, page by page, until `limit` results, an empty page,
    or `totalResults`. Shared by every source so paging behaves the same over live arXiv and a mirror."""
    start, seen = 0, 0
    while True:
        n = page_size if limit is None else min(page_size, limit - seen)
        if n <= 0:
            return
        page = search(query, start=start, max_results=n, sort_by=sort_by, sort_order=sort_order)
        if on_errors is not None and page.errors:
            on_errors(page.errors)
        for m in page.items:
            yield m
            seen += 1
        start += len(page.items)
        if not page.items or start >= page.total_results:
            return
