"""Citation spans and reference → stored-paper links: what the citation-cloze family reads from the store.

A `Paper` already holds its in-text citations (section, character span, printed marker, resolved reference
indices) whether it came from a PDF (`papers.citations`) or pre-parsed (unarXive, SCALAR paper objects).
This module adds the missing half: for each reference, the stored paper it names, if the store has one with
text. The link is made by versionless arXiv id first, then by fuzzy title (rapidfuzz ratio on normalised
titles, ≥ `TITLE_THRESHOLD`), and kept in table `reference_link` with the method and score, so a link can be
reviewed and a round can say how each candidate was found. Links are recomputed cheaply (`link_all`), since
the store grows between rounds.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from academiceval.store.paper_models import Paper
from academiceval.store.workspace import Workspace, now_iso, register_schema

TITLE_THRESHOLD = 92.0  # rapidfuzz ratio (0-100) on normalised titles
MIN_TITLE_CHARS = 12  # shorter titles ("Adam", "BERT") are too ambiguous to match by text

LINK_SCHEMA = """
CREATE TABLE IF NOT EXISTS reference_link (
    paper_id TEXT NOT NULL,              -- the citing paper (parsed_paper.paper_id)
    ref_index INTEGER NOT NULL,          -- Reference.index in that paper
    target_paper_id TEXT NOT NULL,       -- the stored paper the reference names
    target_arxiv_id TEXT,
    method TEXT NOT NULL,                -- "arxiv_id" or "title"
    score REAL NOT NULL,                 -- 100 for id links, the title similarity otherwise
    linked_at TEXT NOT NULL,
    PRIMARY KEY (paper_id, ref_index)
);
CREATE INDEX IF NOT EXISTS reference_link_target ON reference_link(target_paper_id);
"""
register_schema("papers_links", LINK_SCHEMA)


@dataclass(frozen=True)
class CitationSpan:
    """One in-text citation as the cloze family uses it: where it is and which reference it names."""

    section_index: int
    section: str  # heading as printed, with its number
    start: int
    end: int
    text: str
    reference_index: int | None  # None when unresolved; the first one for a multi-reference marker
    reference_indices: tuple[int, ...]
    grouped: bool
    source_labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class ReferenceLink:
    ref_index: int
    target_paper_id: str
    target_arxiv_id: str | None
    method: str
    score: float


@dataclass
class LinkReport:
    papers: int = 0
    references: int = 0
    linked: Counter[str] = field(default_factory=Counter)  # method -> count
    unlinked: Counter[str] = field(default_factory=Counter)  # reason -> count


def section_label(paper: Paper, index: int) -> str:
    s = paper.sections[index]
    return f"{s.number} {s.heading}".strip() if s.number else s.heading


def citation_spans(paper: Paper) -> list[CitationSpan]:
    """Every in-text citation of a paper in reading order (section, then position)."""
    out = []
    for c in sorted(paper.citations, key=lambda c: (c.section_index, c.start, c.end)):
        if not 0 <= c.section_index < len(paper.sections):
            continue
        out.append(
            CitationSpan(
                section_index=c.section_index,
                section=section_label(paper, c.section_index),
                start=c.start,
                end=c.end,
                text=c.text,
                reference_index=c.reference_indices[0] if c.reference_indices else None,
                reference_indices=tuple(c.reference_indices),
                grouped=c.grouped,
                source_labels=dict(c.source_labels),
            )
        )
    return out


def normalise_title(title: str) -> str:
    t = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z0-9]+", t))


def has_text(paper: Paper) -> bool:
    return any(s.text.strip() for s in paper.sections)


class TitleIndex:
    """Stored papers with text, by versionless arXiv id and by normalised title (one pass over the store)."""

    def __init__(self, papers: Iterable[tuple[str, str | None, str]]) -> None:
        self.by_arxiv: dict[str, tuple[str, str | None]] = {}
        self.by_title: dict[str, tuple[str, str | None]] = {}
        for pid, aid, title in papers:
            if aid and aid not in self.by_arxiv:
                self.by_arxiv[aid] = (pid, aid)
            norm = normalise_title(title)
            if len(norm) >= MIN_TITLE_CHARS and norm not in self.by_title:
                self.by_title[norm] = (pid, aid)
        self._titles = list(self.by_title)

    @classmethod
    def from_workspace(cls, ws: Workspace) -> TitleIndex:
        """Every stored paper with text (through the workspace's own reader; PDF parses first, so an id names the
        richer parse when both exist, as `get_paper_by_arxiv` does)."""
        rows = [(p.source != "pdf", p.paper_id, p.arxiv_id, p.title) for p in ws.iter_papers() if has_text(p)]
        rows.sort(key=lambda r: (r[0], r[1]))
        return cls((pid, aid, title) for _, pid, aid, title in rows)

    def find_title(self, title: str) -> tuple[str, str | None, float] | None:
        norm = normalise_title(title)
        if len(norm) < MIN_TITLE_CHARS:
            return None
        if norm in self.by_title:
            pid, aid = self.by_title[norm]
            return pid, aid, 100.0
        if not self._titles:
            return None
        hit = process.extractOne(norm, self._titles, scorer=fuzz.ratio, score_cutoff=TITLE_THRESHOLD)
        if hit is None:
            return None
        pid, aid = self.by_title[hit[0]]
        return pid, aid, float(hit[1])


def link_paper(paper: Paper, index: TitleIndex, report: LinkReport | None = None) -> list[ReferenceLink]:
    """Links of one paper's references (pure: reads only the index)."""
    out: list[ReferenceLink] = []
    for ref in paper.references:
        if report is not None:
            report.references += 1
        hit: ReferenceLink | None = None
        if ref.arxiv_id and ref.arxiv_id in index.by_arxiv:
            pid, aid = index.by_arxiv[ref.arxiv_id]
            hit = ReferenceLink(ref.index, pid, aid, "arxiv_id", 100.0)
        elif ref.title:
            found = index.find_title(ref.title)
            if found is not None:
                hit = ReferenceLink(ref.index, found[0], found[1], "title", round(found[2], 2))
        if hit is not None and (
            hit.target_paper_id == paper.paper_id or (paper.arxiv_id and hit.target_arxiv_id == paper.arxiv_id)
        ):
            hit = None  # a paper never links to itself
        if hit is not None:
            out.append(hit)
            if report is not None:
                report.linked[hit.method] += 1
        elif report is not None:
            if ref.arxiv_id:
                report.unlinked["arXiv id not in the store (with text)"] += 1
            elif ref.title:
                report.unlinked["title matches no stored paper"] += 1
            else:
                report.unlinked["neither arXiv id nor title"] += 1
    return out


def store_links(ws: Workspace, paper_id: str, links: list[ReferenceLink], conn: sqlite3.Connection) -> None:
    at = now_iso()
    conn.execute("DELETE FROM reference_link WHERE paper_id=?", (paper_id,))
    conn.executemany(
        "INSERT INTO reference_link VALUES (?,?,?,?,?,?,?)",
        [(paper_id, lk.ref_index, lk.target_paper_id, lk.target_arxiv_id, lk.method, lk.score, at) for lk in links],
    )


def link_all(ws: Workspace, paper_ids: Iterable[str] | None = None) -> LinkReport:
    """(Re)link the references of the given stored papers (all when None); one transaction per 200 papers."""
    index = TitleIndex.from_workspace(ws)
    ids = list(paper_ids) if paper_ids is not None else [p.paper_id for p in ws.iter_papers() if p.references]
    report = LinkReport()
    for i in range(0, len(ids), 200):
        with ws.transaction() as conn:
            for pid in ids[i : i + 200]:
                paper = ws.get_paper(pid)
                if paper is None or not paper.references:
                    continue
                report.papers += 1
                store_links(ws, pid, link_paper(paper, index, report), conn)
    return report


def links_of(ws: Workspace, paper_id: str) -> dict[int, ReferenceLink]:
    rows = ws.db.execute(
        "SELECT ref_index, target_paper_id, target_arxiv_id, method, score FROM reference_link WHERE paper_id=?",
        (paper_id,),
    )
    return {int(r[0]): ReferenceLink(int(r[0]), str(r[1]), r[2], str(r[3]), float(r[4])) for r in rows}
