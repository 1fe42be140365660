"""The on-disk mirror index (`DiskIndex`) against the in-memory one on real corpus files: same records, same query
answers; plus what only the disk index does — resume after a kill, read only the new lines of a grown snapshot,
locate truncated and malformed lines."""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

import pytest

from academiceval.sources.mirror import MirrorSource
from academiceval.sources.mirror.disk import DiskIndex, default_index_path, open_index
from academiceval.sources.query import and_, au, cat, or_, submitted_between

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"


@pytest.fixture(scope="module")
def disk(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> DiskIndex:
    return DiskIndex.build(mirror_dir.resolve(), tmp_path_factory.mktemp("disk") / "index.sqlite", batch=500)


def _ids(recs) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.meta.arxiv_id for r in recs]


def test_same_records_stats_and_errors_as_in_memory(disk: DiskIndex, mirror: MirrorSource) -> None:
    mem = {r.meta.arxiv_id: r for r in mirror.index.iter_records()}
    got = {r.meta.arxiv_id: r for r in disk.iter_records()}
    assert got.keys() == mem.keys() and len(got) > 2500
    assert [k for k in mem if got[k].meta != mem[k].meta] == []
    assert all(got[k].published_at == mem[k].published_at for k in mem)
    assert sum(r.paper is not None for r in got.values()) == sum(r.paper is not None for r in mem.values()) == 49
    assert {k: (v.files, v.records, v.errors) for k, v in disk.stats.items()} == {
        k: (v.files, v.records, v.errors) for k, v in mirror.index.stats.items()
    }
    assert sorted(e.message for e in disk.errors) == sorted(e.message for e in mirror.index.errors)
    assert disk.skipped_files == mirror.index.skipped_files
    assert disk.names.merges() == mirror.index.names.merges()
    assert disk.pdfs.get("2203.00130") == mirror.index.pdfs.get("2203.00130")


def test_query_answers_equal_in_memory(disk: DiskIndex, mirror: MirrorSource) -> None:
    mem = mirror.index
    rng = random.Random(3)
    recs = list(mem.iter_records())
    names = [a.name for r in rng.sample(recs, 40) for a in r.meta.authors[:2]]
    queries = [
        'au:del_maestro AND ti:"quantum criticality"',
        "au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)",
        'au:"A Del Maestro"',
        "cat:astro-ph.GA",
        "cat:astro-ph*",
        "cat:hep-ph OR cat:cs.LG",
        "abs:galaxy AND cat:astro-ph",
        "ti:galax*",
        'ti:"dark matter"',
        "all:neutrino",
        "id:1111.2011",
        "cat:astro-ph ANDNOT cat:astro-ph.GA",
        str(
            and_(
                submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 15, 23, 59)),
                or_(cat("astro-ph.SR"), cat("gr-qc")),
            )
        ),
        str(  # a parent listed with its children and a repeat: the children's postings are pruned, same answers
            and_(
                submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 30, 23, 59)),
                or_(cat("astro-ph.GA"), cat("astro-ph"), cat("astro-ph.SR"), cat("gr-qc"), cat("astro-ph")),
            )
        ),
        "cat:astro-ph.CO OR cat:astro-ph* OR cat:hep-ph",
        str(  # windows ANDed with categories, ORed: one merge of ranges with different windows
            or_(
                and_(
                    submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 10)),
                    or_(cat("astro-ph.GA"), cat("gr-qc")),
                ),
                and_(submitted_between(datetime(2007, 1, 1), datetime(2012, 12, 31)), cat("hep-ph")),
            )
        ),
        str(  # a window around an OR whose second part has its own window: not the postings alone
            and_(
                submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 30)),
                or_(
                    cat("astro-ph.SR"),
                    and_(submitted_between(datetime(2018, 4, 10), datetime(2019, 1, 1)), cat("astro-ph.GA")),
                ),
            )
        ),
        "lastUpdatedDate:[201804010000 TO 201804302359]",
        *[str(au(n)) for n in names],
        *[str(and_(au(n), submitted_between(datetime(2017, 1, 1), datetime(2019, 1, 1)))) for n in names[:10]],
    ]
    for q in queries:
        for sort_by in ("submittedDate", "lastUpdatedDate"):
            want = mem.search(q, sort_by=sort_by, sort_order="ascending")
            total, page = disk.search_page(q, start=3, max_results=50, sort_by=sort_by, sort_order="ascending")
            assert total == len(want), q
            assert _ids(page) == _ids(want[3:53]), q
        assert _ids(disk.search(q)) == _ids(mem.search(q)), q
    assert any(len(mem.search(str(au(n)))) > 1 for n in names)


def test_mirror_source_and_server_on_the_disk_index(mirror_dir: Path, mirror: MirrorSource, tmp_path: Path) -> None:
    from academiceval.sources.client import ArxivClient
    from academiceval.sources.server import serve_in_thread

    src = MirrorSource(mirror_dir, index_dir=tmp_path)
    assert isinstance(src.index, DiskIndex) and src.index.db_path == default_index_path(mirror_dir, tmp_path)
    q = "cat:astro-ph.GA"
    assert [m.arxiv_id for m in src.iter_search(q, page_size=70)] == [m.arxiv_id for m in mirror.iter_search(q)]
    assert src.fetch_ids(["1111.2011v2", "2203.00130", "9999.99999"]) == mirror.fetch_ids(["1111.2011", "2203.00130"])
    with serve_in_thread(mirror_dir, index=src.index) as srv:
        client = ArxivClient(srv.url, min_interval=0)
        assert [m.arxiv_id for m in client.iter_search(q, page_size=100)] == [m.arxiv_id for m in src.iter_search(q)]
        client.close()
    again = open_index(mirror_dir, index_dir=tmp_path)  # a second process: nothing re-read
    assert len(again) == len(src.index)


def _kaggle_lines(corpus: Path) -> list[str]:
    return (corpus / KAGGLE).read_text().splitlines(keepends=True)


@pytest.mark.parametrize("workers", [0, 1])
def test_grown_snapshot_reads_only_new_lines(corpus: Path, tmp_path: Path, workers: int) -> None:
    lines = _kaggle_lines(corpus)
    snap = tmp_path / "m" / "snapshot.json"
    snap.parent.mkdir()
    snap.write_text("".join(lines[:120]))
    idx = DiskIndex(tmp_path / "i.sqlite", snap.parent, workers=workers)  # 1: lines parsed in a worker process
    idx.update(batch=25)
    assert len(idx) == 120
    with snap.open("a") as f:
        f.write("".join(lines[120:]))
    rep = idx.update(batch=25)
    assert rep.files_grown == 1 and rep.lines_read == 80 and rep.records_added == 80 and rep.records_merged == 0
    assert idx.update().files_unchanged == 1 and len(idx) == 200
    fresh = DiskIndex.build(snap.parent, tmp_path / "fresh.sqlite")
    assert [r.meta for r in idx.iter_records()] == [r.meta for r in fresh.iter_records()]
    # a replaced file (different head) is read again from the start; records merge, nothing doubles
    snap.write_text("".join(reversed(lines)))
    rep = idx.update()
    assert rep.files_read == 1 and rep.records_merged == 200 and len(idx) == 200


@pytest.mark.parametrize("workers", [0, 1])
def test_killed_build_resumes_without_doing_work_twice(corpus: Path, tmp_path: Path, workers: int) -> None:
    lines = _kaggle_lines(corpus)
    snap = tmp_path / "m" / "snapshot.json"
    snap.parent.mkdir()
    snap.write_text("".join(lines))

    class Killed(Exception):
        pass

    def die(name: str, done: int, total: int) -> None:
        if "line 60" in name:  # after the 3rd committed batch of 20
            raise Killed

    idx = DiskIndex(tmp_path / "i.sqlite", snap.parent, workers=workers)
    with pytest.raises(Killed):
        idx.update(progress=die, batch=20)
    assert len(idx) == 60 and not idx.complete
    rep = idx.update(batch=20)
    assert rep.files_grown == 1 and rep.lines_read == 140 and rep.records_added == 140 and rep.records_merged == 0
    assert idx.complete and len(idx) == 200
    fresh = DiskIndex.build(snap.parent, tmp_path / "fresh.sqlite")
    assert [r.meta for r in idx.iter_records()] == [r.meta for r in fresh.iter_records()]
    assert idx.search_page("cat:hep-ph", max_results=5)[0] == fresh.search_page("cat:hep-ph", max_results=5)[0] > 5


@pytest.mark.parametrize("workers", [0, 1])
def test_truncated_and_malformed_lines_are_located_counted_skipped(corpus: Path, tmp_path: Path, workers: int) -> None:
    lines = _kaggle_lines(corpus)
    snap = tmp_path / "m" / "snapshot.json"
    snap.parent.mkdir()
    bad_json = lines[5][: len(lines[5]) // 2] + "\n"  # line 6: cut in the middle
    no_id = json.dumps({**json.loads(lines[7]), "id": "not an id"}) + "\n"  # line 8
    not_obj = "[1, 2]\n"  # line 9
    body = [*lines[:5], bad_json, lines[6], no_id, not_obj, *lines[9:50]]
    tail = lines[50][:100]  # a download in progress: last line without newline
    snap.write_text("".join(body) + tail)
    idx = DiskIndex(tmp_path / "i.sqlite", snap.parent, workers=workers)
    idx.update(batch=7)  # many small commits while the worker reads ahead
    where = {e.source: e for e in idx.errors}
    assert set(where) == {f"{snap}:6", f"{snap}:8", f"{snap}:9", f"{snap}:51"}
    assert "invalid JSON" in where[f"{snap}:6"].message and "byte" in (where[f"{snap}:6"].hint or "")
    assert "bad id" in where[f"{snap}:8"].message and "not a JSON object" in where[f"{snap}:9"].message
    assert "truncated last line" in where[f"{snap}:51"].message
    assert idx.stats["kaggle"].errors == 3 and idx.stats["kaggle"].records == 47 and len(idx) == 47
    # the download completes: the cut line is read whole, from where the index stopped
    snap.write_text("".join(body) + "".join(lines[50:]))
    rep = idx.update()
    assert rep.files_grown == 1 and rep.records_added == 150 and rep.errors == 0 and len(idx) == 197


def test_open_source_uses_the_workspace_index_that_mirror_index_built(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app
    from academiceval.sources import open_source

    mirror = tmp_path / "m"
    mirror.mkdir()
    (mirror / "k.jsonl").symlink_to(corpus / KAGGLE)
    home = tmp_path / "home"
    monkeypatch.setenv("ACADEMICEVAL_HOME", str(home))
    monkeypatch.delenv("ACADEMICEVAL_MIRROR_INDEX_DIR", raising=False)
    assert not isinstance(open_source(str(mirror)).index, DiskIndex)  # small, not indexed yet: in memory
    res = CliRunner().invoke(app, ["mirror", "index", str(mirror), "--index-only"])
    assert res.exit_code == 0, res.output
    src = open_source(str(mirror))  # collect/update's path: now the workspace's disk index
    assert isinstance(src.index, DiskIndex) and len(src.index) == 200
    assert src.index.db_path.parent == home / "mirror-index"


def test_whole_corpus_same_records_and_papers(corpus: Path, tmp_path: Path) -> None:
    """Every format of ../shared/corpus (SCALAR paper objects and unarXive both carry pre-parsed papers of some of
    the same ids): the disk index keeps the merge winner's paper, as the in-memory index does."""
    from academiceval.sources.mirror.index import MirrorIndex

    root = corpus.resolve()
    disk = DiskIndex.build(root, tmp_path / "corpus.sqlite")
    mem = {r.meta.arxiv_id: r for r in MirrorIndex.build(root).iter_records()}
    got = {r.meta.arxiv_id: r for r in disk.iter_records()}
    assert got.keys() == mem.keys() and len(got) > 9000
    assert [k for k in mem if got[k].meta != mem[k].meta] == []
    assert [k for k in mem if got[k].paper != mem[k].paper] == []
    assert sum(r.paper is not None for r in got.values()) > 500


def test_a_category_under_a_listed_parent_is_not_scanned_twice() -> None:
    from academiceval.sources.mirror.disk_query import plan
    from academiceval.sources.query import parse_query

    p = plan(parse_query("cat:astro-ph.GA OR cat:astro-ph OR cat:astro-ph.GA OR cat:gr-qc OR cat:astro-phX"))
    assert [v for v, _ in p.cats] == ["astro-ph", "gr-qc", "astro-phX"]
    window = and_(submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 30)), or_(cat("cs"), cat("cs.LG")))
    params = plan(parse_query(str(window))).params  # the window is pushed into the one remaining posting range
    assert "cs" in params and "cs.LG" not in params and params.count(params[0]) == 2


def test_record_blobs_are_zstd_and_older_zlib_blobs_still_read(disk: DiskIndex) -> None:
    import zlib

    from academiceval.sources.mirror.disk_rows import pack, unpack

    (blob,) = disk.conn().execute("SELECT meta FROM rec LIMIT 1").fetchone()
    assert blob[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    raw = unpack(blob)
    assert unpack(zlib.compress(raw, 1)) == raw == unpack(pack(raw))  # an index built before zstd reads the same
    assert len(blob) < 0.7 * len(raw)


@pytest.mark.parametrize("margin", [64, 1])
def test_pages_ordered_from_the_postings_equal_the_general_order(
    disk: DiskIndex, margin: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window + categories page ordered from index `cat_q` alone (`disk_query._postings_page`) equals the page
    ordered from every hit's `rec` row (the path before it): same total, same ids in the same order, for windows of
    a day to all time around real dates, rare and common categories, parents with children, prefixes, both sort
    orders, and pages that start and end inside runs of equal v1 dates (the listings' records share their day).
    With a margin of 1 row around the page, most runs at a page's ends reach past it: every hit is read instead."""
    from collections import Counter
    from datetime import UTC, timedelta

    from academiceval.sources.mirror import disk_query
    from academiceval.sources.mirror.disk_query import plan, run_query
    from academiceval.sources.query import parse_query

    monkeypatch.setattr(disk_query, "TIE_MARGIN", margin)
    c = disk.conn()
    posted = Counter(k for (k,) in c.execute("SELECT cat FROM cat"))
    common = [k for k, _ in posted.most_common(4)]
    rare = sorted(k for k, n in posted.items() if n <= 3)[:4]
    cat_sets = [common[:1], common[:3], rare[:1], rare, [common[0], *rare[:2]], ["astro-ph", "astro-ph.GA", "gr-qc"],
                ["astro-ph*"], ["astro-ph.CO", "astro-ph*", "hep-ph"]]  # fmt: skip
    pubs = [p for (p,) in c.execute("SELECT pub FROM rec ORDER BY pub")]
    rng = random.Random(11)
    anchors = [datetime.fromtimestamp(pubs[rng.randrange(len(pubs))], UTC).replace(tzinfo=None) for _ in range(3)]
    spans = [timedelta(days=d) for d in (0, 6, 30, 365, 5 * 365)]
    windows = [submitted_between(a, a + s) for a in anchors for s in spans] + [None]
    fast = with_ties = id_order_differs = 0
    for w in windows:
        for cats in cat_sets:
            q = str(or_(*map(cat, cats)) if w is None else and_(w, or_(*map(cat, cats))))
            fast += bool(plan(parse_query(q)).cats)
            for order in ("ascending", "descending"):
                total, every = run_query(disk, q, max_results=None, sort_order=order, decode=list)
                assert (total, every) == run_query(
                    disk, q, max_results=None, sort_order=order, decode=list, from_postings=False
                ), q
                if not every:
                    continue
                dates = dict(c.execute(f"SELECT rid, pub FROM rec WHERE rid IN ({','.join(map(str, every))})"))
                runs = Counter(dates.values())
                tied = [i for i, r in enumerate(every) if runs[dates[r]] > 1]
                with_ties += bool(tied)
                by_rid = sorted(every, key=lambda r: (dates[r], r), reverse=order == "descending")
                id_order_differs += by_rid != every
                starts = {0, 1, total // 3, total - 1, total + 5, *tied[:1], *tied[-1:], *(i + 1 for i in tied[:1])}
                for start in sorted(starts):
                    for size in (1, 7, 50):
                        got = run_query(disk, q, start=start, max_results=size, sort_order=order, decode=list)
                        assert got == (total, every[start : start + size]), (q, start, size)
                        before = run_query(
                            disk, q, start=start, max_results=size, sort_order=order, decode=list, from_postings=False
                        )
                        assert got == before, (q, start, size)
    assert fast == len(windows) * len(cat_sets)  # every one of them took the postings path
    assert with_ties > 20 and id_order_differs > 5  # runs of equal dates whose rid order is not the id order


def test_a_stopped_postings_page_leaves_no_read_transaction_open(disk: DiskIndex) -> None:
    """The postings page counts and reads in one read transaction; a query stopped by `time_limit` (what `mirror
    serve` sets) ends it, so the thread's connection does not keep an old state of the index open."""
    from academiceval.sources.errors import QueryTimeoutError

    q = str(and_(submitted_between(datetime(1990, 1, 1), datetime(2026, 1, 1)), or_(cat("astro-ph"), cat("hep-ph"))))
    with pytest.raises(QueryTimeoutError), disk.time_limit(1e-9):
        disk.search_entries(q, max_results=50)
    assert not disk.conn().in_transaction
    total, page = disk.search_entries(q, max_results=50)
    assert total > 50 and len(page) == 50 and not disk.conn().in_transaction


def test_which_plans_are_answered_from_the_postings_alone() -> None:
    """Only a plan whose hits are exactly posting ranges of `cat_q` carries them (`Plan.cats`): categories, a v1
    window pushed into all of them, ORs of such plans; not when another condition still has to hold."""
    from academiceval.sources.mirror.disk_query import plan
    from academiceval.sources.query import andnot, parse_query, updated_between

    april, may = (
        submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 30)),
        submitted_between(datetime(2018, 5, 1), datetime(2018, 5, 31)),
    )
    cats = or_(cat("astro-ph.GA"), cat("gr-qc"))
    alone = [cats, and_(april, cats), and_(cats, april), or_(and_(april, cats), and_(may, cat("hep-ph")))]
    not_alone = [
        and_(april, or_(cat("gr-qc"), and_(may, cat("hep-ph")))),  # the outer window still cuts the inner one
        and_(updated_between(datetime(2018, 4, 1), datetime(2018, 4, 30)), cats),  # a last-updated window
        and_(and_(april, cats), au("Del Maestro")),
        andnot(and_(april, cats), cat("astro-ph.CO")),
        or_(and_(april, cats), au("Del Maestro")),
    ]
    for q in alone:
        assert plan(parse_query(str(q))).cats, str(q)
    for q in not_alone:
        assert not plan(parse_query(str(q))).cats, str(q)
