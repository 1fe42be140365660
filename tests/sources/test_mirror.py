"""The in-process mirror over real corpus files: queries evaluated locally, ids, PDFs, and `mirror index`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.sources import open_source
from academiceval.sources.base import MetadataSource
from academiceval.sources.errors import InvalidArxivIdError, UnknownIdError, UnsafePathError
from academiceval.sources.ids import pdf_filename, safe_child
from academiceval.sources.mirror import MirrorSource
from academiceval.sources.mirror.workspace import index_mirror, mirror_pdf_path
from academiceval.sources.query import and_, cat, submitted_between


def test_is_a_metadata_source(mirror: MirrorSource) -> None:
    assert isinstance(mirror, MetadataSource)
    assert open_source(str(mirror.root)).index is mirror.index  # the same cached index


def test_formats_found(mirror: MirrorSource) -> None:
    st = mirror.index.stats
    assert st["listing"].records == 1293 and st["listing"].errors == 0
    assert st["abs"].records == 1188 + 0 and st["abs"].files == 1189  # + bad/noid.abs
    assert st["kaggle"].records == 200 + 1 and st["kaggle"].errors == 1  # + the truncated copy
    assert st["scalar"].records == 305 and st["unarxive"].records == 49
    assert st["pdf"].records == 2  # 0807.3577_JCAP_version.pdf is not named by an id
    reasons = " | ".join(e.message for e in mirror.index.errors)
    assert "no 'arXiv:' id line" in reasons and "invalid JSON" in reasons and "HTML" in reasons


def test_window_query_matches_ground_truth(mirror: MirrorSource) -> None:
    q = str(and_(cat("astro-ph*"), submitted_between(datetime(2018, 4, 1), datetime(2018, 4, 15, 23, 59))))
    got = {m.arxiv_id for m in mirror.iter_search(q, page_size=500)}
    lo, hi = datetime(2018, 4, 1, tzinfo=UTC), datetime(2018, 4, 15, 23, 59, 59, tzinfo=UTC)
    truth = {
        r.meta.arxiv_id
        for r in mirror.index.iter_records()
        if lo <= r.published_at <= hi and any(c.startswith("astro-ph") for c in r.meta.categories)
    }
    assert got == truth and len(truth) > 500


def test_author_queries_agree_with_recorded_arxiv_answers(mirror: MirrorSource) -> None:
    # arXiv answered these in 2016 (fixtures): its hits that the mirror holds must be found by the same query
    hit = mirror.search('au:del_maestro AND ti:"quantum criticality"').items
    assert {"1111.2011"} <= {m.arxiv_id for m in hit}
    checker = {m.arxiv_id for m in mirror.search("au:del_maestro AND ti:checkerboard").items}
    rest = {
        m.arxiv_id
        for m in mirror.search("au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)", max_results=50).items
    }
    everything = {m.arxiv_id for m in mirror.search("au:del_maestro", max_results=50).items}
    assert checker and not (checker & rest) and rest < everything
    assert {m.arxiv_id for m in mirror.search('au:"A Del Maestro"', max_results=50).items} == everything


def test_sorting_and_paging(mirror: MirrorSource) -> None:
    q = "cat:astro-ph.GA"
    desc = [m.arxiv_id for m in mirror.iter_search(q, page_size=70, sort_order="descending")]
    asc = [m.arxiv_id for m in mirror.iter_search(q, page_size=70, sort_order="ascending")]
    assert desc == asc[::-1] and len(desc) == len(set(desc)) > 300
    page = mirror.search(q, start=10, max_results=5, sort_order="ascending")
    assert [m.arxiv_id for m in page.items] == asc[10:15] and page.total_results == len(asc)
    dates = [m.published for m in mirror.iter_search(q, limit=120, sort_order="ascending")]
    assert dates == sorted(dates) and len(dates) == 120


def test_fetch_ids_merges_sources_and_skips_unknown(mirror: MirrorSource) -> None:
    got = {m.arxiv_id: m for m in mirror.fetch_ids(["0704.0001", "hep-th/9709111v1", "9999.99999", "2212.11867"])}
    assert set(got) == {"0704.0001", "hep-th/9709111", "2212.11867"}
    assert got["hep-th/9709111"].version == 3  # ftp record (v3) wins over orig/ v1, v2
    assert got["0704.0001"].source == "kaggle" and got["0704.0001"].version == 2


def test_fetch_pdf_copies_atomically_and_guards_paths(mirror: MirrorSource, tmp_path: Path) -> None:
    p = mirror.fetch_pdf("2203.00130v1", tmp_path)
    assert p == tmp_path.resolve() / "2203.00130.pdf" and p.read_bytes()[:5] == b"%PDF-"
    before = mirror.pdf_requests
    assert mirror.fetch_pdf("2203.00130", tmp_path) == p and mirror.pdf_requests == before  # resumed: no copy
    with pytest.raises(UnknownIdError):
        mirror.fetch_pdf("2401.00001", tmp_path)
    for evil in ("../../etc/passwd", "../2203.00130", "/etc/passwd", "2203.00130/../../x"):
        with pytest.raises(InvalidArxivIdError):
            mirror.fetch_pdf(evil, tmp_path)
    assert pdf_filename("hep-th/9709111v2") == "hep-th_9709111.pdf"
    assert safe_child(tmp_path, pdf_filename("hep-th/9709111")).parent == tmp_path.resolve()
    with pytest.raises(UnsafePathError):
        safe_child(tmp_path, "../escape.pdf")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["2203.00130.pdf"]  # no .part left behind


def test_index_mirror_into_workspace(mirror_dir: Path, workspace) -> None:
    report = index_mirror(workspace, mirror_dir)
    n = len(MirrorSource(mirror_dir).index)
    assert report.papers_stored == n == workspace.count_meta()
    assert report.parsed_papers_stored == 49 and report.pdfs_found == 2
    formats = {"abs", "atom", "kaggle", "listing", "pdf", "scalar", "unarxive", "pdf-stamp"}  # 2203.00130: stamp only
    assert {r[0] for r in report.rows()} == formats and report.kept_by_format["pdf-stamp"] == 1
    assert sum(report.kept_by_format.values()) == n and report.kept_by_format["listing"] > 1200
    assert report.reasons()[0][1] >= 1
    reasons = [msg for _, msg in report.errors]
    assert any("id line" in r for r in reasons) and any("invalid JSON" in r for r in reasons)
    stored = workspace.db.execute("SELECT COUNT(*) FROM mirror_error").fetchone()[0]
    assert stored == len(report.errors)
    paper = workspace.get_paper_by_arxiv("2212.11867")
    assert paper is not None and paper.source == "unarxive" and paper.citations
    assert workspace.get_meta("1111.2011").version == 2  # type: ignore[union-attr]
    assert mirror_pdf_path(workspace, "1111.2011") is not None
    assert "jane doe" not in {r[0] for r in workspace.db.execute("SELECT author_key FROM authorship LIMIT 5000")}
    again = index_mirror(workspace, mirror_dir)  # idempotent
    assert again.papers_stored == n and workspace.count_meta() == n


def test_cli_mirror_index(mirror_dir: Path, tmp_path: Path) -> None:
    from academiceval.cli.main import app

    res = CliRunner().invoke(app, ["mirror", "index", str(mirror_dir), "--home", str(tmp_path / "ws")])
    assert res.exit_code == 0, res.output
    assert "listing" in res.output and "1293" in res.output and "unreadable records by reason" in res.output


def test_streaming_index_equals_in_memory_merge(corpus: Path, tmp_path: Path, workspace) -> None:
    """Without a cached index, `index_mirror` streams files and merges against the workspace: same result."""
    from academiceval.sources.mirror.index import MirrorIndex

    d = tmp_path / "m"
    d.mkdir()
    abs_root = corpus / "metadata/arxiv_browse_abs/tests_data"
    (d / "0704").symlink_to(abs_root / "ftp/arxiv/papers/0704", target_is_directory=True)
    (d / "9709").symlink_to(abs_root / "orig/hep-th/papers/9709", target_is_directory=True)
    (d / "ftp9709").symlink_to(abs_root / "ftp/hep-th/papers/9709", target_is_directory=True)
    (d / "k.jsonl").symlink_to(corpus / "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    report = index_mirror(workspace, d, batch=7)  # tiny batches: merging across transactions is exercised
    expected = {r.meta.arxiv_id: r.meta for r in MirrorIndex.build(d.resolve()).iter_records()}
    got = {m.arxiv_id: m for m in workspace.iter_meta()}
    assert report.papers_stored == len(expected) == len(got) > 200
    assert got == expected
    assert got["hep-th/9709111"].version == 3 and got["0704.0001"].source == "kaggle"


def test_text_terms_match_ground_truth(mirror: MirrorSource) -> None:
    from academiceval.sources.mirror.index import text_tokens

    recs = list(mirror.index.iter_records())

    def ids(q: str) -> set[str]:
        return {m.arxiv_id for m in mirror.iter_search(q, page_size=2000)}

    title = {r.meta.arxiv_id: text_tokens(r.meta.title) for r in recs}
    word = {a for a, t in title.items() if "galaxy" in t}
    phrase = {a for a, t in title.items() if any(t[i : i + 2] == ["dark", "matter"] for i in range(len(t)))}
    both = {a for a, t in title.items() if "dark" in t and "matter" in t}
    prefix = {a for a, t in title.items() if any(w.startswith("galax") for w in t)}
    assert ids("ti:galaxy") == word and len(word) > 20
    assert ids('ti:"dark matter"') == phrase and len(phrase) > 10
    assert ids("ti:dark AND ti:matter") == both >= phrase
    assert ids("ti:galax*") == prefix > word
    in_abs = {r.meta.arxiv_id for r in recs if "diphoton" in text_tokens(r.meta.abstract)}
    assert ids("abs:diphoton") == in_abs and "0704.0001" in in_abs
    assert ids("all:diphoton") >= in_abs


def test_a_single_file_is_a_mirror(corpus: Path) -> None:
    src = open_source(str(corpus / "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"))
    assert isinstance(src, MirrorSource) and len(src.index) == 200
    assert src.search("cat:hep-ph", max_results=500).total_results == sum(
        1 for r in src.index.iter_records() if any(c == "hep-ph" or c.startswith("hep-ph.") for c in r.meta.categories)
    )
