"""Light page entries (`sources/entries.py`) say what the full records say: id, v1 date, author keys (as
`graph.names.fill_keys` would fill them) — from the disk index's columns, from the in-memory index,
and from any source's ordinary page; `meta()` is the record itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.graph.names import fill_keys, window_query
from academiceval.sources.entries import PageEntry, search_entries
from academiceval.sources.mirror import MirrorSource
from academiceval.sources.mirror.disk import DiskIndex
from academiceval.store.paper_models import PaperMeta

QUERIES = [
    ("2018-04-01", "2018-04-30", ["astro-ph"]),
    ("2018-04-01", "2018-04-10", ["astro-ph.GA", "astro-ph.CO", "gr-qc"]),
    ("2007-04-01", "2007-04-30", ["hep-ph", "math", "cond-mat"]),
    ("1990-01-01", "2030-01-01", ["hep-th", "cs"]),
]


def _as_entry(m: PaperMeta) -> tuple:
    f = fill_keys(m)
    return (f.arxiv_id, f.published, tuple(a.key for a in f.authors))


def _fields(e: PageEntry) -> tuple:
    return (e.arxiv_id, e.published, e.author_keys)


@pytest.fixture(scope="module")
def disk_source(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> MirrorSource:
    idx = DiskIndex.build(mirror_dir.resolve(), tmp_path_factory.mktemp("entries") / "i.sqlite")
    return MirrorSource(mirror_dir, index=idx)


@pytest.mark.parametrize(("since", "until", "cats"), QUERIES)
def test_entries_equal_the_records(disk_source: MirrorSource, mirror: MirrorSource, since: str, until: str,
                                   cats: list[str]) -> None:  # fmt: skip
    from datetime import date

    q = window_query(date.fromisoformat(since), date.fromisoformat(until), cats)
    for src in (disk_source, mirror):  # the disk index's columns; the in-memory index's records
        full = src.search(q, max_results=2000, sort_by="submittedDate", sort_order="ascending")
        calls = src.requests_made
        light = search_entries(src, q, max_results=2000, sort_by="submittedDate", sort_order="ascending")
        assert src.requests_made == calls + 1  # one request, like a page
        assert light.total_results == full.total_results and len(light.items) == len(full.items)
        assert [_fields(e) for e in light.items] == [_as_entry(m) for m in full.items]
        assert [e.meta() for e in light.items[:50]] == full.items[:50]
    assert full.total_results > 0


def test_a_source_without_entries_gives_them_from_its_page(mirror: MirrorSource) -> None:
    class Plain:  # only the protocol's search (e.g. the live API client)
        requests_made = 0

        def search(self, *a, **kw):  # type: ignore[no-untyped-def]
            return mirror.search(*a, **kw)

    page = search_entries(Plain(), "cat:astro-ph.GA", max_results=30)
    full = mirror.search("cat:astro-ph.GA", max_results=30)
    assert [_fields(e) for e in page.items] == [_as_entry(m) for m in full.items] and len(page.items) == 30
