"""Resolve bibliography entries to works, in layers from the cheapest and surest to the costliest:

1. the reference's arXiv id or DOI → the workspace (`id-workspace`);
2. fuzzy title + first author + year → the workspace's metadata (`title-workspace`);
3. a local mirror, when the source is one: ids (`id-mirror`), then `ti:` title queries (`title-mirror`);
4. online, the arXiv API: the remaining arXiv ids in `id_list` batches (`id-arxiv-api`);
5. online, OpenAlex: the remaining DOIs in `filter=doi:…|…` batches (`id-openalex`);
6. online, the arXiv API: titles as OR-ed phrase queries, then OR-ed word ANDs (`title-arxiv-api`);
7. online, OpenAlex title search (`title-openalex`).

Each entry stops at the first layer that finds its work; every outcome is a `Resolution` with its method and
score (1.0 for ids, `match.match` for titles) or the reason nothing was found. Online answers are cached in the
workspace (`cache.LookupCache`), so a rerun asks nothing twice. `resolve_references` is what the Related-Work
citation corpus calls (`rounds.citations`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from academiceval.papers.bibliography import BibEntry, norm_title
from academiceval.sources.openalex import OpenAlexClient
from academiceval.sources.resolve.cache import LookupCache, record_resolutions
from academiceval.sources.resolve.local import MirrorLayer, StoreIndex
from academiceval.sources.resolve.match import MIN_TITLE_CHARS
from academiceval.sources.resolve.models import Resolution, ResolvedWork
from academiceval.sources.resolve.online import ArxivLayer, OpenAlexLayer
from academiceval.store.paper_models import Reference
from academiceval.store.workspace import Workspace


def entry_of(ref: Reference) -> BibEntry:
    """A stored `Reference` as the entry resolution reads."""
    return BibEntry(
        raw=ref.raw,
        key=ref.label,
        title=ref.title,
        authors=list(ref.authors),
        year=ref.year,
        venue=ref.venue,
        arxiv_id=ref.arxiv_id,
        doi=ref.doi,
    )


class Resolver:
    """The layers above over one workspace. `mirror`: a local `MirrorSource`; `arxiv`: an `ArxivClient` (or any
    source with `fetch_ids`/`search`); `openalex`: an `OpenAlexClient`. Any of them may be None."""

    def __init__(
        self,
        ws: Workspace,
        *,
        mirror: object | None = None,
        arxiv: object | None = None,
        openalex: OpenAlexClient | None = None,
        max_openalex_title_queries: int | None = None,
    ) -> None:
        self.ws = ws
        self.store = StoreIndex(ws)
        self.cache = LookupCache(ws)
        self.mirror = MirrorLayer(mirror, self.cache) if mirror is not None else None
        self.arxiv = ArxivLayer(arxiv, self.cache) if arxiv is not None else None
        self.openalex = (
            OpenAlexLayer(openalex, self.cache, max_title_queries=max_openalex_title_queries)
            if openalex is not None
            else None
        )

    @property
    def online(self) -> bool:
        return self.arxiv is not None or self.openalex is not None

    @property
    def errors(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for layer in (self.mirror, self.arxiv, self.openalex):
            if layer is not None:
                out.update(layer.errors)
        return out

    def resolve(self, entries: Sequence[BibEntry]) -> list[Resolution]:
        n = len(entries)
        res: list[Resolution | None] = [None] * n

        def done(i: int, method: str, work: ResolvedWork, score: float = 1.0) -> None:
            res[i] = Resolution(method=method, score=score, work=work, query=_query(entries[i], method))

        for i, e in enumerate(entries):
            if not (e.arxiv_id or e.doi or e.title):
                res[i] = Resolution(reason="no arXiv id, DOI or title in the reference")
        open_ = lambda: [i for i in range(n) if res[i] is None]  # noqa: E731
        # 1-2: the workspace (never cached: it is the store itself, and it grows between builds)
        for i in open_():
            w = self.store.by_id(entries[i])
            if w is not None:
                done(i, "id-workspace", w)
        for i in open_():
            got = self.store.by_title(entries[i])
            if got is not None:
                done(i, "title-workspace", *got)
        # 3: a local mirror
        if self.mirror is not None:
            ids = self.mirror.by_ids([entries[i].arxiv_id for i in open_() if entries[i].arxiv_id])
            for i in open_():
                if entries[i].arxiv_id in ids:
                    done(i, "id-mirror", ids[entries[i].arxiv_id])
            for i in open_():
                got = self.mirror.by_title(entries[i])
                if got is not None:
                    done(i, "title-mirror", *got)
        # 4-5: online ids
        if self.arxiv is not None:
            ids = self.arxiv.by_ids([entries[i].arxiv_id for i in open_() if entries[i].arxiv_id])
            for i in open_():
                if entries[i].arxiv_id in ids:
                    done(i, "id-arxiv-api", ids[entries[i].arxiv_id])
        if self.openalex is not None:
            by_doi = self.openalex.by_dois([entries[i].doi for i in open_() if entries[i].doi])
            for i in open_():
                d = (entries[i].doi or "").lower()
                if d in by_doi:
                    done(i, "id-openalex", self._prefer_store(by_doi[d]))
        # 6-7: online titles
        if self.arxiv is not None:
            todo = open_()
            found = self.arxiv.by_titles([entries[i] for i in todo])
            for k, (w, s) in found.items():
                done(todo[k], "title-arxiv-api", w, s)
        if self.openalex is not None:
            for i in open_():
                got = self.openalex.by_title(entries[i])
                if got is not None:
                    done(i, "title-openalex", self._prefer_store(got[0]), got[1])
        for i in open_():
            res[i] = Resolution(reason=self._why(entries[i]), query=_query(entries[i], None))
        return [r for r in res if r is not None]

    def _prefer_store(self, w: ResolvedWork) -> ResolvedWork:
        """An OpenAlex work that is an arXiv paper the workspace holds: the workspace's record (and abstract)."""
        if w.arxiv_id:
            stored = self.store.work(w.arxiv_id)
            if stored is not None:
                return stored
        return w

    def _why(self, e: BibEntry) -> str:
        where = "" if self.online else " (offline: workspace" + (" and mirror)" if self.mirror else ")")
        has_title = bool(e.title) and len(norm_title(e.title or "")) >= MIN_TITLE_CHARS
        ids = " and ".join(x for x, v in (("arXiv id", e.arxiv_id), ("DOI", e.doi)) if v)
        if ids and has_title:
            return f"{ids} and title not found" + where
        if ids:
            return f"{ids} not found" + (" (title too short to match)" if e.title else "") + where
        if has_title:
            return "no title match" + where
        return "title too short to match"


def _query(e: BibEntry, method: str | None) -> str:
    if method and method.startswith("id-"):
        return f"arxiv:{e.arxiv_id}" if e.arxiv_id else f"doi:{e.doi}"
    if e.title:
        return f"title:{norm_title(e.title)}"
    return f"arxiv:{e.arxiv_id}" if e.arxiv_id else f"doi:{e.doi}" if e.doi else ""


def resolver_for(ws: Workspace, source: object | None, *, openalex: OpenAlexClient | None = None) -> Resolver:
    """The resolver a build gets from its `--source`: a local mirror (it has an `.index`) is the mirror layer; any
    other source (the live `ArxivClient`, `--api-url`) is the arXiv API layer, and then OpenAlex too (the default
    public API with the polite-pool `mailto` from ACADEMICEVAL_CONTACT) unless `openalex` is given."""
    if source is None:
        return Resolver(ws)
    if hasattr(source, "index"):
        return Resolver(ws, mirror=source, openalex=openalex)
    return Resolver(ws, arxiv=source, openalex=openalex if openalex is not None else OpenAlexClient())


def resolve_references(
    resolver: Resolver, refs: Sequence[Reference], *, paper_id: str | None = None
) -> list[Resolution]:
    """Resolve a paper's references (in order); with `paper_id`, record each link in the workspace."""
    out = resolver.resolve([entry_of(r) for r in refs])
    if paper_id is not None:
        record_resolutions(resolver.ws, paper_id, [(r.index, x) for r, x in zip(refs, out, strict=True)])
    return out
