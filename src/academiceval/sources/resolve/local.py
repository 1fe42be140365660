"""The offline layers: the workspace's own metadata (by arXiv id, DOI, fuzzy title) and a local arXiv mirror.

The workspace is read through `Workspace.get_meta` / `iter_meta` (one pass builds the DOI and title indexes; the
title index holds normalised titles with first surname and year for `match`). A mirror is asked through its
`MetadataSource` functions — `fetch_ids` for ids, a `ti:` phrase `search` for titles — so an on-disk index of the
full arXiv snapshot answers without loading it.
"""

from __future__ import annotations

from rapidfuzz import fuzz, process

from academiceval.errors import AcademicEvalError
from academiceval.papers.bibliography import BibEntry, norm_title
from academiceval.sources.query import Node, and_, ti
from academiceval.sources.resolve.cache import LookupCache
from academiceval.sources.resolve.match import MIN_TITLE_CHARS, match
from academiceval.sources.resolve.models import ResolvedWork
from academiceval.store.paper_models import PaperMeta
from academiceval.store.workspace import Workspace

CANDIDATES = 8  # fuzzy title candidates scored per reference


class StoreIndex:
    """The workspace's paper metadata by arXiv id, DOI and normalised title (built once per resolver)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._built = False
        self.by_doi: dict[str, str] = {}
        self._ids: list[str] = []
        self._titles: list[str] = []
        self._meta: dict[str, tuple[list[str], int | None, str]] = {}

    def _build(self) -> None:
        if self._built:
            return
        for m in self.ws.iter_meta():
            if m.doi:
                self.by_doi.setdefault(m.doi.lower(), m.arxiv_id)
            nt = norm_title(m.title)
            if len(nt) >= MIN_TITLE_CHARS:
                self._ids.append(m.arxiv_id)
                self._titles.append(nt)
                self._meta[m.arxiv_id] = ([a.name for a in m.authors[:3]], m.published.year, m.title)
        self._built = True

    def work(self, arxiv_id: str) -> ResolvedWork | None:
        m = self.ws.get_meta(arxiv_id)
        return with_stored_abstract(self.ws, m) if m is not None else None

    def by_id(self, entry: BibEntry) -> ResolvedWork | None:
        if entry.arxiv_id:
            w = self.work(entry.arxiv_id)
            if w is not None:
                return w
        if entry.doi:
            self._build()
            aid = self.by_doi.get(entry.doi.lower())
            if aid:
                return self.work(aid)
        return None

    def by_title(self, entry: BibEntry) -> tuple[ResolvedWork, float] | None:
        if not entry.title:
            return None
        self._build()
        nt = norm_title(entry.title)
        if len(nt) < MIN_TITLE_CHARS or not self._titles:
            return None
        best: tuple[str, float] | None = None
        for _, _, i in process.extract(nt, self._titles, scorer=fuzz.ratio, limit=CANDIDATES, score_cutoff=85):
            aid = self._ids[i]
            authors, year, title = self._meta[aid]
            s = match(entry, title, authors, year)
            if s is not None and (best is None or s > best[1]):
                best = (aid, s)
        if best is None:
            return None
        w = self.work(best[0])
        return (w, best[1]) if w is not None else None


def title_queries(nt: str) -> list[Node]:
    """The exact phrase of a normalised title, then ANDs of its four longest words leaving out, in turn, the
    longest and the second longest (one misprinted word no longer hides the paper): at most three queries."""
    out: list[Node] = [ti(nt)]
    words = sorted({w for w in nt.split() if len(w) > 3}, key=lambda w: (-len(w), w))[:4]
    if len(words) >= 3:
        for skip in (0, 1):
            out.append(and_(*(ti(w) for k, w in enumerate(words) if k != skip)))
    return out


def with_stored_abstract(ws: Workspace, m: PaperMeta) -> ResolvedWork:
    """Metadata without an abstract (listings, some Atom records): the stored parse may have one."""
    w = ResolvedWork.from_meta(m)
    if not w.abstract:
        paper = ws.get_paper_by_arxiv(m.arxiv_id)
        if paper is not None and paper.abstract.strip():
            w.abstract = " ".join(paper.abstract.split())
            w.abstract_from_parse = True
    return w


class MirrorLayer:
    """A local `MirrorSource` (anything with `.index`, `fetch_ids`, `search`). Its answers are cached like the
    online ones: a title query over the full snapshot's disk index is not free, and a rebuild asks nothing twice."""

    def __init__(self, source: object, cache: LookupCache) -> None:
        self.source = source
        self.cache = cache
        self.errors: list[str] = []

    def by_ids(self, ids: list[str]) -> dict[str, ResolvedWork]:
        out: dict[str, ResolvedWork] = {}
        todo = []
        for i in dict.fromkeys(ids):
            got = self.cache.get(f"mirror:id:{i}")
            if got is None:
                todo.append(i)
            elif got:
                out[i] = got[0]
        if not todo:
            return out
        try:
            metas = self.source.fetch_ids(todo)
        except AcademicEvalError as e:
            self.errors.append(e.code)
            return out
        found = {m.arxiv_id: ResolvedWork.from_meta(m) for m in metas}
        self.cache.put_many({f"mirror:id:{i}": [found[i]] if i in found else [] for i in todo})
        return out | {i: found[i] for i in todo if i in found}

    def by_title(self, entry: BibEntry) -> tuple[ResolvedWork, float] | None:
        if not entry.title or len(norm_title(entry.title)) < MIN_TITLE_CHARS:
            return None
        nt = norm_title(entry.title)
        works = self.cache.get(f"mirror:title:{nt}")
        if works is None:
            works = []
            for query in title_queries(nt):
                try:
                    page = self.source.search(str(query), max_results=10, sort_by="relevance")
                except AcademicEvalError as e:
                    self.errors.append(e.code)
                    return None
                works = [ResolvedWork.from_meta(m) for m in page.items]
                if any(match(entry, w.title, w.authors, w.year) is not None for w in works):
                    break
            self.cache.put_many({f"mirror:title:{nt}": works})
        scored = [(w, s) for w in works if (s := match(entry, w.title, w.authors, w.year)) is not None]
        return max(scored, key=lambda x: x[1]) if scored else None
