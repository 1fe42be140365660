"""Paper metadata as it arrives from arXiv (API, bulk mirror) — the boundary model of `sources`."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

# how much of `published` is known: a publication list may give only the year or the year and month; the date
# then holds the first day of that year/month (see sources.dates for the comparisons that respect it)
DatePrecision = Literal["day", "month", "year"]


class Author(BaseModel):
    """One author as written on a paper, plus the key used to match the same person across papers."""

    name: str  # original string, for display
    key: str = ""  # normalised matching key (see sources.names.author_key); filled by the loaders
    affiliations: list[str] = Field(default_factory=list)


class PaperMeta(BaseModel):
    """arXiv metadata of one paper (one record per versionless id).

    `published` is the v1 submission date: every split, window and leakage check uses it. Records from a
    publication list may know only the year or month: `date_precision` says so, and comparisons go through
    `sources.dates` so that a 2024 paper is never "after 2024-06-01".
    """

    arxiv_id: str  # versionless: "2301.01234" or old-style "astro-ph/0601001"
    version: int | None = None  # latest version known, e.g. 3 for v3
    title: str
    abstract: str = ""
    authors: list[Author] = Field(default_factory=list)
    primary_category: str | None = None
    categories: list[str] = Field(default_factory=list)
    published: date  # v1 submission date (or the first day of the year/month a publication list gives)
    date_precision: DatePrecision = "day"
    updated: date | None = None  # date of the latest version
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    pdf_url: str | None = None
    source: str = "arxiv"  # where the record came from: arxiv-api, kaggle, abs, listing, atom, unarxive, ...

    @property
    def first_author(self) -> Author | None:
        return self.authors[0] if self.authors else None
