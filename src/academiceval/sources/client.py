"""`ArxivClient`: the arXiv export API over httpx, polite and robust (the `MetadataSource` for `--source arxiv`
and `--api-url URL`).

Politeness and retries come from `http.RetryingHttpClient`: one pacer per host enforces `min_interval` seconds
(3 s by default, arXiv's terms) between the *starts* of any two requests, retries included, across threads;
tenacity retries 429 / 5xx / timeouts / connection errors with exponential backoff and jitter, waiting at least as
long as a `Retry-After` header asks. This module adds arXiv's quirks (an HTML error page instead of Atom, a
truncated body, an empty page although `totalResults` says there is more) as retryable errors. Whatever survives
the retries is a typed `SourceError`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from academiceval import __version__
from academiceval.sources.atom import looks_like_html, parse_feed
from academiceval.sources.base import FeedPage, SortBy, SortOrder, iter_pages
from academiceval.sources.errors import (
    AtomParseError,
    HTTPStatusError,
    InvalidArxivIdError,
    NotAPdfError,
    PdfTooLargeError,
    TransientHTTPError,
    UnknownIdError,
)
from academiceval.sources.http import RetryingHttpClient
from academiceval.sources.ids import parse_arxiv_id, pdf_filename, safe_child
from academiceval.sources.pdf import is_complete_pdf, looks_like_pdf
from academiceval.sources.query import id_batches
from academiceval.store.paper_models import PaperMeta

DEFAULT_API = "https://export.arxiv.org/api/query"
DEFAULT_PDF = "https://arxiv.org/pdf"


def default_user_agent() -> str:
    """Says who is calling and why; arXiv asks heavy users for a contact (set ACADEMICEVAL_CONTACT to an e-mail)."""
    contact = os.environ.get("ACADEMICEVAL_CONTACT", "").strip()
    tail = f"; mailto:{contact}" if contact else ""
    return f"academiceval/{__version__} (research benchmark metadata collector; 1 request per 3 s{tail})"


class ArxivClient(RetryingHttpClient):
    """One client per process and API (see module docstring). Thread-safe; `requests_made` counts API requests
    sent (retries included), `pdf_requests` PDF downloads; `warnings` keeps non-fatal oddities with reasons."""

    service = "arXiv"
    give_up_hint = "arXiv may be down or rate-limiting; run the same command again later (finished work is kept)"

    def __init__(
        self,
        base_url: str = DEFAULT_API,
        *,
        min_interval: float = 3.0,
        user_agent: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_base: float = 2.0,
        backoff_max: float = 120.0,
        max_retry_after: float = 300.0,
        pdf_base_url: str | None = None,
        max_pdf_bytes: int = 100 * 1024 * 1024,
        id_batch_size: int = 100,
        seed: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url,
            user_agent=user_agent or default_user_agent(),
            min_interval=min_interval,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
            seed=seed,
            transport=transport,
        )
        self.base_url = base_url
        self.pdf_base_url = (pdf_base_url or _default_pdf_base(base_url)).rstrip("/")
        self.max_pdf_bytes = max_pdf_bytes
        self.id_batch_size = id_batch_size
        self.pdf_requests = 0
        self.warnings: list[str] = []

    def _count_request(self, *, stream: bool) -> None:
        """API requests and PDF downloads (the only streamed requests) are counted apart."""
        if stream:
            self.pdf_requests += 1
        else:
            self.requests_made += 1

    # ---- API ------------------------------------------------------------------------------------------------
    def _query_once(self, params: dict[str, Any]) -> FeedPage:
        resp = self._send("GET", self.base_url, params=params)
        body = resp.content
        url = str(resp.request.url)
        if resp.status_code >= 400:
            try:
                page = parse_feed(body, source=url)
                detail = "; ".join(page.errors) or f"HTTP {resp.status_code}"
            except AtomParseError:
                detail = f"HTTP {resp.status_code}"
            raise HTTPStatusError(detail, source=url, status=resp.status_code, hint="check the query or ids")
        if looks_like_html(body):
            raise AtomParseError("HTML page instead of Atom", source=url, hint="arXiv error page; retried")
        page = parse_feed(body, source=url)
        start = int(params.get("start", 0))
        if not page.items and not page.errors and page.total_results > start and int(params["max_results"]) > 0:
            raise TransientHTTPError(
                f"empty page although totalResults={page.total_results} > start={start}",
                source=url,
                hint="known arXiv quirk; retried",
            )
        for m in page.items:
            m.source = "arxiv-api"
        return page

    def search(
        self,
        query: str,
        *,
        start: int = 0,
        max_results: int = 100,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> FeedPage:
        params = {
            "search_query": query,
            "start": start,
            "max_results": max_results,
            "sortBy": sort_by,
            "sortOrder": sort_order,
        }
        return self._call(self._query_once, params)

    def iter_search(
        self,
        query: str,
        *,
        page_size: int = 100,
        limit: int | None = None,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> Iterator[PaperMeta]:
        return iter_pages(
            self.search,
            query,
            page_size=page_size,
            limit=limit,
            sort_by=sort_by,
            sort_order=sort_order,
            on_errors=self.warnings.extend,
        )

    def fetch_ids(self, arxiv_ids: Sequence[str]) -> list[PaperMeta]:
        """Metadata for ids in `id_list` batches. Invalid ids are dropped with a warning (one bad id would make
        arXiv reject its whole batch); unknown ids are simply absent."""
        valid: list[str] = []
        for raw in arxiv_ids:
            try:
                base, v = parse_arxiv_id(raw)
                valid.append(f"{base}v{v}" if v else base)
            except InvalidArxivIdError as e:
                self.warnings.append(str(e))
        out: dict[str, PaperMeta] = {}
        for batch in id_batches(list(dict.fromkeys(valid)), self.id_batch_size):
            params = {"id_list": ",".join(batch), "start": 0, "max_results": len(batch)}
            page: FeedPage = self._call(self._query_once, params)
            self.warnings.extend(page.errors)
            for m in page.items:
                old = out.get(m.arxiv_id)
                if old is None or (m.version or 0) > (old.version or 0):
                    out[m.arxiv_id] = m
        return list(out.values())

    # ---- PDFs -----------------------------------------------------------------------------------------------
    def fetch_pdf(self, arxiv_id: str, dest_dir: Path) -> Path:
        """Download a PDF to dest_dir/<versionless id, '/'→'_'>.pdf atomically; skip when a complete file exists.

        Checks: HTTP content type and the `%PDF-` magic bytes (an HTML page instead of a PDF is refused), a size
        cap, and a path that cannot leave dest_dir whatever the id says.
        """
        base, version = parse_arxiv_id(arxiv_id)
        dest_dir = Path(dest_dir)
        dest_dir.mkdir(parents=True, exist_ok=True)
        target = safe_child(dest_dir, pdf_filename(base))
        if target.exists() and is_complete_pdf(target):
            return target
        url = f"{self.pdf_base_url}/{base}v{version}" if version else f"{self.pdf_base_url}/{base}"
        self._call(self._download_once, url, target)
        return target

    def _download_once(self, url: str, target: Path) -> None:
        tmp = target.with_name(f"{target.name}.{threading.get_ident()}.part")
        resp = self._send("GET", url, stream=True)
        try:
            if resp.status_code == 404:
                raise UnknownIdError("no PDF at this id (unknown or withdrawn)", source=url)
            if resp.status_code >= 400:
                raise HTTPStatusError(f"HTTP {resp.status_code}", source=url, status=resp.status_code)
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype.startswith("text/html"):
                raise NotAPdfError("got an HTML page instead of a PDF", source=url, hint="withdrawn or not rendered")
            declared = int(resp.headers.get("content-length") or 0)
            if declared > self.max_pdf_bytes:
                raise PdfTooLargeError(f"{declared} bytes > cap {self.max_pdf_bytes}", source=url)
            size = 0
            with tmp.open("wb") as f:
                for chunk in resp.iter_bytes(65536):
                    if size == 0 and not looks_like_pdf(chunk):
                        kind = "an HTML page" if looks_like_html(chunk) else "not a PDF"
                        raise NotAPdfError(f"body is {kind} (no %PDF- header)", source=url)
                    size += len(chunk)
                    if size > self.max_pdf_bytes:
                        raise PdfTooLargeError(f"more than {self.max_pdf_bytes} bytes", source=url)
                    f.write(chunk)
            if declared and size != declared:
                raise TransientHTTPError(f"truncated PDF: {size} of {declared} bytes", source=url)
            if size == 0:
                raise NotAPdfError("empty body", source=url)
            tmp.replace(target)
        except httpx.TransportError as e:
            raise TransientHTTPError(f"download interrupted: {e!r}", source=url) from e
        finally:
            resp.close()
            tmp.unlink(missing_ok=True)


def _default_pdf_base(api_url: str) -> str:
    """Live arXiv → arxiv.org/pdf; any other API URL (a mirror server) → the same host's /pdf."""
    if api_url == DEFAULT_API or "arxiv.org" in api_url:
        return DEFAULT_PDF
    u = httpx.URL(api_url)
    return str(u.copy_with(path="/pdf", query=None))
