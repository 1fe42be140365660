"""`OpenAlexClient`: the OpenAlex works API over httpx, for resolving cited works that arXiv does not hold.

A reference names a journal article, a conference paper or a book at least as often as an arXiv preprint;
OpenAlex indexes all of them with title, authors, year, DOI and (often) the abstract. The client asks the two
questions the resolver needs, in batches where the API allows it:

- `works_by_dois(dois)` — `GET /works?filter=doi:A|B|…&per-page=N`: up to `doi_batch` DOIs OR-ed in one request;
- `search_title(title, year=)` — `GET /works?filter=title.search:…[,publication_year:Y]&per-page=N`: one title
  per request (OpenAlex does not OR search filters).

Politeness as OpenAlex asks: `mailto=` (the "polite pool"; from `ACADEMICEVAL_CONTACT`, like the arXiv client's
user agent), an optional `api_key=` (`OPENALEX_API_KEY`), at most `1 / min_interval` requests per second shared by
every client of the host, and the same retries as the arXiv client (both are `http.RetryingHttpClient`s):
tenacity retries 429 / 5xx / timeouts / transport errors with exponential backoff and jitter, at least as long as
`Retry-After` asks; what survives is a typed `SourceError`. The key never enters a cache key or a record
(`request_key` drops it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

import httpx
from pydantic import BaseModel, Field

from academiceval import __version__
from academiceval.papers.bibliography import arxiv_id_of_doi, find_arxiv_id
from academiceval.sources.errors import HTTPStatusError, TransientHTTPError
from academiceval.sources.http import RetryingHttpClient

DEFAULT_API = "https://api.openalex.org"
_SELECT = (
    "id,doi,title,display_name,publication_year,publication_date,ids,authorships,abstract_inverted_index,"
    "primary_location,locations,type"
)


class OpenAlexWork(BaseModel):
    """The fields of an OpenAlex work the resolver uses (the rest of the record is ignored)."""

    openalex_id: str  # "W2741809807"
    doi: str | None = None  # lower-cased, without https://doi.org/
    title: str = ""
    year: int | None = None
    published: date | None = None
    authors: list[str] = Field(default_factory=list)
    abstract: str = ""
    arxiv_id: str | None = None  # when a location is arXiv (landing page or arXiv's DOI)


def abstract_from_index(index: dict[str, list[int]] | None) -> str:
    """OpenAlex ships abstracts as an inverted index (word → positions); this puts the words back in order."""
    if not index:
        return ""
    slots: dict[int, str] = {}
    for word, positions in index.items():
        for p in positions or []:
            slots[int(p)] = word
    return " ".join(slots[i] for i in sorted(slots))


def _strip_doi(raw: object) -> str | None:
    s = str(raw or "").strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if s.lower().startswith(prefix):
            s = s[len(prefix) :]
    return s.lower() or None


def work_from_json(d: dict[str, Any]) -> OpenAlexWork:
    """One `results[]` item → `OpenAlexWork` (tolerant: every field may be missing or null)."""
    doi = _strip_doi(d.get("doi"))
    urls = [str(loc.get("landing_page_url") or "") for loc in (d.get("locations") or []) if isinstance(loc, dict)]
    prim = d.get("primary_location") if isinstance(d.get("primary_location"), dict) else {}
    urls.append(str(prim.get("landing_page_url") or ""))
    arxiv = arxiv_id_of_doi(doi) or next((a for u in urls if (a := find_arxiv_id(u))), None)
    pub = d.get("publication_date")
    try:
        published = date.fromisoformat(str(pub)) if pub else None
    except ValueError:
        published = None
    authors = [
        str((a.get("author") or {}).get("display_name") or a.get("raw_author_name") or "")
        for a in (d.get("authorships") or [])
        if isinstance(a, dict)
    ]
    return OpenAlexWork(
        openalex_id=str(d.get("id") or "").rsplit("/", 1)[-1],
        doi=doi,
        title=" ".join(str(d.get("title") or d.get("display_name") or "").split()),
        year=int(d["publication_year"]) if str(d.get("publication_year") or "").isdigit() else None,
        published=published,
        authors=[a for a in authors if a],
        abstract=abstract_from_index(d.get("abstract_inverted_index")),
        arxiv_id=arxiv,
    )


def _title_query(title: str) -> str:
    """A title as a `title.search:` value: the filter syntax reserves `,` `|` `:`; OpenAlex matches words."""
    return " ".join("".join(c if c.isalnum() else " " for c in title).split())


class OpenAlexClient(RetryingHttpClient):
    """Thread-safe; `requests_made` counts requests sent (retries included), `retries` the retries."""

    service = "OpenAlex"
    give_up_hint = "OpenAlex may be down or rate-limiting; run the same command again later (lookups are cached)"

    def __init__(
        self,
        base_url: str = DEFAULT_API,
        *,
        mailto: str | None = None,
        api_key: str | None = None,
        min_interval: float = 0.1,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        max_retry_after: float = 300.0,
        doi_batch: int = 50,
        per_page: int = 5,
        seed: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        mailto = mailto if mailto is not None else os.environ.get("ACADEMICEVAL_CONTACT", "").strip() or None
        agent = f"academiceval/{__version__} (research benchmark reference resolver" + (
            f"; mailto:{mailto})" if mailto else ")"
        )
        super().__init__(
            base_url.rstrip("/"),
            user_agent=agent,
            min_interval=min_interval,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
            seed=seed,
            transport=transport,
        )
        self.base_url = base_url.rstrip("/")
        self.mailto = mailto
        self._api_key = api_key if api_key is not None else os.environ.get("OPENALEX_API_KEY", "").strip() or None
        self.doi_batch = max(1, min(doi_batch, 100))  # OpenAlex ORs at most 100 values in one filter
        self.per_page = per_page

    def _get_once(self, params: dict[str, Any]) -> dict[str, Any]:
        full = dict(params)
        if self.mailto:
            full["mailto"] = self.mailto
        if self._api_key:
            full["api_key"] = self._api_key
        url = f"{self.base_url}/works"
        resp = self._send("GET", url, params=full)
        if resp.status_code >= 400:
            detail = resp.text[:300].replace(self._api_key or "\0", "***")
            raise HTTPStatusError(
                f"HTTP {resp.status_code}: {detail}",
                source=url,
                status=resp.status_code,
                hint="check the filter syntax (doi:, title.search:)",
            )
        try:
            data = resp.json()
        except ValueError as e:
            raise TransientHTTPError("response is not JSON", source=url, hint="retried") from e
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise TransientHTTPError("JSON without a results list", source=url, hint="retried")
        return data

    def _get(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._call(self._get_once, params)

    # ---- API ----------------------------------------------------------------------------------------------------
    def works_by_dois(self, dois: Iterable[str]) -> dict[str, OpenAlexWork]:
        """DOI (lower-case) → work, for the DOIs OpenAlex knows; `doi_batch` DOIs per request."""
        wanted = list(dict.fromkeys(d.lower() for d in dois if d))
        out: dict[str, OpenAlexWork] = {}
        for i in range(0, len(wanted), self.doi_batch):
            batch = [d for d in wanted[i : i + self.doi_batch] if "|" not in d and "," not in d]
            if not batch:
                continue
            data = self._get({"filter": "doi:" + "|".join(batch), "per-page": len(batch), "select": _SELECT})
            for item in data["results"]:
                w = work_from_json(item)
                if w.doi:
                    out[w.doi] = w
        return out

    def search_title(self, title: str, *, year: int | None = None) -> list[OpenAlexWork]:
        """Works whose title matches the words of `title` (and the year, when given), best first."""
        q = _title_query(title)
        if not q:
            return []
        flt = f"title.search:{q}" + (f",publication_year:{year - 1}-{year + 1}" if year else "")
        data = self._get({"filter": flt, "per-page": self.per_page, "select": _SELECT})
        return [work_from_json(item) for item in data["results"]]


def request_key(params: Sequence[tuple[str, str]]) -> str:
    """A request as the replay server and caches name it: sorted parameters without mailto/api_key."""
    kept = sorted((k, v) for k, v in params if k not in ("mailto", "api_key"))
    return "&".join(f"{k}={v}" for k, v in kept)
