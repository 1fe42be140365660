"""Publication lists: the real lab BibTeX list, CSL-JSON, bad input, dates with precision, and the import of a
list with its PDFs (a folder of symlinks into ../shared/corpus, never copies)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from academiceval.sources.dates import date_range, format_date, from_parts, not_after, surely_after, surely_before
from academiceval.sources.publist import read_bibtex, read_csl_json, split_files
from academiceval.sources.publist_import import import_publist


@pytest.fixture(scope="session")
def lab(corpus: Path) -> Path:
    return corpus / "lab_publications" / "comp-physics"


@pytest.fixture(scope="session")
def lab_list(lab: Path):  # type: ignore[no-untyped-def]
    return read_bibtex(lab / "ref.bib")


def test_real_list_reads(lab_list) -> None:  # type: ignore[no-untyped-def]
    entries = {e.key: e for e in lab_list.entries}
    assert len(lab_list.entries) == 168  # 221 entries, 53 talks without a title
    assert {i.code for i in lab_list.issues} == {"missing_field"}
    assert all(i.key and i.key.startswith("invited_") and i.line for i in lab_list.issues)
    assert all(e.date_precision == "year" and e.published.month == 1 for e in lab_list.entries)
    e = entries["Bryngelson26"]
    assert e.title == "Apple Neural Engine: Architecture, Programming, and Performance"
    assert e.arxiv_id == "2606.22283" and e.paper_id == "2606.22283" and e.files == ["bryngelson-report-26.pdf"]
    assert [a.name for a in e.authors] == ["S. H. Bryngelson"] and e.authors[0].key == "s h bryngelson"
    # LaTeX accents, {*} equal-contribution marks and braces in names; a bare % in an abstract is text
    names = {a.name for x in lab_list.entries for a in x.authors}
    assert "F. Schäfer" in names and "F. Guéniat" in names and "H. A. Le Berre" in names
    assert not any("*" in n or "{" in n for n in names)
    goldstein = next(x for x in lab_list.entries if "bent acoustic" in x.title.lower())
    assert "4 and 2%, respectively" in goldstein.abstract and goldstein.abstract.endswith("QWR interior.")


BAD_BIB = """@article{good1,
  author = {Doe, Jane and J. {van der Berg}},
  title = {A {Good} Entry},
  year = {2021}, month = {mar}, day = {15},
  file = {papers/a.pdf},
}
@article{broken,
  author = {X. Y},
  title = {Unbalanced {brace,
  year = {2021},
}
@article{good2,
  author = {A. Author},
  title = {Second},
  year = 2022, month = 7,
  file = {../../etc/passwd.pdf},
}
@article{good1,
  title = {Duplicate key},
  year = {2020},
}
@misc{noyear,
  author = {A. Author},
  title = {No date at all},
}
"""


def test_bad_bibtex_is_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    p = tmp_path / "list.bib"
    p.write_text(BAD_BIB)
    pl = read_bibtex(p)
    assert [e.key for e in pl.entries] == ["good1", "good2"]
    codes = {(i.code, i.key) for i in pl.issues}
    assert codes == {("malformed_entry", "broken"), ("duplicate_key", "good1"), ("missing_field", "noyear")}
    assert all(i.file == str(p) and i.line for i in pl.issues)
    g1, g2 = pl.entries
    assert (g1.published, g1.date_precision) == (date(2021, 3, 15), "day")
    assert (g2.published, g2.date_precision) == (date(2022, 7, 1), "month")
    assert [a.name for a in g1.authors] == ["Jane Doe", "J. van der Berg"]


def test_unsafe_file_field_is_refused(tmp_path: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "list.bib").write_text(BAD_BIB)
    (tmp_path / "papers").mkdir()
    rep = import_publist(workspace, tmp_path, parse=False)
    codes = {(i.code, i.key) for i in rep.issues}
    assert ("unsafe_file", "good2") in codes and ("file_missing", "good1") in codes
    assert rep.entries == 2 and rep.stored_meta == 2 and rep.attached == []
    meta = workspace.get_meta("pub:good1")
    assert meta is not None and meta.date_precision == "day" and meta.source == "publist"


def test_file_field_forms() -> None:
    assert split_files("a.pdf;b.pdf") == ["a.pdf", "b.pdf"]
    assert split_files(":papers/x.pdf:PDF") == ["papers/x.pdf"]
    assert split_files("files/12/x y.pdf") == ["files/12/x y.pdf"]


def test_csl_json(tmp_path: Path) -> None:
    items = [
        {
            "id": "a",
            "type": "article-journal",
            "title": "Year only",
            "author": [{"family": "Le Berre", "given": "H."}],
            "issued": {"date-parts": [[2024]]},
            "DOI": "10.1/ABC",
        },
        {
            "id": "b",
            "type": "article-journal",
            "title": "Month",
            "author": [{"literal": "Spencer H. Bryngelson"}],
            "issued": {"date-parts": [[2024, 6]]},
        },
        {
            "id": "c",
            "type": "article-journal",
            "title": "Day",
            "author": [{"family": "Doe", "given": "Jane"}],
            "issued": {"date-parts": [[2024, 6, 2]]},
            "note": "arXiv:2406.01234",
        },
        {"id": "a", "title": "dup", "issued": {"date-parts": [[2020]]}},
        {"id": "d", "title": "no date"},
    ]
    p = tmp_path / "list.json"
    p.write_text(json.dumps(items))
    pl = read_csl_json(p)
    assert [(e.key, e.date_precision) for e in pl.entries] == [("a", "year"), ("b", "month"), ("c", "day")]
    assert pl.entries[0].authors[0].key == "h le berre" and pl.entries[0].doi == "10.1/abc"
    assert pl.entries[2].arxiv_id == "2406.01234"
    assert {(i.code, i.key) for i in pl.issues} == {("duplicate_key", "a"), ("missing_field", "d")}


def test_dates_keep_their_precision() -> None:
    y2024 = date(2024, 1, 1)
    assert not surely_after(y2024, "year", date(2024, 6, 1))  # a 2024 paper may be from January
    assert surely_after(y2024, "year", date(2023, 12, 31))
    assert surely_after(date(2024, 7, 1), "month", date(2024, 6, 30))
    assert not surely_after(date(2024, 6, 1), "month", date(2024, 6, 15))
    # a demo from the same year is older than its target only if known to be earlier
    assert not surely_before(y2024, "year", date(2024, 9, 1), "day")
    assert surely_before(date(2023, 1, 1), "year", date(2024, 9, 1), "day")
    assert not not_after(y2024, "year", y2024, "year")
    assert date_range(date(2024, 2, 1), "month") == (date(2024, 2, 1), date(2024, 2, 29))
    assert from_parts("2024", "feb", "30") == (date(2024, 2, 1), "month")  # an invalid day lowers the precision
    assert from_parts("in press") is None
    assert format_date(y2024, "year") == "2024"


SUBSET = ["bryngelson-PRE-19.pdf", "bryngelson-SNH-20.pdf", "bryngelson-PRF-18.pdf", "zeng-ICLR-23.pdf"]


@pytest.fixture(scope="session")
def import_dir(lab: Path, lab_list, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """A list of real entries (rewritten as BibTeX) next to symlinked real PDFs, with one problem of each kind."""
    root = tmp_path_factory.mktemp("publist")
    (root / "papers").mkdir()
    for name in SUBSET:
        (root / "papers" / name).symlink_to(lab / "papers" / name)
    by_file = {e.files[0]: e for e in lab_list.entries if e.files}

    def bib(key: str, e, file: str | None, doi: str | None = None) -> str:  # type: ignore[no-untyped-def]
        authors = " and ".join(a.name for a in e.authors)
        extra = (f"  file = {{{file}}},\n" if file else "") + (f"  doi = {{{doi}}},\n" if doi else "")
        return (
            f"@article{{{key},\n  author = {{{authors}}},\n  title = {{{e.title}}},\n  year = {{{e.published.year}}},\n"
            f"  abstract = {{{e.abstract}}},\n{extra}}}\n"
        )

    pre, snh, prf = by_file["bryngelson-PRE-19.pdf"], by_file["bryngelson-SNH-20.pdf"], by_file["bryngelson-PRF-18.pdf"]
    text = (
        bib("pre19", pre, None, doi="10.1103/PhysRevE.100.012203")  # found by the DOI printed on page 1
        + bib("snh20", snh, "bryngelson-SNH-20.pdf")  # retitled in print; abstract identical: attached
        # names another paper's PDF: title mismatch, not attached; that PDF is then free for its DOI match above
        + bib("wrongpdf", by_file["bryngelson-JCP-24.pdf"], "papers/bryngelson-PRE-19.pdf")
        + bib("prf18", prf, None)  # no file, no DOI: found by its parsed title
    )
    (root / "ref.bib").write_text(text)
    return root  # zeng-ICLR-23.pdf is named by no entry: reported


def test_import_attaches_checks_and_reports(import_dir: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    rep = import_publist(workspace, import_dir)
    how = {a.key: a.how for a in rep.attached}
    assert how == {"pre19": "doi", "snh20": "file", "prf18": "title"}
    codes = {(i.code, i.key) for i in rep.issues}
    assert ("title_mismatch", "wrongpdf") in codes
    assert ("unlisted_pdf", None) in codes and any("zeng-ICLR-23.pdf" in i.message for i in rep.issues)
    assert rep.metadata_only == ["wrongpdf"]
    paper = workspace.get_paper_by_arxiv("pub:pre19")
    assert paper is not None and paper.title.startswith("Irregular dynamics of cellular blood flow")
    assert workspace.get_meta("pub:pre19").date_precision == "year"
    # name variants merged on evidence: "S. H. Bryngelson" is not in this small list in two forms, keys stay
    assert {a.key for a in workspace.get_meta("pub:prf18").authors} >= {"s h bryngelson", "j b freund"}
    again = import_publist(workspace, import_dir)  # a second run reuses the parsed papers and says the same
    assert {a.key: a.how for a in again.attached} == how
