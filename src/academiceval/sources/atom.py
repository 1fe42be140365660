"""arXiv Atom feeds: a safe reader (defusedxml) into `FeedPage`, and a writer shaped like arXiv's (for the server).

The reader accepts both generations of arXiv's API output found in the wild (the 2016 feed that declares the
`arxiv:` and `opensearch:` namespaces on each element, and the current one that declares them on `<feed>`).
A feed that is not XML at all (truncated body, HTML error page) raises `AtomParseError`, which the client
retries; a single unreadable entry is recorded in `FeedPage.errors` and the rest of the page is kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from xml.etree.ElementTree import Element, ParseError, SubElement, tostring

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from academiceval.sources.base import FeedPage
from academiceval.sources.errors import AtomParseError, InvalidArxivIdError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.names import make_author
from academiceval.store.paper_models import PaperMeta

ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
_A, _X, _O = f"{{{ATOM}}}", f"{{{ARXIV}}}", f"{{{OPENSEARCH}}}"


def _text(el: Element | None) -> str:
    return " ".join((el.text or "").split()) if el is not None else ""


def _date(s: str) -> date:
    return datetime.fromisoformat(s.strip().replace("Z", "+00:00")).date()


def looks_like_html(body: bytes | str) -> bool:
    head = (body[:512].decode("utf-8", "replace") if isinstance(body, bytes) else body[:512]).lstrip().lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head[:200]


def parse_feed(body: bytes | str, *, source: str = "arxiv-api") -> FeedPage:
    """One API response → FeedPage. Raises AtomParseError when the body is not an Atom feed."""
    if not body or not body.strip():
        raise AtomParseError("empty response body", source=source, hint="arXiv sometimes answers empty; retry")
    if looks_like_html(body):
        raise AtomParseError("HTML page instead of an Atom feed", source=source, hint="arXiv error page; retry later")
    try:
        root = SafeET.fromstring(body.encode("utf-8") if isinstance(body, str) else body)
    except (ParseError, DefusedXmlException, ValueError, LookupError) as e:  # LookupError: bogus encoding=
        raise AtomParseError(f"malformed or truncated Atom: {e}", source=source, hint="retry the request") from e
    if root.tag != f"{_A}feed":
        raise AtomParseError(f"root element is {root.tag!r}, not an Atom feed", source=source)
    try:
        total = int(_text(root.find(f"{_O}totalResults")) or 0)
        start = int(_text(root.find(f"{_O}startIndex")) or 0)
    except ValueError as e:
        raise AtomParseError(f"bad opensearch counters: {e}", source=source) from e
    page = FeedPage(total_results=total, start=start)
    for i, entry in enumerate(root.findall(f"{_A}entry")):
        eid = _text(entry.find(f"{_A}id"))
        if "/api/errors" in eid:  # arXiv reports query errors as a pseudo-entry
            page.errors.append(f"arXiv API error: {_text(entry.find(f'{_A}summary')) or eid}")
            page.total_results = max(0, page.total_results - 1)
            continue
        try:
            page.items.append(parse_entry(entry, source=source))
        except (InvalidArxivIdError, ValueError, TypeError) as e:
            page.errors.append(f"entry {start + i} ({eid[:80] or 'no id'}): {e}")
    return page


def parse_entry(entry: Element, *, source: str = "arxiv-api") -> PaperMeta:
    eid = _text(entry.find(f"{_A}id"))
    if not eid:
        raise ValueError("entry without <id>")
    arxiv_id, version = parse_arxiv_id(eid)
    title = _text(entry.find(f"{_A}title"))
    if not title:
        raise ValueError("entry without a title")
    published_s = _text(entry.find(f"{_A}published"))
    updated_s = _text(entry.find(f"{_A}updated"))
    if not published_s and not updated_s:
        raise ValueError("entry without <published> date")
    published = _date(published_s or updated_s)
    authors = []
    for a in entry.findall(f"{_A}author"):
        name = _text(a.find(f"{_A}name"))
        if name:
            authors.append(make_author(name, [_text(x) for x in a.findall(f"{_X}affiliation")]))
    cats = [c.get("term", "").strip() for c in entry.findall(f"{_A}category") if c.get("term", "").strip()]
    prim_el = entry.find(f"{_X}primary_category")
    primary = (prim_el.get("term") or "").strip() if prim_el is not None else ""
    primary = primary or (cats[0] if cats else "")
    if primary and primary not in cats:
        cats.insert(0, primary)
    pdf_url = None
    doi = _text(entry.find(f"{_X}doi")) or None
    for link in entry.findall(f"{_A}link"):
        if link.get("title") == "pdf" or link.get("type") == "application/pdf":
            pdf_url = link.get("href")
        elif link.get("title") == "doi" and not doi:
            doi = re.sub(r"^https?://(dx\.)?doi\.org/", "", link.get("href", "")) or None
    return PaperMeta(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=" ".join(_text(entry.find(f"{_A}summary")).split()),
        authors=authors,
        primary_category=primary or None,
        categories=cats,
        published=published,
        updated=_date(updated_s) if updated_s else None,
        doi=doi,
        journal_ref=_text(entry.find(f"{_X}journal_ref")) or None,
        comment=_text(entry.find(f"{_X}comment")) or None,
        pdf_url=pdf_url,
        source=source,
    )


# ---- writer -----------------------------------------------------------------------------------------------------
def _stamp(d: date | datetime | None) -> str:
    if d is None:
        return ""
    if isinstance(d, datetime):
        d = d.astimezone(UTC) if d.tzinfo else d
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{d.isoformat()}T00:00:00Z"


def write_feed(
    items: Sequence[PaperMeta],
    *,
    total_results: int,
    start: int,
    items_per_page: int,
    query_title: str = "",
    self_url: str = "",
    base_url: str = "https://arxiv.org",
    published_at: dict[str, datetime] | None = None,
    updated_at: dict[str, datetime] | None = None,
    errors: Sequence[str] = (),
) -> bytes:
    """An Atom feed as arXiv's API writes it (namespaces on <feed>, opensearch counters, one <entry> per paper).

    `published_at`/`updated_at` give full timestamps where the mirror knows them (dates otherwise).
    """
    feed = Element("feed", {"xmlns": ATOM, "xmlns:opensearch": OPENSEARCH, "xmlns:arxiv": ARXIV})
    now = datetime.now(UTC)
    SubElement(feed, "id").text = f"{base_url}/api/mirror"
    SubElement(feed, "title").text = f"arXiv Query: {query_title}"
    SubElement(feed, "updated").text = _stamp(now)
    if self_url:
        SubElement(feed, "link", {"href": self_url, "type": "application/atom+xml"})
    SubElement(feed, "opensearch:itemsPerPage").text = str(items_per_page)
    SubElement(feed, "opensearch:totalResults").text = str(total_results)
    SubElement(feed, "opensearch:startIndex").text = str(start)
    for msg in errors:
        e = SubElement(feed, "entry")
        SubElement(e, "id").text = f"{base_url}/api/errors#{re.sub(r'[^a-z0-9]+', '_', msg.lower())[:60]}"
        SubElement(e, "title").text = "Error"
        SubElement(e, "summary").text = msg
        SubElement(SubElement(e, "author"), "name").text = "arXiv api core"
    for m in items:
        vid = f"{m.arxiv_id}v{m.version}" if m.version else m.arxiv_id
        e = SubElement(feed, "entry")
        SubElement(e, "id").text = f"http://arxiv.org/abs/{vid}"
        SubElement(e, "title").text = m.title
        up = (updated_at or {}).get(m.arxiv_id) or m.updated or m.published
        SubElement(e, "updated").text = _stamp(up)
        SubElement(e, "link", {"href": f"{base_url}/abs/{vid}", "rel": "alternate", "type": "text/html"})
        pdf_attrs = {"href": f"{base_url}/pdf/{vid}", "rel": "related", "type": "application/pdf", "title": "pdf"}
        SubElement(e, "link", pdf_attrs)
        if m.doi:
            SubElement(e, "link", {"href": f"https://doi.org/{m.doi}", "rel": "related", "title": "doi"})
        SubElement(e, "summary").text = m.abstract
        for c in m.categories or ([m.primary_category] if m.primary_category else []):
            SubElement(e, "category", {"term": c, "scheme": ARXIV})
        SubElement(e, "published").text = _stamp((published_at or {}).get(m.arxiv_id) or m.published)
        if m.comment:
            SubElement(e, "arxiv:comment").text = m.comment
        if m.primary_category:
            SubElement(e, "arxiv:primary_category", {"term": m.primary_category})
        if m.journal_ref:
            SubElement(e, "arxiv:journal_ref").text = m.journal_ref
        if m.doi:
            SubElement(e, "arxiv:doi").text = m.doi
        for a in m.authors:
            ae = SubElement(e, "author")
            SubElement(ae, "name").text = a.name
            for aff in a.affiliations:
                SubElement(ae, "arxiv:affiliation").text = aff
    return b"<?xml version='1.0' encoding='UTF-8'?>\n" + tostring(feed, encoding="utf-8", xml_declaration=False)
