"""Citation faithfulness of a generated Related Work section (issues 15, 25): `citation-precision`,
`citation-recall`, `citation-unlisted`, `reference-coverage`.

The Related Work prompt lists the papers the model may cite, numbered `[Cited paper 1] … [Cited paper N]`
(rounds/templates/_blocks.j2 `citation_block`, in the sample's `citations` order), and asks the model to cite
them by number. From the generated section we extract every citation it makes:

- numeric marks: `[3]`, `[2, 5-7]`, `[Cited paper 4]`, and "cited paper 4" in running text; a number in 1..N
  is that list item, any other number is a citation to a work *not in the list*;
- author-year strings: `Smith et al. (2020)`, `(Smith and Jones, 2019; Lee, 2021)`, `Smith, 2020` — the list
  shows each work's surnames and year (issue 25), so one whose surname is the first author's of a listed work of
  that year cites that work; any other is a citation to a work not in the list (the prompt asks for numbers);
- titles: a listed paper's title written out (normalised words, ≥ 4 words) cites that item; a quoted title-like
  string (≥ 4 words) that matches no listed title at ≥ 0.9 similarity is a citation to an unlisted work.

Then, over distinct citations:
- `citation-precision` = listed items cited / (listed items cited + unlisted citations): 1.0 when every
  citation points into the given list; undefined (no value, not an error) for a section that cites nothing;
- `citation-recall` = cited items among the papers the *real* section cites / those papers. The real section's
  citations are the list items that are not distractors: the round builds the list from the paper's in-text
  citations inside its related-work section, linked to its references (rounds/citations.py), padded with
  distractors. Undefined when the list has no real citations;
- `citation-unlisted` = the count of distinct unlisted citations (0 is best);
- `reference-coverage` = the share of the real section's in-text citations (`CitedPaper.mentions`: how often it
  cites each listed work) whose work the generated section cites — recall weighted by how much the real section
  leans on each work, DeepScholar-Bench's reference coverage with mention counts standing in for its "important
  references"; no judge. Undefined for a list without mention counts (rounds built before issue 25).

Each value is stored as `score` (the primary value), with the counts and what was extracted in `details`.
Only Related Work samples are scored; other tasks are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from academiceval.scores.registry import Metric, register
from academiceval.scores.scorer import Needs, SampleScorer, Scored, ScoreItem
from academiceval.store.models import RunRecord
from academiceval.store.tasks import find_spec

VERSION = "1"
TITLE_MATCH = 0.9
MIN_TITLE_WORDS = 4
MAX_RANGE = 50  # "[3-9]" expands; "[1-2000]" is not a range of citations

_BRACKET = re.compile(r"\[([^\[\]\n]{1,120})\]")
_NUM_ITEM = re.compile(r"^(?:cited\s+papers?\s*|papers?\s*|refs?\.?\s*)?(\d{1,4})(?:\s*[-–—]\s*(\d{1,4}))?$", re.I)
_RUNNING = re.compile(r"\bcited\s+paper\s+(\d{1,4})\b", re.I)
_SURNAME = r"[A-Z][A-Za-z'’\-]+(?:\s+(?:de|van|von|der|den|del|da|di|le|la)\s+[A-Z][A-Za-z'’\-]+)?"
_YEAR = r"((?:19|20)\d{2})[a-z]?\b"
_AUTHOR_YEAR = (
    # Smith et al. 2020 / Smith et al., 2020 / Smith et al. (2020)
    re.compile(rf"\b({_SURNAME})\s+et\s+al\.?,?\s*\(?\s*{_YEAR}"),
    # Smith (2020) / Smith and Jones (2020)
    re.compile(rf"\b({_SURNAME})(?:\s+(?:and|&)\s+{_SURNAME})?\s*\(\s*{_YEAR}"),
    # (Smith, 2020) / (Smith and Jones, 2020; Lee, 2021)
    re.compile(rf"[(;]\s*({_SURNAME})(?:\s+(?:and|&)\s+{_SURNAME})?,\s*{_YEAR}"),
)
_NOT_NAMES_TEXT = """
In On At By For From Since Until Before After During Of The This That These Those We Our Table Figure Fig Section
Eq Equation January February March April May June July August September October November December Jan Feb Mar Apr
Jun Jul Aug Sep Sept Oct Nov Dec Spring Summer Fall Autumn Winter Version Year Years Also And Or To As Is Was Were
Are Be Been Through Between Early Late Mid
"""
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]{12,240})[\"“”]")


def norm_words(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def _similar(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b) / 100.0


@dataclass
class Extracted:
    """What one generated section cites."""

    listed: set[int] = field(default_factory=set)  # 1-based list numbers cited
    unlisted: set[str] = field(default_factory=set)  # keys of citations to works not in the list
    numeric: int = 0  # numeric marks seen (items, incl. expanded ranges)
    author_year: int = 0  # distinct author-year citations
    titles: int = 0  # listed titles written out + unlisted quoted titles

    @property
    def total(self) -> int:
        return len(self.listed) + len(self.unlisted)


def _numbers(content: str) -> list[int] | None:
    """The numbers of a bracket's content when it is a citation group ("2, 5-7", "Cited paper 3"), else None."""
    out: list[int] = []
    for part in re.split(r"[,;]", content):
        part = part.strip()
        if not part:
            continue
        m = _NUM_ITEM.match(part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo or hi - lo > MAX_RANGE:
            out.append(lo)
            if m.group(2):
                out.append(hi)
        else:
            out.extend(range(lo, hi + 1))
    return out or None


def _first_surname(authors: Sequence[str]) -> str | None:
    """The first author's surname, case-folded ("vaswani" of "Ashish Vaswani", "A. Vaswani", "Vaswani, A.")."""
    if not authors:
        return None
    name = " ".join(authors[0].split())
    if "," in name:
        return name.split(",", 1)[0].strip().casefold() or None
    words = [w for w in name.split() if w.strip(".").casefold() not in ("jr", "sr", "ii", "iii")]
    return words[-1].casefold() if words else None


def extract_citations(
    text: str, titles: Sequence[str], bylines: Sequence[tuple[Sequence[str], int | None]] | None = None
) -> Extracted:
    """Citations made by `text`, mapped to the 1-based list whose titles are `titles` and, when given, whose
    (authors, year) are `bylines` (an author-year citation of a listed work's first author and year cites it)."""
    n = len(titles)
    by_key: dict[str, set[int]] = {}
    for i, (authors, year) in enumerate(bylines or (), 1):
        surname = _first_surname(authors)
        if surname and year:
            by_key.setdefault(f"{surname}:{year}", set()).add(i)
    ex = Extracted()

    def number(k: int) -> None:
        ex.numeric += 1
        if 1 <= k <= n:
            ex.listed.add(k)
        else:
            ex.unlisted.add(f"#{k}")

    rest = text
    for m in _BRACKET.finditer(text):
        nums = _numbers(m.group(1))
        if nums is None:
            continue
        for k in nums:
            number(k)
        rest = rest.replace(m.group(0), " ", 1)  # a year inside "[2020]"-style marks is not author-year
    for m in _RUNNING.finditer(rest):
        number(int(m.group(1)))
    for t in titles:  # a listed title written out may itself hold "Name (2020)"-like strings
        words = re.findall(r"\w+", t)
        if len(words) >= 2:
            rest = re.sub(r"\W+".join(map(re.escape, words)), " ", rest, flags=re.I)
    ay: set[str] = set()
    for pattern in _AUTHOR_YEAR:
        for m in pattern.finditer(rest):
            name, year = m.group(1), m.group(2)
            if name not in _NOT_NAMES:
                ay.add(f"{name.casefold()}:{year}")
    ex.author_year = len(ay)
    for k in ay:
        if k in by_key:
            ex.listed |= by_key[k]
        else:
            ex.unlisted.add(f"ay:{k}")
    # titles written out
    ntext = f" {norm_words(text)} "
    norm_titles = [norm_words(t) for t in titles]
    for i, t in enumerate(norm_titles, 1):
        if len(t.split()) >= MIN_TITLE_WORDS and f" {t} " in ntext:
            ex.listed.add(i)
            ex.titles += 1
    for m in _QUOTED.finditer(text):  # quoted titles: a listed one (near-exact) or a work not in the list
        q = norm_words(m.group(1))
        if len(q.split()) < MIN_TITLE_WORDS:
            continue
        hits = [i for i, t in enumerate(norm_titles, 1) if t and _similar(q, t) >= TITLE_MATCH]
        if hits:
            ex.listed.update(hits)
        else:
            ex.unlisted.add(f"title:{q}")
        ex.titles += 1
    return ex


@dataclass
class CitationScores:
    precision: float | None
    recall: float | None
    unlisted: int
    details: dict[str, Any]
    coverage: float | None = None  # reference coverage (mention-weighted recall)


def citation_scores(text: str, citations: Sequence[Any]) -> CitationScores:
    """Precision, recall, unlisted count and reference coverage of `text` against a sample's citation list
    (`CitedPaper`s)."""
    titles = [c.title for c in citations]
    true = {i for i, c in enumerate(citations, 1) if not getattr(c, "distractor", False)}
    bylines = [(list(getattr(c, "authors", []) or []), getattr(c, "year", None)) for c in citations]
    ex = extract_citations(text, titles, bylines)
    precision = len(ex.listed) / ex.total if ex.total else None
    recall = len(ex.listed & true) / len(true) if true else None
    weight = {i: int(getattr(c, "mentions", 0) or 0) for i, c in enumerate(citations, 1) if i in true}
    total = sum(weight.values())
    coverage = sum(w for i, w in weight.items() if i in ex.listed) / total if total else None
    details = {
        "list_size": len(titles),
        "real_citations": len(true),
        "cited_listed": sorted(ex.listed),
        "cited_real": len(ex.listed & true),
        "unlisted": sorted(ex.unlisted)[:20],
        "unlisted_count": len(ex.unlisted),
        "numeric_marks": ex.numeric,
        "author_year": ex.author_year,
        "titles": ex.titles,
        "mentions": total,
        "mentions_covered": sum(w for i, w in weight.items() if i in ex.listed),
    }
    return CitationScores(precision, recall, len(ex.unlisted), details, coverage)


UNDEFINED = {
    "precision": "no citations",
    "recall": "no real citations listed",
    "unlisted": "",
    "coverage": "no mention counts in the list (a round built before issue 25)",
}


class CitationMetric(SampleScorer):
    """One of the four citation metrics over a run's Related Work records."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.metric_name = "reference-coverage" if kind == "coverage" else f"citation-{kind}"

    def config(self) -> dict[str, Any]:
        return {"metric": self.metric_name, "version": VERSION, "title_match": TITLE_MATCH}

    def applies(self, rec: RunRecord) -> bool:
        return (spec := find_spec(rec.task)) is not None and spec.cites  # other tasks are left alone

    def score(self, item: ScoreItem) -> Scored:
        s = citation_scores(item.output, item.sample.citations)
        value = {
            "precision": s.precision,
            "recall": s.recall,
            "unlisted": float(s.unlisted),
            "coverage": s.coverage,
        }[self.kind]
        details = dict(s.details)
        if value is None:
            details["undefined"] = UNDEFINED[self.kind]
        return Scored(values={} if value is None else {"score": value}, details=details)


def _cites(spec: Any) -> bool:
    return bool(spec.cites)


CITATION_METRICS = ("citation-precision", "citation-recall", "citation-unlisted", "reference-coverage")
for _kind, _name, _summary in (
    ("precision", CITATION_METRICS[0], "share of a Related Work section's citations pointing into the given list"),
    ("recall", CITATION_METRICS[1], "share of the real section's cited works (non-distractors) the output cites"),
    ("unlisted", CITATION_METRICS[2], "count of distinct citations to works not in the given list"),
    ("coverage", CITATION_METRICS[3], "share of the real section's in-text citations whose work the output cites"),
):
    register(
        Metric(
            _name,
            build=lambda opts, k=_kind: CitationMetric(k),
            needs=Needs(reference=True),
            summary=_summary,
            default_for=_cites,  # scored by default on the tasks whose samples carry a citation list
        )
    )
