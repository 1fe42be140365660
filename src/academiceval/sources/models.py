"""Paper metadata as it arrives from arXiv (API, bulk mirror) — the boundary model of `sources`."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


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
    published: date  # v1 submission date
    updated: date | None = None  # date of the latest version
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    pdf_url: str | None = None
    source: str = "arxiv"  # where the record came from: arxiv-api, kaggle, abs, listing, atom, unarxive, ...

    @property
    def first_author(self) -> Author | None:
        return self.authors[0] if self.authors else None
