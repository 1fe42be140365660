"""Non-UTF-8 bytes and NUL characters in mirror metadata (issue 10, finding 14) used to be stored silently:
garbled author lists (a UTF-8 file with one bad byte was decoded whole as Latin-1) and NULs inside titles.
Now each repair is a `RecordWarning` at file:line (stored in `mirror_error`), NULs are removed, and a UTF-8
file keeps its accents."""

from __future__ import annotations

import json
from pathlib import Path

from academiceval.sources.mirror.records import MirrorRecord, RecordWarning, decode_bytes, read_kaggle_lines
from academiceval.sources.mirror.scan import detect, read_file

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"


def kaggle_lines(corpus: Path, n: int = 5) -> list[bytes]:
    return (corpus / KAGGLE).read_bytes().splitlines(keepends=True)[:n]


def items_of(path: Path) -> tuple[list[MirrorRecord], list[RecordWarning], list]:
    items = list(read_file(detect(path)))
    recs = [i for i in items if isinstance(i, MirrorRecord)]
    warns = [i for i in items if isinstance(i, RecordWarning)]
    errs = [i for i in items if not isinstance(i, MirrorRecord | RecordWarning)]
    return recs, warns, errs


def test_kaggle_line_with_bad_bytes_and_nuls_is_kept_repaired_and_located(corpus: Path, tmp_path: Path) -> None:
    lines = kaggle_lines(corpus)
    d = json.loads(lines[1])
    d["title"] = "Zeros of\u0000 random polynomials"  # an escaped NUL inside a string
    lines[1] = json.dumps(d).encode() + b"\n"
    lines[2] = lines[2].replace(b'"authors":"', b'"authors":"\xff\xfe', 1)  # bytes that are not UTF-8
    lines[3] = lines[3].replace(b'"title":"', b'"title":"\x00', 1)  # a raw NUL: not even valid JSON
    f = tmp_path / "arxiv-metadata-oai-snapshot.jsonl"
    f.write_bytes(b"".join(lines))
    recs, warns, errs = items_of(f)
    assert len(recs) == 5 and not errs  # before: the raw-NUL line was lost as invalid JSON
    assert all("\x00" not in r.meta.title for r in recs)  # before: a NUL in the stored title
    where = sorted((w.source.rsplit(":", 1)[1], w.message) for w in warns)
    assert [w[0] for w in where] == ["2", "3", "4"], where
    assert "U+FFFD" in dict(where)["3"] and "NUL" in dict(where)["2"] and "NUL" in dict(where)["4"]
    assert all(w.source.startswith(str(f)) for w in warns)


def test_utf8_abs_with_one_bad_byte_keeps_its_accents(tmp_path: Path) -> None:
    text = "Authors: Jos\u00e9 Mu\u00f1oz and Ana \u00c7elik\nTitle: Zeros\n".encode() + b"Comments: bad \xff byte\n"
    warnings: list[RecordWarning] = []
    out = decode_bytes(text, path="x.abs", warnings=warnings)
    assert "Jos\u00e9 Mu\u00f1oz" in out and "\u00c7elik" in out  # before: "JosÃ© MuÃ±oz" (whole file as Latin-1)
    assert [(w.source, w.code) for w in warnings] == [("x.abs:3", "record_warning")]


def test_latin1_abs_is_still_read_as_latin1_and_said_so() -> None:
    warnings: list[RecordWarning] = []
    assert (
        decode_bytes("Authors: Jos\u00e9\n".encode("latin-1"), path="y.abs", warnings=warnings)
        == "Authors: Jos\u00e9\n"
    )
    assert warnings and "Latin-1" in warnings[0].message


def test_nuls_in_abs_text_are_stripped_with_their_lines() -> None:
    warnings: list[RecordWarning] = []
    assert decode_bytes(b"a\nb\x00c\nd\x00\n", path="z.abs", warnings=warnings) == "a\nbc\nd\n"
    assert warnings[0].source == "z.abs:2, 3" and "2 NUL" in warnings[0].message


def test_string_lines_still_work_and_clean_lines_have_no_warnings(corpus: Path) -> None:
    lines = [ln.decode() for ln in kaggle_lines(corpus)]
    items = list(read_kaggle_lines(iter(lines), path="k"))
    assert len(items) == 5 and all(isinstance(i, MirrorRecord) for i in items)


def test_mirror_index_records_the_repairs(corpus: Path, tmp_path: Path) -> None:
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store.workspace import Workspace

    lines = kaggle_lines(corpus, 10)
    lines[4] = lines[4].replace(b'"title":"', b'"title": "\x00\xff', 1)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "arxiv-metadata-oai-snapshot.jsonl").write_bytes(b"".join(lines))
    ws = Workspace(tmp_path / "ws")
    report = index_mirror(ws, mirror)
    assert report.papers_stored == 10 and not report.errors
    rows = ws.db.execute("SELECT path, code, message FROM mirror_error WHERE code='record_warning'").fetchall()
    assert {r["path"].rsplit(":", 1)[1] for r in rows} == {"5"} and len(rows) == 2
    titles = [m.title for m in ws.iter_meta()]
    assert all("\x00" not in t for t in titles)
    ws.close()
