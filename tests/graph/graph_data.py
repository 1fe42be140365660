"""Constants shared by the graph tests (a module with a unique name: tests/ has no packages)."""

from __future__ import annotations

from datetime import date

LISTINGS = ("metadata", "arxiv_browse_astro-ph_listings")
CRAWL_UNTIL = date(2018, 3, 31)  # crawl the first quarter ...
UPDATE_SINCE = date(2018, 4, 1)  # ... then update with the second
UPDATE_UNTIL = date(2018, 6, 30)
N_SEEDS = 20


class DiesAfter:
    """Wraps a source and dies like a kill (a BaseException nobody catches) at its n-th request."""

    def __init__(self, inner, n: int) -> None:
        self.inner, self.n, self.requests_made = inner, n, 0

    def search(self, query, **kw):
        self.requests_made += 1
        if self.requests_made == self.n:
            raise KeyboardInterrupt(f"killed at request {self.n}")
        return self.inner.search(query, **kw)

    def iter_search(self, query, *, page_size=100, limit=None, sort_by="submittedDate", sort_order="descending"):
        start, seen = 0, 0
        while limit is None or seen < limit:
            n = page_size if limit is None else min(page_size, limit - seen)
            page = self.search(query, start=start, max_results=n, sort_by=sort_by, sort_order=sort_order)
            yield from page.items
            seen += len(page.items)
            start += len(page.items)
            if not page.items or start >= page.total_results:
                return

    def fetch_ids(self, ids):
        return self.inner.fetch_ids(ids)

    def fetch_pdf(self, arxiv_id, dest_dir):
        return self.inner.fetch_pdf(arxiv_id, dest_dir)
