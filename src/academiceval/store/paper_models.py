"""The models of the workspace's paper tables: metadata as it arrives from a source (`PaperMeta`, `Author`) and a
paper turned into structure (`Paper` with its sections, references and in-text citations).

They live at the bottom of the tree so that the workspace (`store.workspace`) can store and return them without
importing the stages that produce them; every stage imports them from here (one import path per type).
`PaperMeta.published` is the v1 submission date: every split, window and leakage check uses it.
Every later stage reads papers through `Paper`: tasks cut a section out of the body and use it as the label,
the Related-Work task needs references and in-text citations, statistics count tokens per section.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

# ---- metadata (sources) --------------------------------------------------------------------------------
# how much of `published` is known: a publication list may give only the year or the year and month; the date
# then holds the first day of that year/month (sources.dates has the comparisons that respect it)
DatePrecision = Literal["day", "month", "year"]


class Author(BaseModel):
    """One author as written on a paper, plus the key used to match the same person across papers."""

    name: str  # original string, for display
    key: str = ""  # normalised matching key (see sources.names.author_key); filled by the loaders
    affiliations: list[str] = Field(default_factory=list)


class PaperMeta(BaseModel):
    """arXiv metadata of one paper (one record per versionless id).

    `published` is the v1 submission date: every split, window and leakage check uses it.
    """

    arxiv_id: str  # versionless: "2301.01234" or old-style "astro-ph/0601001"
    version: int | None = None  # latest version known, e.g. 3 for v3
    title: str
    abstract: str = ""
    authors: list[Author] = Field(default_factory=list)
    primary_category: str | None = None
    categories: list[str] = Field(default_factory=list)
    published: date  # v1 submission date (or the first day of the year/month a publication list gives)
    date_precision: DatePrecision = "day"  # "year"/"month" for publication-list dates (sources.dates)
    updated: date | None = None  # date of the latest version
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    pdf_url: str | None = None
    source: str = "arxiv"  # where the record came from: arxiv-api, kaggle, abs, listing, atom, unarxive, ...

    @property
    def first_author(self) -> Author | None:
        return self.authors[0] if self.authors else None


# ---- parsed papers (papers) -----------------------------------------------------------------------
class SectionRole(StrEnum):
    """Canonical roles a section can play, whatever its heading says."""

    introduction = "introduction"
    related_work = "related_work"  # Related Work, Background, Prior/Previous Work, Literature Review, ...
    method = "method"
    experiments = "experiments"
    conclusion = "conclusion"  # Conclusion(s), Concluding Remarks, Discussion and Conclusion, Summary, ...
    acknowledgements = "acknowledgements"
    references = "references"
    appendix = "appendix"


# Roles that are never part of the paper's body text (the "main content" the tasks read).
NON_BODY_ROLES: frozenset[SectionRole] = frozenset(
    {SectionRole.references, SectionRole.acknowledgements, SectionRole.appendix}
)


class Section(BaseModel):
    heading: str  # heading text without its number, e.g. "Related Work"
    number: str | None = None  # "1", "2.1", "IV", "A" as printed; None when unnumbered
    level: int = 1  # 1 = section, 2 = subsection, ...
    role: SectionRole | None = None  # the role of this section, inherited from its parent when it has none
    text: str = ""  # body text of this section only (not of its subsections)


class Reference(BaseModel):
    index: int  # 0-based position in the reference list
    raw: str  # the entry as printed, one line
    label: str | None = None  # the printed marker, e.g. "12" for "[12]"
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    title: str | None = None
    arxiv_id: str | None = None  # versionless when it can be read from the entry
    venue: str | None = None  # journal / proceedings / "arXiv preprint" as printed (papers.bibliography)
    doi: str | None = None  # lower-cased, without a resolver prefix ("10.1038/nature14539")


class Citation(BaseModel):
    section_index: int  # index into Paper.sections
    start: int  # character span in that section's text
    end: int
    text: str  # the marker as printed, e.g. "[3, 7]" or "Smith et al., 2020"
    style: Literal["numeric", "author_year", "alphabetic"]
    reference_indices: list[int] = Field(default_factory=list)  # resolved Reference.index values
    grouped: bool = False  # True when it sits in a group with other citations
    # Annotations the source itself gave this citation (pre-parsed papers only), kept verbatim so they can be
    # compared with ours, e.g. {"scalar_citation_type": "method"} from a SCALAR paper object.
    source_labels: dict[str, str] = Field(default_factory=dict)


class Paper(BaseModel):
    """A structured paper. `paper_id` is the sha256 of the PDF for ingested files, or `<source>:<id>` for
    papers that arrived pre-parsed (e.g. unarXive)."""

    paper_id: str
    source: str = "pdf"
    arxiv_id: str | None = None  # versionless
    version: int | None = None
    title: str = ""
    abstract: str = ""
    sections: list[Section] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    pages: int | None = None
    parser_version: str = ""
    warnings: list[str] = Field(default_factory=list)  # non-fatal problems noticed while parsing

    # ---- task views -------------------------------------------------------------------------------
    def has_role(self, role: SectionRole | str) -> bool:
        return any(s.role == role for s in self.sections)

    def section_text(self, role: SectionRole | str) -> str:
        """Text of every section with this role (headings included for subsections), joined in order."""
        return _join([s for s in self.sections if s.role == role], include_first_heading=False)

    def body(self, without: SectionRole | str | None = None) -> str:
        """The paper's main text: every section except references, acknowledgements and appendix, and
        except sections with role `without` (e.g. the body without its conclusion)."""
        kept = [s for s in self.sections if s.role not in NON_BODY_ROLES and (without is None or s.role != without)]
        return _join(kept, include_first_heading=True)


def _heading_line(s: Section) -> str:
    return f"{s.number} {s.heading}".strip() if s.number else s.heading


def _join(sections: list[Section], *, include_first_heading: bool) -> str:
    parts: list[str] = []
    for i, s in enumerate(sections):
        if include_first_heading or i > 0:
            parts.append(_heading_line(s))
        if s.text:
            parts.append(s.text)
    return "\n\n".join(p for p in parts if p).strip()
