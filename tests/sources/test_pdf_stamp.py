"""arXiv stamps on page 1 of real corpus PDFs, and the metadata records made from them for PDF-only papers."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import pymupdf
import pytest

from academiceval.sources.errors import NotAPdfError
from academiceval.sources.mirror.pdf_stamp import parse_stamp, read_arxiv_stamp
from academiceval.sources.mirror.stamped import STAMP_SOURCE, id_month_end
from academiceval.sources.mirror.workspace import index_mirror, mirror_pdf_path

ABS_2203_00130 = """------------------------------------------------------------------------------
\\\\
arXiv:2203.00130
From: Somebody <x@example.org>
Date: Mon, 28 Feb 2022 23:10:01 GMT   (4000kb)

Title: Paper Plain: Making Medical Research Papers Approachable to Healthcare Consumers
Authors: Tal August, Lucy Lu Wang
Categories: cs.HC cs.CL
\\\\
  An abstract.
\\\\
"""


def test_stamps_of_every_corpus_pdf_match_pdf_check(corpus: Path) -> None:
    """PDF_CHECK.tsv records the stamp of each PDF (empty when there is none): page-1 reads must agree."""
    with (corpus / "PDF_CHECK.tsv").open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) >= 60
    stamped = 0
    for row in rows:
        stamp = read_arxiv_stamp(corpus / row["path"])
        got = f"{stamp.arxiv_id}v{stamp.version}" if stamp else ""
        assert got == row["arxiv_stamp"], row["path"]
        if stamp is None:
            continue
        stamped += 1
        assert (stamp.primary_category and "." in stamp.primary_category) or "-" in stamp.primary_category
        end = id_month_end(stamp.arxiv_id)
        # an id's YYMM is the announcement month of v1: v1 may be submitted a few days before it, never after it
        assert end is not None and (end.replace(day=1) - stamp.date).days <= 7, row["path"]
        if stamp.version == 1:
            assert stamp.date <= end, row["path"]
    assert stamped == sum(1 for r in rows if r["arxiv_stamp"]) == 34


def test_known_stamps(corpus: Path) -> None:
    s = read_arxiv_stamp(corpus / "pdf" / "2203.00130v1.pdf")
    assert s is not None and (s.arxiv_id, s.version, s.primary_category, s.date) == (
        "2203.00130",
        1,
        "cs.HC",
        date(2022, 2, 28),
    )
    s = read_arxiv_stamp(corpus / "pdf" / "1111.2011v2.pdf")
    assert s is not None and (s.primary_category, s.date) == ("cond-mat.str-el", date(2012, 4, 2))
    # a venue version and a non-arXiv paper carry no stamp
    assert read_arxiv_stamp(corpus / "pdf" / "naacl2018_ELMo.pdf") is None
    assert read_arxiv_stamp(corpus / "pdf" / "osdi2004_MapReduce.pdf") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("arXiv:2203.00130v1  [cs.HC]  28 Feb 2022", ("2203.00130", 1, "cs.HC", date(2022, 2, 28))),
        ("arXiv:hep-th/9901001v2  1 Feb 1999", ("hep-th/9901001", 2, "hep-th", date(1999, 2, 1))),
        ("arXiv:math.AG/0101001v1 [math.AG] Jan 3, 2001", ("math.AG/0101001", 1, "math.AG", date(2001, 1, 3))),
        ("arXiv:2101.00001v3 [cs.LG] 2021-03-04", ("2101.00001", 3, "cs.LG", date(2021, 3, 4))),
        ("arXiv:2101.00001v2[cs.LG]4September2021", ("2101.00001", 2, "cs.LG", date(2021, 9, 4))),
        ("2202 beF 82  ]CH.sc[  1v03100.3022:viXra", ("2203.00130", 1, "cs.HC", date(2022, 2, 28))),  # reversed
    ],
)
def test_parse_stamp_formats(text: str, expected: tuple) -> None:
    s = parse_stamp(text)
    assert s is not None and (s.arxiv_id, s.version, s.primary_category, s.date) == expected


@pytest.mark.parametrize(
    "text",
    [
        "as shown in arXiv:1706.03762, attention suffices",  # a citation, not a stamp: no date after it
        "arXiv:2203.00130v1 [cs.HC] 31 Feb 2022",  # no such day
        "arXiv:2203.00130v1 [cs.HC] 28 Foo 2022",
    ],
)
def test_parse_stamp_rejects_non_stamps(text: str) -> None:
    assert parse_stamp(text) is None


def _pdf(path: Path, *, stamp: str | None, body: str, vertical_chars: bool = False) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), body, fontsize=11)
    if stamp and vertical_chars:  # one character per line, bottom to top, as some generators write it
        for k, ch in enumerate(stamp):
            page.insert_text((20, 700 - 7 * k), ch, fontsize=10, rotate=90)
    elif stamp:
        page.insert_text((20, 650), stamp, fontsize=10, rotate=90)
    doc.save(path)
    doc.close()
    return path


def test_rotated_stamp_beats_citations_in_the_body(tmp_path: Path) -> None:
    body = "We build on arXiv:1706.03762v5 [cs.CL] 6 Dec 2017 and others."  # a full stamp-like citation
    p = _pdf(tmp_path / "a.pdf", stamp="arXiv:hep-th/9901001v2  1 Feb 1999", body=body)
    s = read_arxiv_stamp(p)
    assert s is not None and (s.arxiv_id, s.version, s.date) == ("hep-th/9901001", 2, date(1999, 2, 1))
    p = _pdf(tmp_path / "b.pdf", stamp="arXiv:2301.01234v1 [cs.CL] 3 Jan 2023", body="Hello.", vertical_chars=True)
    s = read_arxiv_stamp(p)
    assert s is not None and (s.arxiv_id, s.date) == ("2301.01234", date(2023, 1, 3))
    assert read_arxiv_stamp(_pdf(tmp_path / "c.pdf", stamp=None, body="No stamp here.")) is None
    (tmp_path / "d.pdf").write_bytes(b"<html>not a pdf</html>")
    with pytest.raises(NotAPdfError):
        read_arxiv_stamp(tmp_path / "d.pdf")


def test_id_month_end() -> None:
    assert id_month_end("2203.00130") == date(2022, 3, 31)
    assert id_month_end("2402.00001") == date(2024, 2, 29)
    assert id_month_end("hep-th/9901001") == date(1999, 1, 31)
    assert id_month_end("math.AG/0101001") == date(2001, 1, 31)


@pytest.fixture()
def stamp_mirror(corpus: Path, tmp_path: Path) -> Path:
    d = tmp_path / "stampmirror"
    d.mkdir()
    for name in ("2203.00130v1.pdf", "2206.10883v3.pdf", "1111.2011v2.pdf"):
        (d / name).symlink_to(corpus / "pdf" / name)
    atom = corpus / "arxiv_api" / "arxiv.py_fixtures" / "atom_xml_2016" / "id_list=1111.2011v2.xml"
    (d / "id_list.xml").symlink_to(atom)  # a real record: the stamp must not replace it
    (d / "layoutparser.pdf").symlink_to(corpus / "pdf" / "partial" / "2103.15348v2_pages1-2.pdf")  # by stamp
    _pdf(d / "2401.00001v1.pdf", stamp=None, body="Named by id but unstamped and without a record.")
    return d


def test_index_mirror_makes_stamp_records(stamp_mirror: Path, workspace, tmp_path: Path) -> None:
    from academiceval.sources.mirror import MirrorSource

    report = index_mirror(workspace, stamp_mirror)  # streaming path (no index of this dir in the process yet)
    m = workspace.get_meta("2203.00130")
    assert m is not None and m.source == STAMP_SOURCE and m.version == 1
    assert (m.published, m.updated, m.primary_category, m.categories) == (
        date(2022, 2, 28),
        date(2022, 2, 28),
        "cs.HC",
        ["cs.HC"],
    )
    assert m.title.startswith("Paper Plain") and len(m.abstract) > 200 and m.authors == []
    v3 = workspace.get_meta("2206.10883")
    assert v3 is not None and v3.version == 3 and v3.updated == date(2022, 7, 22)
    # only v3 is dated: the v1 date is the id's month, recorded as a month (not as its last day, exact)
    assert (v3.published, v3.date_precision) == (date(2022, 6, 1), "month")
    assert (m.date_precision, workspace.get_meta("2103.15348").date_precision) == ("day", "month")  # type: ignore[union-attr]
    notes = workspace.db.execute("SELECT path, message FROM mirror_error WHERE code='approx_v1_date'").fetchall()
    assert sorted(Path(r[0]).name for r in notes) == ["2206.10883v3.pdf", "layoutparser.pdf"]  # v3 and v2
    assert len(report.notes) == 2
    assert any("known to the month of the id only: published = 2022-06" in n for _, n in notes)
    assert workspace.get_meta("1111.2011").source == "atom"  # type: ignore[union-attr]
    lp = workspace.get_meta("2103.15348")
    assert lp is not None and lp.source == STAMP_SOURCE and lp.title.startswith("LayoutParser")
    assert mirror_pdf_path(workspace, "2103.15348") == stamp_mirror.resolve() / "layoutparser.pdf"
    assert workspace.get_meta("2401.00001") is None
    assert any("2401.00001" in msg and "no arXiv stamp" in msg for _, msg in report.errors)
    assert report.formats[STAMP_SOURCE].records == 3 and report.kept_by_format[STAMP_SOURCE] == 3

    # the in-process source sees the same records, and a second index (now from its cached index) agrees
    src = MirrorSource(stamp_mirror)
    got = {x.arxiv_id: x for x in src.fetch_ids(["2203.00130v1", "2206.10883", "2103.15348", "2401.00001"])}
    assert set(got) == {"2203.00130", "2206.10883", "2103.15348"}
    assert got["2206.10883"] == v3 and got["2203.00130"] == m
    assert [x.arxiv_id for x in src.search('ti:"paper plain"').items] == ["2203.00130"]
    assert "2203.00130" in {x.arxiv_id for x in src.search("cat:cs.HC").items}
    again = index_mirror(workspace, stamp_mirror)
    assert again.papers_stored == report.papers_stored and workspace.get_meta("2203.00130") == m

    # a real record arriving later replaces the stamp record whole; re-indexing the PDFs never brings it back
    real = tmp_path / "real"
    real.mkdir()
    (real / "2203.00130.abs").write_text(ABS_2203_00130)
    index_mirror(workspace, real)
    for _ in range(2):
        r = workspace.get_meta("2203.00130")
        assert r is not None and r.source == "abs" and r.categories == ["cs.HC", "cs.CL"] and len(r.authors) == 2
        index_mirror(workspace, stamp_mirror)


def test_unarxive_references_get_titles_and_keep_ids(corpus: Path) -> None:
    from academiceval.sources.mirror.unarxive import read_unarxive_lines

    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    with path.open() as f:
        papers = {r.meta.arxiv_id: r.paper for r in read_unarxive_lines(iter(f), path=str(path)) if r.paper}
    refs = [ref for p in papers.values() for ref in p.references]
    titled = [r for r in refs if r.title]
    assert len(titled) > 0.5 * len(refs) and sum(1 for r in refs if r.authors) > 0.8 * len(refs)
    first = papers["2212.11867"].references[0]  # unarXive resolved it to 2104.06921; the string names no id
    assert first.arxiv_id == "2104.06921" and first.year == 2022
    assert first.title == "On the dynamics of the roots of polynomials under differentiation"
    assert first.authors == ["T. Alazard", "O. Lazar", "Q. H. Nguyen"]
    hinton = next(r for r in papers["2212.11803"].references if "arXiv:2009.13044" in r.raw)
    assert hinton.arxiv_id == "2009.13044" and hinton.year == 2020  # not 2009, read from inside the id
    # journal fragments of title-less physics entries are not kept as titles
    assert not any(r.title and ("doi" in r.title.lower() or len(r.title) < 6) for r in refs)
