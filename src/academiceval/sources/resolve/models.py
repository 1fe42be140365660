"""What resolution hands back: the work a reference names (`ResolvedWork`) and how it was found (`Resolution`)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from academiceval.papers.bibliography import clean_title
from academiceval.sources.names import make_author
from academiceval.store.paper_models import PaperMeta

# Methods, best evidence first. "id-*": the reference's arXiv id or DOI named the work; "title-*": fuzzy title
# agreed (with first author and year as tie-breakers, see match.py). The suffix says where the work was found.
METHODS = (
    "id-workspace",
    "title-workspace",
    "id-mirror",
    "title-mirror",
    "id-arxiv-api",
    "id-openalex",
    "title-arxiv-api",
    "title-openalex",
)


class ResolvedWork(BaseModel):
    """A cited work as resolution found it. `work_id` names it: the arXiv id when there is one, else the DOI
    ("doi:10.1038/…") or the OpenAlex id ("openalex:W…")."""

    arxiv_id: str | None = None
    doi: str | None = None
    openalex_id: str | None = None
    title: str
    abstract: str = ""
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    published: date | None = None
    abstract_from_parse: bool = False  # the metadata had none; the abstract is the stored parse's

    @property
    def work_id(self) -> str:
        if self.arxiv_id:
            return self.arxiv_id
        if self.doi:
            return f"doi:{self.doi}"
        return f"openalex:{self.openalex_id}"

    @classmethod
    def from_meta(cls, m: PaperMeta) -> ResolvedWork:
        return cls(
            arxiv_id=m.arxiv_id,
            doi=(m.doi or "").lower() or None,
            title=clean_title(m.title) or m.title,
            abstract=" ".join(m.abstract.split()),
            authors=[a.name for a in m.authors],
            year=m.published.year,
            published=m.published,
        )

    def to_meta(self) -> PaperMeta:
        """As `PaperMeta` for the stages that take metadata (the citation corpus). A work without an arXiv id keeps
        its `work_id` in `arxiv_id` (it never enters the workspace's paper tables); an unknown date is 1 January of
        the year (precision "year"), or 0001-01-01 when not even the year is known."""
        if self.published is not None:
            published, precision = self.published, "day"
        else:
            published, precision = date(self.year or 1, 1, 1), "year"
        return PaperMeta(
            arxiv_id=self.work_id,
            title=self.title,
            abstract=self.abstract,
            authors=[make_author(a) for a in self.authors],
            published=published,
            date_precision=precision,
            doi=self.doi,
            source="openalex" if not self.arxiv_id and self.openalex_id else "resolve",
        )


class Resolution(BaseModel):
    """One reference's outcome: the work and how it was found, or why nothing was."""

    method: str | None = None  # one of METHODS, None when unresolved
    score: float = 0.0  # 1.0 for id links; the match score (match.py) for title links
    work: ResolvedWork | None = None
    reason: str | None = None  # why unresolved ("no arXiv id, DOI or title in the reference", ...)
    query: str = ""  # what was looked up: "arxiv:…", "doi:…", "title:<normalised title>"

    @property
    def resolved(self) -> bool:
        return self.work is not None
