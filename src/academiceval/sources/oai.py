"""Bulk metadata by OAI-PMH, the interface arXiv asks bulk harvesters to use (a monthly update's new papers in a
few hundred requests instead of thousands of query pages).

Built on `oaipmh-scythe` (the maintained successor of `sickle`): it speaks the protocol (verbs, resumption
tokens, OAI `<error>` codes as exceptions) and retries HTTP 503 after `Retry-After`. Wrapped here for what it
does not do: a `Retry-After` in fractions of a second or as an HTTP date (it calls `int()` on the header) and a
cap on it; the shared ≥3 s pacing of every request to one host (`http.shared_pacer`); a truncated 200
response, which its XML parser (`recover=True`) would silently accept as a shorter page — here it is detected
(no closing `</OAI-PMH>`) and retried; `badResumptionToken` (an expired token) restarts the list from the last
datestamp seen, skipping records already yielded; `noRecordsMatch` is an empty harvest, not an error.

Metadata format `arXiv` (see `oai_server.py` for why not `oai_dc`): id, v1 date (`created`), `updated`,
authors (keyname/forenames/suffix), title, categories, comments, journal-ref, doi, abstract. It carries no
version number, so a harvested record merges with a mirror record like a version-less one (`merge_records`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import httpx2
from oaipmh_scythe import RetryConfig, Scythe
from oaipmh_scythe.config import HTTPConfig
from oaipmh_scythe.exceptions import BadResumptionToken, NoRecordsMatch, OAIPMHException
from oaipmh_scythe.response import OAIResponse

from academiceval.sources.client import default_user_agent
from academiceval.sources.errors import (
    InvalidArxivIdError,
    RecordParseError,
    RetriesExhaustedError,
    SourceError,
    SourceRequestError,
)
from academiceval.sources.http import retry_after_seconds, shared_pacer
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.records import MirrorRecord
from academiceval.sources.names import make_author
from academiceval.store.paper_models import PaperMeta

ARXIV_OAI_URL = "https://export.arxiv.org/oai2"
ARXIV_NS = "{http://arxiv.org/OAI/arXiv/}"
OAI_SOURCE = "arxiv-oai"


@dataclass
class HarvestStats:
    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0  # 503/5xx answered with a wait, transport errors, truncated bodies
    truncated: int = 0  # 200 with a complete-looking but cut body (no closing tag): retried
    transport_errors: int = 0  # connection dropped, body shorter than Content-Length, timeouts: retried
    stalled: int = 0  # bodies not complete within the body deadline (a trickling server): retried
    restarts: int = 0  # after badResumptionToken
    records: int = 0
    deleted: int = 0
    errors: list[RecordParseError] = field(default_factory=list)  # records that could not be read (located)


class _Scythe(Scythe):
    """Scythe with pacing, Retry-After in any form (capped), and truncated bodies turned into retried errors."""

    def __init__(self, endpoint: str, *, harvester: OaiHarvester, **kw: Any) -> None:
        super().__init__(endpoint, **kw)
        self._h = harvester

    def _request(self, query: dict[str, str]) -> httpx2.Response:
        self._h.pacer.wait()
        self._h.stats.requests += 1
        try:
            resp = self._bounded_get(query)
        except httpx2.TransportError:
            self._h.stats.retries += 1
            self._h.stats.transport_errors += 1
            raise
        if resp.status_code in self.retry_status_codes:
            self._h.stats.retries += 1
        elif resp.status_code == 200 and not resp.content.rstrip().endswith(b"</OAI-PMH>"):
            self._h.stats.retries += 1
            self._h.stats.truncated += 1
            raise httpx2.ReadError("truncated OAI-PMH response (no closing </OAI-PMH>)", request=resp.request)
        return resp

    def _bounded_get(self, query: dict[str, str]) -> httpx2.Response:
        """GET with a byte budget and a deadline for the whole body: a server that trickles bytes (each read
        within the read timeout) or sends an endless body is cut off — the deadline as a retried transport
        error, the budget as an error (a bigger answer will not come smaller on retry)."""
        h = self._h
        deadline = time.monotonic() + h.body_deadline
        with self.client.stream("GET", self.endpoint, params=query) as resp:
            chunks, size = [], 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > h.max_body_bytes:
                    raise SourceError(
                        f"OAI-PMH response larger than {h.max_body_bytes / 1e6:g} MB (an endless body?)",
                        source=self.endpoint,
                        hint="check the endpoint URL; raise max_body_bytes only for a server known to send such pages",
                    )
                if time.monotonic() > deadline:
                    h.stats.stalled += 1
                    raise httpx2.ReadTimeout(
                        f"OAI-PMH response body not complete after {h.body_deadline:g} s ({size} bytes)",
                        request=resp.request,
                    )
                chunks.append(chunk)
        return httpx2.Response(resp.status_code, headers=resp.headers, content=b"".join(chunks), request=resp.request)

    def harvest(self, query: dict[str, str]) -> OAIResponse:
        """As Scythe's, but a non-200 answer left after the retries is an HTTP error (Scythe would try to read a
        plain-text 503 page as XML and fail with an AttributeError), and a resumption token the server already
        gave in this list is an error: a server that repeats its token would otherwise be harvested forever."""
        token = query.get("resumptionToken")
        if token is not None:
            if token in self._h.tokens_seen:
                raise SourceError(
                    f"the OAI-PMH server repeated the resumptionToken {token[:60]!r} (the list would never end)",
                    source=self.endpoint,
                    hint="the server is misbehaving; harvest again later or a shorter window (--from/--until)",
                )
            self._h.tokens_seen.add(token)
        resp = self._request_with_retry(query)
        if resp.status_code != 200:
            raise httpx2.HTTPStatusError(f"HTTP {resp.status_code}", request=resp.request, response=resp)
        out = OAIResponse(resp, params=query)
        out.raise_for_oaipmh_error()
        return out

    def _get_retry_after(self, http_response: httpx2.Response) -> float:
        wait = retry_after_seconds(http_response.headers)
        wait = self.default_retry_after if wait is None else min(wait, self._h.max_retry_after)
        self._h.pacer.push_back(wait)
        return wait


class OaiHarvester:
    """`iter_records(from_, until, set_)` → `MirrorRecord`s of an OAI-PMH ListRecords harvest (arXiv format)."""

    def __init__(
        self,
        base_url: str = ARXIV_OAI_URL,
        *,
        min_interval: float = 3.0,
        max_retries: int = 5,
        default_retry_after: float = 30.0,
        max_retry_after: float = 300.0,
        transport_backoff: float = 1.0,
        max_restarts: int = 3,
        timeout: float = 60.0,
        body_deadline: float = 300.0,
        max_body_bytes: int = 200_000_000,
        user_agent: str | None = None,
    ) -> None:
        """`timeout`: per connect/read; `body_deadline`: seconds for one whole response body; `max_body_bytes`:
        the largest body accepted (an arXiv page of 1,000 records is ≈ 2.2 MB)."""
        self.base_url = base_url
        self.body_deadline, self.max_body_bytes = body_deadline, max_body_bytes
        self.tokens_seen: set[str] = set()  # resumption tokens of the current list (a repeat is an error)
        self.pacer = shared_pacer(base_url, min_interval)
        self.max_retry_after = max_retry_after
        self.max_restarts = max_restarts
        self.stats = HarvestStats()
        self._scythe = _Scythe(
            base_url,
            harvester=self,
            http_config=HTTPConfig(timeout=timeout, user_agent=user_agent or default_user_agent()),
            retry_config=RetryConfig(
                max_retries=max_retries,
                retry_status_codes=(500, 502, 503, 504),
                default_retry_after=default_retry_after,
                retry_on_transport_error=True,
                initial_backoff=transport_backoff,
            ),
        )

    def close(self) -> None:
        self._scythe.close()

    def __enter__(self) -> OaiHarvester:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def iter_records(
        self, from_: date | str | None = None, until: date | str | None = None, set_: str | None = None
    ) -> Iterator[MirrorRecord]:
        """Every record whose datestamp is in [from_, until] (and in the set), oldest datestamp first."""
        start = _day(from_)
        last_day: str | None = None
        seen_on_last_day: set[str] = set()
        restarts = 0
        while True:
            args: dict[str, Any] = {"metadata_prefix": "arXiv", "from_": start, "until": _day(until), "set_": set_}
            self.tokens_seen = set()  # a new list (or a restarted one): its own tokens
            try:
                for rec in self._scythe.list_records(**args):
                    stamp = rec.header.datestamp[:10]
                    if stamp == last_day and rec.header.identifier in seen_on_last_day:
                        continue  # already yielded before a restart
                    if stamp != last_day:
                        last_day, seen_on_last_day = stamp, set()
                    seen_on_last_day.add(rec.header.identifier)
                    if rec.deleted:
                        self.stats.deleted += 1
                        continue
                    item = parse_arxiv_record(rec.xml, where=f"{self.base_url}#{rec.header.identifier}")
                    if isinstance(item, RecordParseError):
                        self.stats.errors.append(item)
                        continue
                    self.stats.records += 1
                    yield item
                return
            except NoRecordsMatch:
                return
            except BadResumptionToken as e:
                restarts += 1
                self.stats.restarts += 1
                if restarts > self.max_restarts:
                    raise SourceError(
                        f"OAI-PMH badResumptionToken {restarts} times: {e}",
                        source=self.base_url,
                        hint="the server keeps expiring the list; harvest a shorter window",
                    ) from e
                start = last_day or start  # the list again from the last datestamp seen
            except OAIPMHException as e:
                code = type(e).__name__
                raise SourceRequestError(f"OAI-PMH error {code}: {e}", source=self.base_url) from e
            except (httpx2.HTTPError, httpx2.TransportError) as e:
                raise RetriesExhaustedError(
                    f"OAI-PMH request failed after retries: {e}", source=self.base_url, hint="try again later"
                ) from e


def _day(d: date | str | None) -> str | None:
    if d is None:
        return None
    return d.isoformat() if isinstance(d, date) else str(d)


def _text(el: Any, tag: str) -> str:
    found = el.find(f"{ARXIV_NS}{tag}")
    return " ".join((found.text or "").split()) if found is not None else ""


def parse_arxiv_record(record_xml: Any, *, where: str = "") -> MirrorRecord | RecordParseError:
    """One OAI `<record>` (lxml element) in the `arXiv` format → `MirrorRecord` (or a located error)."""
    md = record_xml.find(f".//{ARXIV_NS}arXiv")
    if md is None:
        return RecordParseError("record has no arXiv-format metadata", source=where, hint="use metadataPrefix=arXiv")
    try:
        arxiv_id, version = parse_arxiv_id(_text(md, "id"))
        created = date.fromisoformat(_text(md, "created"))
        upd_raw = _text(md, "updated")
        updated = date.fromisoformat(upd_raw) if upd_raw else created
    except (InvalidArxivIdError, ValueError) as e:
        return RecordParseError(f"unreadable id or date: {e}".splitlines()[0], source=where)
    title = _text(md, "title")
    if not title:
        return RecordParseError("no title", source=where)
    authors = []
    for a in md.iter(f"{ARXIV_NS}author"):
        parts = [_text(a, "forenames"), _text(a, "keyname"), _text(a, "suffix")]
        name = " ".join(p for p in parts if p)
        if name:
            authors.append(make_author(name))
    cats = _text(md, "categories").split()
    meta = PaperMeta(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=_text(md, "abstract"),
        authors=authors,
        primary_category=cats[0] if cats else None,
        categories=cats,
        published=created,
        updated=updated,
        doi=_text(md, "doi") or None,
        journal_ref=_text(md, "journal-ref") or None,
        comment=_text(md, "comments") or None,
        source=OAI_SOURCE,
    )
    at = datetime.combine(created, datetime.min.time(), tzinfo=UTC)
    up = datetime.combine(updated, datetime.min.time(), tzinfo=UTC)
    return MirrorRecord(meta, at, up, path=where, fmt="oai")


def harvest_into(
    index: Any, harvester: OaiHarvester, from_: date | str | None, until: date | str | None, set_: str | None = None,
    *, batch: int = 1000,
) -> tuple[int, float]:  # fmt: skip
    """Harvest into a `DiskIndex` (records merge with the mirror's); returns (records stored, seconds)."""
    t0 = time.perf_counter()
    pending: list[MirrorRecord] = []
    n = 0
    for rec in harvester.iter_records(from_, until, set_):
        pending.append(rec)
        if len(pending) >= batch:
            n += index.add(pending)
            pending = []
    n += index.add(pending)
    return n, time.perf_counter() - t0
