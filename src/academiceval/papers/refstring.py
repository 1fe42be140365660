"""Free reference strings → `BibEntry`: the reader for a PDF's reference list and unarXive's `bib_entry_raw`.

A printed reference has no field boundaries, so the reader tries the shapes reference styles produce, in order,
and keeps the first whose author part reads as names (`bibliography.looks_like_names`) and whose title is not a
venue, URL or id:

1. quoted title (IEEE, ACM, APS): `A. Author and B. Author, “Title,” in Venue, 2020.`
2. author-year (ACL, APA, natbib): `Names. 2020. Title. Venue` / `Names (2020). Title. Venue` / `Names, 2020. Title`
3. colon after the authors (Springer LNCS): `Surname, I., Surname, I.: Title. Venue (2021)`
4. sentence segments (NeurIPS, ICML, JMLR): `Names. Title. Venue, 2020.`: the first segment is the authors when
   it reads as names, the next one that is not a venue is the title (a "?" or "!" inside it ends it)
5. initialled names without a full stop after them (Elsevier: `A. Smith, B. Doe, Title, J. Venue 3 (2020) 1.`)

Identifiers and the year are read from the whole string (`bibliography.find_arxiv_id`, `find_doi`, `find_year`).
The choice of a hand-written reader over the libraries on PyPI is measured in `benchmarks/reference_parsing.py`
(notes/papers.md, "Reference parsing").
"""

from __future__ import annotations

import re

from academiceval.papers.bibliography import (
    BibEntry,
    arxiv_id_of_doi,
    clean_title,
    find_arxiv_id,
    find_doi,
    find_year,
    looks_like_names,
    split_names,
)

_LEADING_LABEL = re.compile(r"^\s*(?:\[[^\]]{1,20}\]|\(\d{1,4}\)|\d{1,4}\.(?=\s))\s*")
# a full stop that ends a sentence-like segment (not an initial such as "J." or "et al.", not "vs.", "pp.")
_SEGMENT_END = re.compile(
    r"(?<![A-Z])(?<!\b[A-Z][a-z])(?<!\bvs)(?<!\bEd)(?<!\bed)(?<!\bpp)(?<!\bVol)(?<!\bvol)(?<!\bNo)"
    r"(?<!\bProc)(?<!\bInt)(?<!\bConf)(?<!\bJ)\.\s+(?=[A-Z0-9“\"'(\[]|arXiv|arxiv|https?:)"
)
_NOT_TITLE = re.compile(
    r"^(?:\[|In[:\s]|Proc(?:eedings|\.)|arXiv\b|CoRR\b|URL\b|https?://|www\.|ISSN|ISBN|doi\b|DOI\b|vol(?:ume)?\b|pp\.|"
    r"pages?\b|Technical report|Tech\. Rep|PhD thesis|Master'?s thesis|Available|Retrieved|Accessed|Online|"
    r"(?:19|20)\d{2}\b|Springer|Elsevier|IEEE\b|ACM\b|Association for|MIT Press|Cambridge University Press|"
    r"Journal of|Trans(?:actions|\.)|Advances in Neural|Preprint|Submitted|unpublished|In press)",
    re.I,
)
# volume and page after a journal name: "Nature, 381, 607", "Rev. B 97, 085153", "Physics Reports 429 (2006) 307"
_JOURNAL_CITATION = re.compile(
    r"(?:^|[\s,])\d{1,4}\s*(?:\(\d{1,4}\))?\s*,\s*[A-Z]?\d{2,}|\b\d{1,4}\s+\((?:19|20)\d{2}\)\s*\d"
)
_W = r"[A-Z\u00c0-\u024f][\w'’\-\u00c0-\u024f]+"
_PARTICLE = r"(?:(?:van|von|de|der|da|di|del|la|le|dos)\s)*"
_INIT = r"(?:[A-Z]\.\s?-?\s?)+"
_INIT_FIRST = re.compile(rf"{_INIT}(?:{_W}\s)?{_PARTICLE}{_W}(?:-{_W})?")  # "P. A. Estevez"
_SURNAME_FIRST = re.compile(rf"{_PARTICLE}{_W}(?:\s{_W})?,\s{_INIT}")  # "Abadi, D. J."
_NAME_SEP = re.compile(r"\s*(?:,\s*and\s+|,\s*&\s*|\s+and\s+|\s*&\s*|,\s*)", re.I)


def parse_reference_string(raw: str, key: str | None = None) -> BibEntry:
    """One printed reference → its fields (None where the string does not say)."""
    text = " ".join(raw.split())
    body = _LEADING_LABEL.sub("", text, count=1)
    doi = find_doi(body)
    arxiv_id = find_arxiv_id(body) or arxiv_id_of_doi(doi)
    authors, title, venue = _fields(body)
    return BibEntry(
        raw=text,
        key=key,
        title=clean_title(title),
        authors=authors,
        year=find_year(body),
        venue=_clean_venue(venue),
        arxiv_id=arxiv_id,
        doi=doi,
    )


def _fields(s: str) -> tuple[list[str], str | None, str | None]:
    for reader in (_quoted, _author_year, _colon, _segments, _initialled):
        got = reader(s)
        if got is not None and got[1] and _plausible_title(got[1]):
            return got
    # no title (physics and astronomy styles print none): keep the authors when the start reads as names
    m = re.match(r"^(?P<a>.{2,4000}?)(?:[\s,.]*\(?(?:19|20)\d{2}[a-z]?\)?[.,:]|,\s+(?=[A-Z][a-z]*\.?\s))", s)
    if m and looks_like_names(m.group("a")):
        return split_names(m.group("a")), None, None
    got = _initialled(s)
    return (got[0], None, None) if got else ([], None, None)


def _plausible_title(t: str) -> bool:
    """Not a venue, URL or id, and not a journal citation ("Phys. Rev. Lett. 124, 087401", "Nature, 381, 607")."""
    t = t.strip(' .,"“”')
    if (
        (len(t) < 8 and " " not in t)
        or re.fullmatch(r"et\.? al\.?", t)
        or not re.search(r"[^\W\d_]{2,}", t)
        or _NOT_TITLE.match(t)
        or _JOURNAL_CITATION.search(t)
    ):
        return False
    words = t.split()
    abbrev = sum(1 for w in words if re.fullmatch(r"[A-Z][a-z]{0,5}\.,?|\d[\d(),:–-]*|[A-Z]", w))
    return abbrev < 0.5 * len(words)


def _split_title(rest: str) -> tuple[str, str]:
    """The title is the first segment of what follows the authors; a "?"/"!" followed by a venue also ends it."""
    parts = _SEGMENT_END.split(rest, maxsplit=1)
    title = parts[0]
    venue = parts[1] if len(parts) > 1 else ""
    m = re.search(r"[?!]\s+(?=In[:\s]|Proc|arXiv|CoRR|[A-Z][a-z]+ (?:of|on|in)\b|\d)", title)
    if m:
        title, venue = title[: m.start() + 1], title[m.end() :] + (" " + venue if venue else "")
    return title, venue


def _quoted(s: str) -> tuple[list[str], str | None, str | None] | None:
    q = re.match(r"^(?P<a>[^“”\"]{2,2000}?)[,.:]?\s*[“\"](?P<t>[^”\"]{4,500})[”\"](?P<v>.*)$", s)
    if not q or not looks_like_names(q.group("a")):
        return None
    return split_names(q.group("a")), q.group("t"), q.group("v")


def _author_year(s: str) -> tuple[list[str], str | None, str | None] | None:
    m = re.match(r"^(?P<a>.{2,4000}?)[\s,.]*\(?(?:19|20)\d{2}[a-z]?\)?[.,:]\s+(?P<rest>.+)$", s)
    if not m or not looks_like_names(m.group("a")):
        return None
    title, venue = _split_title(m.group("rest"))
    return split_names(m.group("a")), title, venue


def _colon(s: str) -> tuple[list[str], str | None, str | None] | None:
    m = re.match(r"^(?P<a>[^:]{2,4000}?[A-Z]\.|[^:]{2,4000}?et al\.?):\s+(?P<rest>.+)$", s)
    if not m or not looks_like_names(m.group("a")):
        return None
    title, venue = _split_title(m.group("rest"))
    return split_names(m.group("a")), title, venue


def _segments(s: str) -> tuple[list[str], str | None, str | None] | None:
    cuts = [m.end() for m in _SEGMENT_END.finditer(s)]
    if not cuts:
        return None
    first = s[: cuts[0]].rstrip(". ")
    if not looks_like_names(first):
        return None
    for start in cuts:
        title, venue = _split_title(s[start:])
        if _plausible_title(title):
            return split_names(first), title, venue
    return None


def _initialled(s: str) -> tuple[list[str], str | None, str | None] | None:
    pos, names, comma_title = 0, [], False
    while True:
        m = _SURNAME_FIRST.match(s, pos) or _INIT_FIRST.match(s, pos)
        if not m:
            break
        names.append(m.group(0).strip(" ,"))
        pos = m.end()
        sep = _NAME_SEP.match(s, pos)
        if not sep:
            break
        comma_title = sep.group(0).strip() == ","
        pos = sep.end()
    if not names:
        return None
    rest = re.sub(r"^(?:et al\.?|and others)\s*", "", s[pos:]).lstrip(" .,:;")
    end = re.search(r",\s" if comma_title else r"\.\s", rest)
    title = rest[: end.start()] if end else rest
    venue = rest[end.end() :] if end else ""
    return [_flip(n) for n in names], title, venue


def _flip(name: str) -> str:
    """ "Abadi, D. J." → "D. J. Abadi"."""
    if "," in name:
        last, first = name.split(",", 1)
        return f"{first.strip()} {last.strip()}".strip()
    return name


def _clean_venue(v: str | None) -> str | None:
    if not v:
        return None
    v = re.sub(r"https?://\S+|doi:\s*\S+|\bURL\b|arXiv:\s*\S+", " ", v, flags=re.I)
    v = re.sub(r"^\s*In:?\s+", "", v)
    v = re.split(r",\s*(?:pp?\.|pages?\b|vol(?:ume)?\.?\b|\d)|\s\d+\s*\(|\(\s*(?:19|20)\d{2}", v, maxsplit=1)[0]
    v = re.sub(r"[,.]?\s*(?:19|20)\d{2}[a-z]?\s*\.?\s*$", "", v)
    v = " ".join(v.split()).strip(" .,;:")
    return v or None
