"""The graph's view of names and queries: one key per person (from `sources.names`), one `au:` query per author.

Why keys: arXiv's `au:` search is a loose pre-filter (it matches surnames and initials); whether a paper is
really by the author we crawl is decided locally by comparing normalised author keys.
"""

from __future__ import annotations

from datetime import date

from academiceval.sources.models import PaperMeta
from academiceval.sources.names import author_key
from academiceval.sources.query import and_, au, cat, or_, submitted_between

ARXIV_START = date(1991, 8, 1)  # no paper on arXiv is older: the open lower end of a window


def key_of(name: str) -> str:
    return author_key(name)


def fill_keys(meta: PaperMeta) -> PaperMeta:
    """Loaders fill `Author.key`; a source that did not gets it filled here, so matching never sees blanks."""
    if all(a.key for a in meta.authors):
        return meta
    authors = [a if a.key else a.model_copy(update={"key": author_key(a.name)}) for a in meta.authors]
    return meta.model_copy(update={"authors": authors})


def author_query(name: str, *, since: date | None = None, until: date | None = None) -> str:
    """`au:` query for one author, optionally restricted to a v1 submission window."""
    if since or until:
        return str(and_(au(name), window(since, until)))
    return str(au(name))


def window(since: date | None, until: date | None):  # type: ignore[no-untyped-def]
    """`submittedDate:[since TO until]`; an open end becomes arXiv's first day or today."""
    return submitted_between(since or ARXIV_START, until or date.today())


def window_query(since: date, until: date | None, categories: list[str]) -> str:
    """All papers submitted in the window in any of the categories (one paged query instead of one per author)."""
    return str(and_(window(since, until), or_(*[cat(c) for c in sorted(categories)])))
