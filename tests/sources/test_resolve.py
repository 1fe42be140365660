"""Reference resolution in layers on real references: workspace, local mirror, arXiv API (a served mirror),
OpenAlex (the replay server); per-link method and score recorded; a rerun asks nothing twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from academiceval.papers.bib_markdown import markdown_bibliography
from academiceval.papers.bibliography import BibEntry
from academiceval.sources.client import ArxivClient
from academiceval.sources.openalex import OpenAlexClient
from academiceval.sources.resolve import Resolver, method_counts, resolutions_of, resolve_references
from academiceval.sources.resolve.match import match
from academiceval.sources.server import serve_in_thread
from academiceval.store import Workspace
from academiceval.store.paper_models import Reference
from academiceval.testing.openalex_replay import serve_recorded

RECORDED = Path(__file__).parent / "data" / "openalex_recorded.json"


@pytest.fixture(scope="module")
def moral_refs(corpus: Path) -> list[Reference]:
    """The bibliography of SCALAR's 2407.02273 (Multilingual Trolley Problems) read from its markdown."""
    d = json.loads((corpus / "samples/scalar_paper_obj_anno/2407.02273.json").read_text(encoding="utf-8"))
    return [e.to_reference(i) for i, e in enumerate(markdown_bibliography(d["markdown_content"]))]


@pytest.fixture(scope="module")
def arxiv_server(corpus: Path):
    """The arXiv API answered from the 6 SCALAR paper objects (their cited papers are records with abstracts)."""
    h = serve_in_thread(corpus / "samples" / "scalar_paper_obj_anno")
    yield h
    h.stop()


def test_match_needs_title_and_uses_author_and_year() -> None:
    e = BibEntry(raw="", title="The moral machine experiment", authors=["Edmond Awad"], year=2018)
    assert match(e, "The Moral Machine experiment", ["Edmond Awad"], 2018) == 1.0
    assert match(e, "The moral machine experiments", ["Someone Else"], 2001) is None  # 0.98 but both disagree
    assert match(e, "A moral machine experiment", ["E. Awad"], 2019) is not None  # 0.93, author and year agree
    assert match(BibEntry(raw="", title="Adam"), "Adam", [], None) is None  # too short to match by text


def test_layers_online_and_cached(tmp_path: Path, moral_refs: list[Reference], arxiv_server) -> None:
    ws = Workspace(tmp_path / "ws")
    replay = serve_recorded(RECORDED)
    try:
        arxiv = ArxivClient(arxiv_server.url, min_interval=0.0)
        oa = OpenAlexClient(replay.url, mailto="lab@example.org", min_interval=0.0)
        res = resolve_references(Resolver(ws, arxiv=arxiv, openalex=oa), moral_refs, paper_id="scalar:2407.02273")
        by_title = {r.title: x for r, x in zip(moral_refs, res, strict=True)}
        # an arXiv id printed in the reference, found by the API (batched id_list)
        assert by_title["Language models are few-shot learners"].method == "id-arxiv-api"
        assert by_title["Language models are few-shot learners"].work.abstract
        # no id in the reference: arXiv title query (another object's cited paper), then OpenAlex title search
        siqa = by_title["Social iqa: Commonsense reasoning about social interactions"]
        assert siqa.method == "title-arxiv-api" and siqa.work.arxiv_id == "1904.09728" and siqa.score >= 0.9
        moral = by_title["The moral machine experiment"]
        assert moral.method == "title-openalex" and moral.work.doi == "10.1038/s41586-018-0637-6"
        assert moral.work.work_id == "doi:10.1038/s41586-018-0637-6"
        assert by_title["Which humans?"].method is None and by_title["Which humans?"].reason
        id_requests = arxiv.requests_made
        assert id_requests <= 1 + 3 * ((len(moral_refs) + 7) // 8)  # one id_list batch + batched title queries
        # per-link records
        stored = resolutions_of(ws, "scalar:2407.02273")
        assert stored[moral_refs.index(next(r for r in moral_refs if r.title == "Which humans?"))].method is None
        counts = method_counts(ws)
        assert counts["id-arxiv-api"] >= 10 and counts["title-openalex"] >= 1
        # a rerun asks nothing twice
        asked_arxiv, asked_oa = arxiv.requests_made, len(replay.state.log)
        res2 = Resolver(ws, arxiv=arxiv, openalex=oa).resolve([_entry(r) for r in moral_refs])
        assert [x.method for x in res2] == [x.method for x in res]
        assert arxiv.requests_made == asked_arxiv and len(replay.state.log) == asked_oa
    finally:
        replay.stop()


def test_offline_layers_workspace_and_mirror(tmp_path: Path, corpus: Path, moral_refs: list[Reference]) -> None:
    from academiceval.sources.mirror import MirrorSource
    from academiceval.sources.mirror.workspace import index_mirror

    ws = Workspace(tmp_path / "ws")
    index_mirror(ws, corpus / "samples" / "scalar_paper_obj_anno")
    mirror = MirrorSource(corpus / "metadata" / "scalar_iclr2025_metadata.json")
    res = Resolver(ws, mirror=mirror).resolve([_entry(r) for r in moral_refs])
    methods = {x.method for x in res}
    assert {"id-workspace", "title-workspace"} <= methods
    gpt4 = next(x for r, x in zip(moral_refs, res, strict=True) if r.arxiv_id == "2303.08774")
    assert gpt4.method == "id-workspace" and gpt4.score == 1.0
    misses = [x for x in res if x.work is None]
    assert misses and all("offline" in (x.reason or "") or "no arXiv id" in (x.reason or "") for x in misses)


def _entry(r: Reference) -> BibEntry:
    from academiceval.sources.resolve import entry_of

    return entry_of(r)


def test_a_service_that_is_down_is_not_asked_per_title(tmp_path: Path, moral_refs: list[Reference]) -> None:
    """OpenAlex unreachable (a closed port): one request fails through its retries, the layer is then skipped,
    nothing is cached as a miss, and the other layers' results stand."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    ws = Workspace(tmp_path / "ws")
    oa = OpenAlexClient(dead, min_interval=0.0, max_retries=1, backoff_base=0.01)
    r = Resolver(ws, openalex=oa)
    res = r.resolve([_entry(x) for x in moral_refs])
    assert all(x.work is None for x in res)
    assert oa.requests_made == 2 and r.errors == {"retries_exhausted": 1}  # one DOI batch, retried once; no titles
    assert ws.db.execute("SELECT COUNT(*) FROM resolve_cache").fetchone()[0] == 0
