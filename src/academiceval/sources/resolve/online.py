"""The online layers: the arXiv API (batched `id_list`, batched title queries) and OpenAlex (batched DOI filter,
title search). Every look-up goes through the workspace cache first (`cache.LookupCache`), keyed by what was
asked, and stores what came back — candidates or nothing — so a rerun sends no request for anything asked before.
"""

from __future__ import annotations

from collections.abc import Sequence

from academiceval.errors import AcademicEvalError
from academiceval.papers.bibliography import BibEntry, clean_title, norm_title
from academiceval.sources.openalex import OpenAlexClient, OpenAlexWork
from academiceval.sources.query import or_
from academiceval.sources.resolve.cache import LookupCache
from academiceval.sources.resolve.local import title_queries
from academiceval.sources.resolve.match import MIN_TITLE_CHARS, match
from academiceval.sources.resolve.models import ResolvedWork

TITLES_PER_QUERY = 8  # arXiv title phrases OR-ed in one search request
RESULTS_PER_TITLE = 4


def _best(entry: BibEntry, works: Sequence[ResolvedWork]) -> tuple[ResolvedWork, float] | None:
    scored = [(w, s) for w in works if (s := match(entry, w.title, w.authors, w.year)) is not None]
    return max(scored, key=lambda x: x[1]) if scored else None


class OnlineLayer:
    """What every online layer keeps: the error codes it met, and whether its service is down for this resolver."""

    errors: list[str]
    down: bool = False

    def _fail(self, e: AcademicEvalError) -> None:
        """Count the error; a service that failed through every retry is not asked again by this resolver (a
        build offline or during an outage goes on with what the other layers find, instead of retrying per title)."""
        self.errors.append(e.code)
        if e.code == "retries_exhausted":
            self.down = True


class ArxivLayer(OnlineLayer):
    """The live arXiv API (an `ArxivClient`, or any source with `fetch_ids` and `search`)."""

    def __init__(self, client: object, cache: LookupCache) -> None:
        self.client = client
        self.cache = cache
        self.errors = []

    def by_ids(self, ids: Sequence[str]) -> dict[str, ResolvedWork]:
        out: dict[str, ResolvedWork] = {}
        todo: list[str] = []
        for i in dict.fromkeys(ids):
            got = self.cache.get(f"arxiv-api:id:{i}")
            if got is None:
                todo.append(i)
            elif got:
                out[i] = got[0]
        if todo and not self.down:
            try:
                metas = self.client.fetch_ids(todo)
            except AcademicEvalError as e:
                self._fail(e)
                return out
            found = {m.arxiv_id: ResolvedWork.from_meta(m) for m in metas}
            self.cache.put_many({f"arxiv-api:id:{i}": [found[i]] if i in found else [] for i in todo})
            out.update({i: found[i] for i in todo if i in found})
        return out

    def by_titles(self, entries: Sequence[BibEntry]) -> dict[int, tuple[ResolvedWork, float]]:
        """Entry position → (work, score). Titles are asked as exact phrases, `TITLES_PER_QUERY` OR-ed per request;
        the titles no phrase found are asked again as ANDs of their longest words (`local.title_queries`: a
        misprinted or differently hyphenated word no longer hides the paper). Each title's candidates are cached."""
        out: dict[int, tuple[ResolvedWork, float]] = {}
        keyed = {
            i: norm_title(e.title)
            for i, e in enumerate(entries)
            if e.title and len(norm_title(e.title)) >= MIN_TITLE_CHARS
        }
        candidates: dict[int, list[ResolvedWork]] = {}
        todo = []
        for i, nt in keyed.items():
            got = self.cache.get(f"arxiv-api:title:{nt}")
            if got is None:
                todo.append(i)
            else:
                candidates[i] = got
        failed: set[int] = set()  # titles a query failed for: not cached, asked again next time
        for variant in range(3):  # the phrase, then two word ANDs (local.title_queries)
            asked = [
                i for i in todo if not candidates.get(i) and i not in failed and len(title_queries(keyed[i])) > variant
            ]
            for k in range(0, len(asked), TITLES_PER_QUERY):
                group = asked[k : k + TITLES_PER_QUERY]
                nodes = [title_queries(keyed[i])[variant] for i in group]
                if self.down:
                    failed.update(group)
                    continue
                try:
                    page = self.client.search(
                        str(or_(*nodes)), max_results=RESULTS_PER_TITLE * len(group), sort_by="relevance"
                    )
                except AcademicEvalError as e:
                    self._fail(e)
                    failed.update(group)
                    continue
                works = [ResolvedWork.from_meta(m) for m in page.items]
                for i in group:  # each title keeps the returned works that match it
                    candidates[i] = [w for w in works if match(entries[i], w.title, w.authors, w.year) is not None]
        # a title is a cached miss only when every query for it was answered
        self.cache.put_many({f"arxiv-api:title:{keyed[i]}": candidates.get(i, []) for i in todo if i not in failed})
        for i, works in candidates.items():
            best = _best(entries[i], works)
            if best is not None:
                out[i] = best
        return out


def _from_openalex(w: OpenAlexWork) -> ResolvedWork:
    return ResolvedWork(
        arxiv_id=w.arxiv_id,
        doi=w.doi,
        openalex_id=w.openalex_id,
        title=clean_title(w.title) or w.title,
        abstract=w.abstract,
        authors=w.authors,
        year=w.year,
        published=w.published,
    )


class OpenAlexLayer(OnlineLayer):
    """OpenAlex: DOIs in batches (`filter=doi:a|b|…`), titles one search each."""

    def __init__(self, client: OpenAlexClient, cache: LookupCache, *, max_title_queries: int | None = None) -> None:
        self.client = client
        self.cache = cache
        self.errors = []
        self.max_title_queries = max_title_queries
        self.title_queries = 0

    def by_dois(self, dois: Sequence[str]) -> dict[str, ResolvedWork]:
        out: dict[str, ResolvedWork] = {}
        todo: list[str] = []
        for d in dict.fromkeys(x.lower() for x in dois):
            got = self.cache.get(f"openalex:doi:{d}")
            if got is None:
                todo.append(d)
            elif got:
                out[d] = got[0]
        if todo and not self.down:
            try:
                found = self.client.works_by_dois(todo)
            except AcademicEvalError as e:
                self._fail(e)
                return out
            self.cache.put_many({f"openalex:doi:{d}": [_from_openalex(found[d])] if d in found else [] for d in todo})
            out.update({d: _from_openalex(found[d]) for d in todo if d in found})
        return out

    def by_title(self, entry: BibEntry) -> tuple[ResolvedWork, float] | None:
        if not entry.title or len(norm_title(entry.title)) < MIN_TITLE_CHARS:
            return None
        key = f"openalex:title:{norm_title(entry.title)}|{entry.year or ''}"
        works = self.cache.get(key)
        if works is None:
            if self.down:
                return None
            if self.max_title_queries is not None and self.title_queries >= self.max_title_queries:
                return None
            self.title_queries += 1
            try:
                works = [_from_openalex(w) for w in self.client.search_title(entry.title, year=entry.year)]
            except AcademicEvalError as e:
                self._fail(e)
                return None
            self.cache.put_many({key: works})
        return _best(entry, works)
