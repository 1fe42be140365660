"""Record readers on the real corpus: .abs files (incl. Latin-1 and per-version originals), listings, Kaggle lines,
SCALAR metadata, unarXive papers; fuzzing the .abs parser."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from academiceval.sources.errors import RecordParseError
from academiceval.sources.mirror.records import (
    MirrorRecord,
    decode_bytes,
    merge_records,
    read_abs_text,
    read_kaggle_lines,
    read_scalar,
)
from academiceval.sources.mirror.unarxive import read_unarxive_lines

ABS = "metadata/arxiv_browse_abs/tests_data"


def _abs(corpus: Path, rel: str) -> MirrorRecord:
    (rec,) = list(read_abs_text(decode_bytes((corpus / ABS / rel).read_bytes()), path=rel))
    assert isinstance(rec, MirrorRecord), rec
    return rec


def test_abs_record_fields(corpus: Path) -> None:
    r = _abs(corpus, "ftp/hep-th/papers/9709/9709111.abs").meta
    assert (r.arxiv_id, r.version) == ("hep-th/9709111", 3)
    assert (r.published, r.updated) == (date(1997, 9, 16), date(1997, 11, 3))
    assert r.categories == ["hep-th", "hep-ph"] and r.primary_category == "hep-th"
    assert r.doi == "10.1088/1126-6708/1997/11/001" and r.journal_ref == "JHEP 9711:001,1997"
    assert next((a.name, a.affiliations) for a in r.authors) == ("Andrea Brignole", ["CERN-TH"])
    assert r.abstract.startswith("If the gravitino is light")


def test_latin1_abs_and_latex_names(corpus: Path) -> None:
    r = _abs(corpus, "ftp/arxiv/papers/1607/1607.08199.abs").meta
    assert r.version == 5 and r.journal_ref and r.journal_ref.startswith("Épijournal")
    assert "Emanuele Macrì" in [a.name for a in r.authors]


def test_per_version_originals_merge_to_latest(corpus: Path) -> None:
    v1 = _abs(corpus, "orig/hep-th/papers/9709/9709111v1.abs")
    latest = _abs(corpus, "ftp/hep-th/papers/9709/9709111.abs")
    assert v1.meta.version == 1 and v1.meta.categories == ["hep-th"]  # no Categories line: from the archive
    merged = merge_records(latest, v1)
    assert merged.meta.version == 3 and merged.meta.categories == ["hep-th", "hep-ph"]
    assert merged.meta.published == date(1997, 9, 16)


def test_every_real_abs_file_reads(corpus: Path) -> None:
    files = sorted((corpus / ABS).rglob("*.abs"))
    assert len(files) == 1188
    ok = errors = 0
    for f in files:
        for item in read_abs_text(decode_bytes(f.read_bytes()), path=str(f)):
            if isinstance(item, MirrorRecord):
                ok += 1
                assert item.meta.published.year >= 1986 and item.meta.title
            else:
                errors += 1
    assert (ok, errors) == (1188, 0)


def test_listing_dates_come_from_records(corpus: Path) -> None:
    text = (corpus / "metadata/arxiv_browse_astro-ph_listings/astro-ph_listing_2018-01.txt").read_text()
    recs = [r for r in read_abs_text(text, fmt="listing") if isinstance(r, MirrorRecord)]
    assert len(recs) == 1385
    first = recs[0].meta
    assert first.arxiv_id == "1801.00006" and first.published == date(2017, 12, 29)  # v1 date, not listing month
    assert all(r.meta.abstract == "" and r.meta.authors for r in recs)


def test_broken_abs_records_are_reported() -> None:
    bad = "------------\n\\\\\nFrom: x\nDate: Tue, 16 Sep 1997 14:44:58 GMT\n\nTitle: T\n\\\\\n\\\\\n"
    (err,) = list(read_abs_text("-" * 30 + "\n" + bad.split("\n", 1)[1], path="f.abs"))
    assert isinstance(err, RecordParseError) and "id line" in err.message
    nodate = "\\\\\narXiv:2101.00001\nTitle: T\nAuthors: A B\n\\\\\n  abs\n\\\\\n"
    (err2,) = list(read_abs_text(nodate, path="g.abs"))
    assert isinstance(err2, RecordParseError) and "Date" in err2.message


def test_kaggle_lines_and_overlap_with_abs(corpus: Path) -> None:
    path = corpus / "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"
    recs = list(read_kaggle_lines(iter(path.read_text().splitlines()), path=str(path)))
    assert len(recs) == 200 and all(isinstance(r, MirrorRecord) for r in recs)
    k = recs[0].meta
    assert (k.arxiv_id, k.version, k.published, k.updated) == ("0704.0001", 2, date(2007, 4, 2), date(2007, 7, 24))
    assert [a.name for a in k.authors] == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"]
    a = _abs(corpus, "ftp/arxiv/papers/0704/0704.0001.abs")
    assert [x.key for x in a.meta.authors] == [x.key for x in k.authors]  # same keys from both formats
    bad = list(read_kaggle_lines(iter(['{"id": "0704.0001"', "[1,2]", '{"id": "x"}']), path="k"))
    assert all(isinstance(b, RecordParseError) for b in bad) and len(bad) == 3


def test_scalar_metadata(corpus: Path) -> None:
    data = json.loads((corpus / "metadata/scalar_iclr2025_metadata.json").read_text())
    recs = [r for r in read_scalar(data, path="scalar") if isinstance(r, MirrorRecord)]
    assert len(recs) == 305
    m = recs[0].meta
    assert (m.arxiv_id, m.version, m.primary_category) == ("2410.05602", 1, "stat.ML")
    assert len({a.key for r in recs for a in r.meta.authors}) > 1500


def test_unarxive_papers(corpus: Path) -> None:
    path = corpus / "samples/unarXive_sample/arXiv_src_2212_086.jsonl"
    recs = list(read_unarxive_lines(iter(path.read_text().splitlines()), path=str(path)))
    assert len(recs) == 49 and all(isinstance(r, MirrorRecord) and r.paper for r in recs)
    papers = [r.paper for r in recs]  # type: ignore[union-attr]
    n_cites = 0
    for p in papers:
        # issue 16: unheaded paragraphs before the first heading are front matter, never body — a paper whose
        # every paragraph is unheaded (unarXive lost its headings: 4 of the 49) keeps no sections, with a warning
        assert p.paper_id == f"unarxive:{p.arxiv_id}" and (p.sections or "front-matter" in " ".join(p.warnings))
        for c in p.citations:  # every citation span points at its marker and at a real reference
            assert p.sections[c.section_index].text[c.start : c.end] == c.text
            assert c.text == f"[{c.reference_indices[0] + 1}]" and c.reference_indices[0] < len(p.references)
            n_cites += 1
        assert "{{cite:" not in " ".join(s.text for s in p.sections)
    assert n_cites > 2000
    assert sum(1 for p in papers for r in p.references if r.arxiv_id) > 200
    assert sum(1 for p in papers if p.has_role("introduction")) > 20
    gj = next(p for p in papers if "GJ 486b" in p.title)
    # issue 16: "5 Cross-correlation method" is followed by subsections 1, 2 and then "7 Clouds and hazes": the
    # subsections belong to section 6, which has no paragraph of its own (unarXive drops it) — not to section 5
    assert [s.number for s in gj.sections if s.level == 2][:2] == ["6.1", "6.2"]
    assert next(s for s in gj.sections if s.number == "6").heading == ""
    assert sum(1 for p in papers if not p.sections) == 4


_ABS_LINES = st.sampled_from(
    [
        "-" * 40,
        "\\\\",
        "arXiv:2101.00001",
        "arXiv:hep-th/9901001",
        "arXiv:../../etc",
        "Date: Tue, 16 Sep 1997 14:44:58 GMT",
        "Date: garbage",
        "Date (revised v2): Wed, 17 Sep 1997 10:00:00 GMT",
        "Title: A",
        "Title:",
        "Authors: A (B",
        "Authors:",
        "Authors: ((1) x)",
        "Categories: hep-th",
        "  continuation",
        "",
        "Comments: c",
        "DOI: ",
    ]
)


@settings(max_examples=250, deadline=None)
@given(st.lists(_ABS_LINES | st.text(max_size=30), max_size=25).map("\n".join))
def test_fuzz_abs_parser_never_crashes(text: str) -> None:
    for item in read_abs_text(text, path="fuzz"):
        assert isinstance(item, MirrorRecord | RecordParseError)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=6,
)
_KAGGLE_KEYS = ["id", "authors", "title", "abstract", "categories", "versions", "doi", "comments", "journal-ref"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(_KAGGLE_KEYS), _JSON | st.just([{"created": "Mon, 2 Apr 2007 19:18:42 GMT"}])))
def test_fuzz_kaggle_lines_never_crash(obj: dict) -> None:
    import json as _json

    for item in read_kaggle_lines(iter([_json.dumps(obj)]), path="fuzz"):
        assert isinstance(item, MirrorRecord | RecordParseError)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_mutated_real_abs(corpus: Path, data: st.DataObject) -> None:
    text = (corpus / ABS / "ftp/hep-th/papers/9709/9709111.abs").read_text()
    chars = list(text)
    for _ in range(data.draw(st.integers(1, 10))):
        i = data.draw(st.integers(0, len(chars) - 1))
        chars[i] = data.draw(st.sampled_from(["\\", "{", "}", "(", ")", ",", "\n", ":", "-", "é", "\x00", " ", "v"]))
    for item in read_abs_text("".join(chars), path="fuzz"):
        assert isinstance(item, MirrorRecord | RecordParseError)
