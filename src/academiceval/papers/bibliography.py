"""Bibliographies of every kind → structured entries: title, authors, year, venue, arXiv id, DOI.

A paper's references arrive in five shapes: free reference strings (a PDF's reference list, unarXive's
`bib_entry_raw`), block-structured entries where the style already separated authors, title and venue (LaTeX's
`\\newblock` in a `.bbl`, and ar5iv's markdown of it in SCALAR paper objects), and BibTeX fields. Each reader
turns its shape into a `BibEntry`; this module holds what they share — the entry model, identifier extraction,
title cleaning and the block reader — so every reader hands the resolver (`sources.resolve`) the same fields.

Readers: `papers.refstring.parse_reference_string` (free strings), `papers.bib_markdown.markdown_bibliography`
(SCALAR / ar5iv markdown), `papers.bib_latex.bibitems` and `papers.bib_latex.bibtex_entries` (LaTeX, BibTeX).
`notes/papers.md` ("Reference parsing") has the measured accuracy of each on a hand-checked sample.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, Field

from academiceval.store.paper_models import Reference

# arXiv ids as references print them: "arXiv:2303.08774", "arXiv preprint arXiv:2303.08774v2", "abs/1606.06565",
# "arxiv.org/abs/hep-th/9901001", "CoRR, abs/1409.0473", "[astro-ph/0603494]", DOI 10.48550/arXiv.2303.12712
_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ARCHIVES = (
    "astro-ph|hep-th|hep-ph|hep-ex|hep-lat|gr-qc|nucl-th|nucl-ex|quant-ph|cond-mat|math-ph|physics|math|cs|nlin|"
    "q-bio|q-fin|stat"
)
_OLD_ID = rf"(?:{_OLD_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}}"
_ARXIV_PATTERNS = (
    re.compile(rf"arxiv\.org/(?:abs|pdf)/\s*({_NEW_ID}|{_OLD_ID})", re.I),
    re.compile(rf"10\.48550/arxiv\.({_NEW_ID})", re.I),
    re.compile(
        rf"arxiv\s*(?:preprint|e-prints?)?\s*[:,]?\s*(?:arxiv\s*[:.]?\s*)?(?:abs/)?\s*({_NEW_ID}|{_OLD_ID})", re.I
    ),
    re.compile(rf"\babs/({_NEW_ID}|{_OLD_ID})"),
    re.compile(rf"\[({_OLD_ID})\]"),
    re.compile(rf"\beprint\s*[:=]?\s*\{{?({_NEW_ID}|{_OLD_ID})", re.I),
)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}|\\^`\[\]]+)", re.I)
_YEAR = re.compile(r"(?<![\d./:–-])((?:19|20)\d{2})[a-z]?(?!\d|[–-]\d)")  # not in "1929–1958" pages
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# what reference styles append to a title: ", 2023", ", 2023a", ", December 2022", " (2021)", "arXiv preprint ..."
_TITLE_TAIL = re.compile(
    rf"(?:[,.]?\s*(?:{_MONTHS}\s+)?(?:19|20)\d{{2}}[a-z]?|[,.]?\s*\((?:{_MONTHS}\s+)?(?:19|20)\d{{2}}[a-z]?\))\s*\.?\s*$"
)
_TITLE_VENUE_TAIL = re.compile(
    r"[,.]\s*(?:arXiv preprint|arXiv e-prints?|CoRR|In:?\s+(?:Proc|Proceedings|Advances)|Preprint\b|URL\b|https?://).*$",
    re.I,
)


class BibEntry(BaseModel):
    """One bibliography entry read into fields. `raw` is the entry as printed (one line), `key` the label, cite
    key or bib id that in-text citations use; every other field is None/empty when the entry does not say."""

    raw: str
    key: str | None = None
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    arxiv_id: str | None = None  # versionless
    doi: str | None = None  # lower-cased

    @property
    def first_author_surname(self) -> str | None:
        return surname(self.authors[0]) if self.authors else None

    def to_reference(self, index: int, label: str | None = None) -> Reference:
        return Reference(
            index=index,
            raw=self.raw,
            label=label if label is not None else self.key,
            authors=list(self.authors),
            year=self.year,
            title=self.title,
            arxiv_id=self.arxiv_id,
            venue=self.venue,
            doi=self.doi,
        )


# ---- identifiers ---------------------------------------------------------------------------------------
def find_arxiv_id(text: str) -> str | None:
    """The first arXiv id the text names (versionless), or None."""
    for pat in _ARXIV_PATTERNS:
        m = pat.search(text)
        if m:
            return m.group(1)
    return None


def find_doi(text: str) -> str | None:
    """The first DOI in the text, lower-cased, trailing punctuation dropped ("10.1038/nature14539")."""
    m = _DOI.search(text.replace("\u2010", "-"))
    if not m:
        return None
    doi = m.group(1).rstrip(".,;:)'’”")
    if doi.count("(") < doi.count(")"):
        doi = doi.rstrip(")")
    return doi.lower()


def arxiv_id_of_doi(doi: str | None) -> str | None:
    """arXiv's own DOIs (10.48550/arXiv.2303.12712) name an arXiv id."""
    if not doi:
        return None
    m = re.match(rf"10\.48550/arxiv\.({_NEW_ID})", doi, re.I)
    return m.group(1) if m else None


def find_year(text: str) -> int | None:
    """The first plausible publication year, ignoring digits inside arXiv ids and DOIs."""
    for pat in (_DOI, *_ARXIV_PATTERNS):
        text = pat.sub(" ", text)
    m = _YEAR.search(text)
    return int(m.group(1)) if m else None


# ---- titles ------------------------------------------------------------------------------------------
def clean_title(title: str | None) -> str | None:
    """A title as it should be shown: markdown/LaTeX markup and the reference style's debris removed.

    Removes a trailing year or month-and-year that the style glued to the title ("Toxigen: …, 2022",
    "evosax: JAX-based Evolution Strategies, December 2022", "… (2021)"), a trailing venue or URL that ran into
    it, enclosing quotes and the final full stop. A title that is only a year, a URL or punctuation is None.
    """
    if not title:
        return None
    t = unicodedata.normalize("NFC", title)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)  # markdown links
    t = re.sub(r"\\+\s*\n", " ", t).replace("\\\\", " ")  # ar5iv's forced line breaks
    t = re.sub(r"(?<!\w)[_*]+|[_*]+(?!\w)", "", t)  # markdown emphasis
    t = re.sub(r"[{}]", "", t)
    t = " ".join(t.split())
    for _ in range(3):
        before = t
        t = _TITLE_VENUE_TAIL.sub("", t)
        t = _TITLE_TAIL.sub("", t)
        t = t.strip(" .,;:").strip("\"“”‘’'").strip(" .,;:")
        if t == before:
            break
    if len(re.findall(r"[^\W\d_]", t)) < 2 or re.match(r"^(?:https?://|www\.)", t, re.I):
        return None
    return t


def norm_title(title: str) -> str:
    """Lower-case ASCII words only: what fuzzy title matching compares."""
    t = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().casefold()
    return " ".join(re.findall(r"[a-z0-9]+", t))


# ---- names -------------------------------------------------------------------------------------------
_NAME_SPLIT = re.compile(r",\s*and\s+|;\s*and\s+|\s+and\s+|\s*&\s*|;\s*|,\s*")
_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "la", "le", "du", "dos", "des", "ten"}


def surname(name: str) -> str:
    """Lower-case family name: "A. B. Smith" / "Smith, A. B." / "Abulhair Saparov" → "smith" / "saparov"."""
    name = name.strip().strip(",.")
    if "," in name:
        return _fold(name.split(",", 1)[0].split()[-1] if name.split(",", 1)[0].split() else name)
    parts = [
        p for p in name.split() if p and not re.fullmatch(r"(?:[A-Z]\.?-?)+", p) and p.lower() not in ("jr", "jr.")
    ]
    return _fold(parts[-1] if parts else name)


def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z\-']", "", s.casefold())


def split_names(s: str) -> list[str]:
    """ "A. Smith, B. Doe, and C. Lee" / "Smith, A., Doe, B. & Lee, C." / "A. Smith and B. Doe" → names,
    "Last, F." pairs flipped to "F. Last", "et al." and "others" dropped."""
    s = re.sub(r"\bet\s*al\.?|\bothers\b", "", s).strip(" ,.;")
    pieces = [p.strip() for p in _NAME_SPLIT.split(s) if p.strip()]
    names: list[str] = []
    for p in pieces:
        if names and re.fullmatch(r"(?:[A-Z][a-z]?\.?\s*-?\s*)+", p) and " " not in names[-1].strip():
            names[-1] = f"{p} {names[-1]}".strip()  # "Smith, J." → "J. Smith"
        else:
            names.append(p)
    return [n for n in names if any(c.isalpha() for c in n) and n.lower() not in {"and", "others"}][:200]


def looks_like_names(s: str) -> bool:
    """A stretch of text that reads as an author list: short capitalised pieces between separators."""
    s = re.sub(r"\bet\s*al\.?", "", s).strip(" ,.")
    if not s or len(s) > 4000:
        return False
    pieces = [p.strip() for p in _NAME_SPLIT.split(s) if p.strip()]
    if not pieces:
        return False
    ok = 0
    for p in pieces:
        words = p.split()
        if not 1 <= len(words) <= 5:
            continue
        caps = sum(1 for w in words if w[:1].isupper() or w.lower() in _PARTICLES)
        if caps == len(words) and not any(len(w) > 3 and w.isupper() and "." not in w for w in words[1:]):
            ok += 1
    return ok >= max(1, len(pieces) - len(pieces) // 8)  # one odd piece in eight ("Meta AI", a typo) is fine
