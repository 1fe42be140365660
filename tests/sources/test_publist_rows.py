"""Typed rows at the publication-list boundary (issue 26, items 4 and 10 for `import`).

Before: a CSL-JSON `file` that is a number, a name part that is a list, or 5,000 nested brackets ended `import`
in a traceback; a list with a byte-order mark, or whose items sit under `{"items": 5}`, was skipped without a
word (and the folder then "imported" nothing, exit 0); two BibTeX entries naming one PDF kept one paper silently.
Now every bad row is one issue (file, line, key, what, what to do) and a skip, and the rest is imported.
Hypothesis fuzzes both readers (and the whole import) with rows that are not objects, nulls, wrong types and
deep nesting.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.errors import ConfigError
from academiceval.sources import publist_rows
from academiceval.sources.publist import read_bibtex, read_csl_json, read_list
from academiceval.sources.publist_import import import_publist

GOOD = {
    "id": "good",
    "title": "A good item",
    "issued": {"date-parts": [[2021, 5]]},
    "author": [{"family": "Doe", "given": "Jane"}],
}

# one hostile row each: (row, the words its one issue must hold)
HOSTILE = {
    "a number": (5, "is int, not an object"),
    "null": (None, "is null, not an object"),
    "a list": ([GOOD], "is list, not an object"),
    "file is a number": ({**GOOD, "id": "f", "file": 5}, "file: expected text or a list, got 5"),
    "a name part is a list": ({**GOOD, "id": "n", "author": [{"family": ["x"]}]}, "author[0].family: expected text"),
    "author is an object": ({**GOOD, "id": "a", "author": {"family": "x"}}, "author: expected a list"),
    "title is a number": ({**GOOD, "id": "t", "title": 7}, "title: expected text, got 7"),
    "id is an object": ({**GOOD, "id": {"a": 1}}, "id: expected"),
    "date-parts is text": ({**GOOD, "id": "d", "issued": {"date-parts": "2020"}}, "issued.date-parts: expected a list"),
    "deep nesting": ({**GOOD, "id": "deep", "note": json.loads("[" * 40 + "]" * 40)}, "nested deeper than 32"),
}


def write_items(path: Path, items: list) -> Path:  # type: ignore[type-arg]
    path.write_text("[\n" + ",\n".join(json.dumps(i) for i in items) + "\n]\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_csl_row_is_one_issue_and_a_skip(kind: str, tmp_path: Path) -> None:
    row, words = HOSTILE[kind]
    p = write_items(tmp_path / "list.json", [GOOD, row, {**GOOD, "id": "after"}])
    pl = read_csl_json(p)
    assert [e.key for e in pl.entries] == ["good", "after"]  # the rest goes on
    (issue,) = pl.issues
    assert words in issue.message, issue
    assert issue.file == str(p) and issue.line == 3 and issue.hint  # the row's own line; what to do
    assert issue.key and "{" not in issue.key  # a key for messages, never the repr of an object


def test_whole_document_problems_are_one_line(tmp_path: Path) -> None:
    cases = {
        "deep.json": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        "items.json": ('{"items": 5}', '"items" is not a list'),
        "broken.json": ('[{"title": "x"},\n{"title": ]', "not valid JSON"),
        "no-comma.json": ('[{"title": "x"}\n{"title": "y"}]', "expected , or ]"),
        "text.json": ("hello", "not CSL-JSON"),
        "huge-int.json": ('[{"issued": {"date-parts": [[' + "9" * 5000 + "]]}}]", "not valid JSON"),
    }
    for name, (text, words) in cases.items():
        (tmp_path / name).write_text(text)
        pl = read_csl_json(tmp_path / name)
        last = pl.issues[-1]  # the document's problem (after the items read before it, if any)
        assert pl.entries == [] and words in last.message, (name, pl.issues)
        assert last.line and last.hint and last.code in {"unreadable_list", "not_a_list"}
    (tmp_path / "broken.json").write_text('[{"id": "a", "title": "x", "issued": {"date-parts": [[2020]]}},\n{"ti')
    pl = read_csl_json(tmp_path / "broken.json")
    assert [e.key for e in pl.entries] == ["a"] and pl.issues[-1].line == 2  # read up to the break, which is named


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write_items(tmp_path / "list.json", [GOOD] * 50)
    monkeypatch.setattr(publist_rows, "MAX_LIST_BYTES", 1000)
    pl = read_list(p)
    assert pl.entries == [] and "over the 0 MB" in pl.issues[0].message and "split" in (pl.issues[0].hint or "")


def test_byte_order_marks_and_latin1(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps([GOOD]).encode())
    assert [e.key for e in read_csl_json(tmp_path / "bom.json").entries] == ["good"]
    bib = "@article{k1,\n  author = {M\u00fcller, J\u00f6rg},\n  title = {Caf\u00e9},\n  year = {2020},\n}\n"
    (tmp_path / "bom.bib").write_bytes(b"\xef\xbb\xbf" + bib.encode("utf-8"))
    pl = read_bibtex(tmp_path / "bom.bib")
    assert [e.key for e in pl.entries] == ["k1"] and pl.issues == []
    (tmp_path / "latin1.bib").write_bytes(bib.encode("latin-1"))
    pl = read_bibtex(tmp_path / "latin1.bib")
    assert pl.entries[0].authors[0].name == "J\u00f6rg M\u00fcller" and pl.entries[0].title == "Caf\u00e9"
    assert [i.code for i in pl.issues] == ["text_repaired"] and "Latin-1" in pl.issues[0].message


# ---- duplicates are reported, never dropped without a word -----------------------------------------------------
def bib_entry(key: str, title: str, *, file: str | None = None, doi: str | None = None, year: int = 2020) -> str:
    extra = (f"  file = {{{file}}},\n" if file else "") + (f"  doi = {{{doi}}},\n" if doi else "")
    head = f"@article{{{key},\n  author = {{A. Author and B. Author}},\n  title = {{{title}}},\n"
    return f"{head}  year = {{{year}}},\n{extra}}}\n"


def test_two_entries_naming_one_pdf_are_reported(corpus: Path, tmp_path: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    """Item 2's finding: two BibTeX entries naming one PDF kept one paper. Now the PDF goes to one entry and the
    other is reported (and keeps its metadata); a copy of the PDF under another name counts as the same PDF."""
    lab = corpus / "lab_publications" / "comp-physics"
    real = next(e for e in read_bibtex(lab / "ref.bib").entries if e.files == ["bryngelson-PRE-19.pdf"])
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "pre.pdf").symlink_to(lab / "papers" / "bryngelson-PRE-19.pdf")
    (tmp_path / "papers" / "copy.pdf").symlink_to(lab / "papers" / "bryngelson-PRE-19.pdf")
    (tmp_path / "ref.bib").write_text(
        bib_entry("journal", real.title, file="papers/pre.pdf")
        + bib_entry("preprint", real.title, file="papers/pre.pdf", year=2019)
        + bib_entry("copied", real.title, file="papers/copy.pdf", year=2018)
    )
    rep = import_publist(workspace, tmp_path)
    assert [(a.key, a.stored) for a in rep.attached] == [("journal", True)]
    dup = sorted((i.key, i.code) for i in rep.issues if i.code == "duplicate_pdf")
    assert dup == [("copied", "duplicate_pdf"), ("preprint", "duplicate_pdf")]
    assert all("journal" in i.message and i.hint for i in rep.issues if i.code == "duplicate_pdf")
    assert sorted(rep.metadata_only) == ["copied", "preprint"] and rep.stored_meta == 3
    assert workspace.get_paper_by_arxiv("pub:journal") is not None


def test_same_id_key_or_doi_twice_is_reported(tmp_path: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.bib").write_text(bib_entry("k1", "First", doi="10.1234/x") + bib_entry("k2", "Second"))
    write_items(
        tmp_path / "b.json",
        [
            {"id": "k2", "title": "Same key in another list", "issued": {"date-parts": [[2021]]}},
            {"id": "k3", "title": "Same DOI", "DOI": "10.1234/X", "issued": {"date-parts": [[2021]]}},
            {"id": "k4", "title": "New", "issued": {"date-parts": [[2021]]}},
        ],
    )
    rep = import_publist(workspace, tmp_path, parse=False)
    assert rep.entries == 3 and rep.stored_meta == 3
    dups = [i for i in rep.issues if i.code.startswith("duplicate")]
    assert {(i.key, i.code) for i in dups} == {("k2", "duplicate_key"), ("k3", "duplicate_doi")}
    assert all("first as k" in i.message and i.line for i in dups)


def test_a_folder_without_a_list_is_an_error(tmp_path: Path, workspace) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    with pytest.raises(ConfigError, match="no publication list"):
        import_publist(workspace, tmp_path)
    res = CliRunner().invoke(app, ["import-publist", str(tmp_path), "--home", str(workspace.home)])
    assert res.exit_code == 2 and "no publication list" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("verb", ["import-publist", "import"])
def test_cli_lists_each_bad_row(tmp_path: Path, verb: str) -> None:
    """`import-publist` and its old name `import` (kept for one release) are one command; the old name says so."""
    write_items(tmp_path / "list.json", [GOOD, 5, {**GOOD, "id": "f", "file": 5}])
    res = CliRunner().invoke(
        app, [verb, str(tmp_path), "--no-parse", "--home", str(tmp_path / "home")], env={"COLUMNS": "300"}
    )
    assert res.exit_code == 0, res.output
    assert ("is now `academiceval import-publist`" in res.output) == (verb == "import"), res.output
    lines = [ln.strip() for ln in res.output.splitlines() if "list.json:" in ln and "[" in ln]
    assert any(ln.endswith("the others were imported)") and "item 1 is int" in ln for ln in lines), res.output
    assert any("[f]: file: expected text or a list, got 5" in ln for ln in lines), res.output


# ---- fuzz: any rows, any bytes -----------------------------------------------------------------------------------
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_scalar = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=True) | _text
_json = st.recursive(
    _scalar, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3), max_leaves=12
)
_field = st.sampled_from(
    [
        "id",
        "citation-key",
        "title",
        "author",
        "issued",
        "DOI",
        "URL",
        "note",
        "arxiv",
        "abstract",
        "container-title",
        "file",
        "files",
        "type",
    ]
)
_name = st.dictionaries(st.sampled_from(["family", "given", "literal", "non-dropping-particle"]), _json | _text)
_item = st.fixed_dictionaries(
    {},
    optional={
        "id": _json | _text,
        "title": _json | _text,
        "author": st.lists(_name | _json, max_size=3) | _json,
        "issued": st.fixed_dictionaries(
            {}, optional={"date-parts": _json | st.lists(st.lists(_json, max_size=3), max_size=2), "raw": _json}
        ),
        "file": _json | _text,
        "DOI": _json | _text,
    },
) | st.dictionaries(_field, _json, max_size=5)
_row = _item | _json
_deep = st.integers(30, 3000).map(lambda n: "[" * n + "]" * n)


def _check(pl, src: Path) -> None:  # type: ignore[no-untyped-def]
    for e in pl.entries:
        assert e.title and e.published is not None and e.key and "{" not in e.key
        assert all(isinstance(f, str) for f in e.files)
    for i in pl.issues:
        assert i.file == str(src) and i.code and i.message and (i.line or i.key or i.code == "text_repaired")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, max_size=6), deep=st.none() | _deep)
def test_fuzz_csl_json(rows: list, deep: str | None, tmp_path: Path) -> None:  # type: ignore[type-arg]
    p = tmp_path / "list.json"
    text = json.dumps(rows, allow_nan=True)
    if deep:
        text = text[:-1] + ("," if rows else "") + deep + "]"
    p.write_text(text, encoding="utf-8")
    pl = read_csl_json(p)  # never raises
    _check(pl, p)
    good = sum(1 for r in rows if isinstance(r, dict) and isinstance(r.get("title"), str) and r["title"].strip())
    assert len(pl.entries) <= good


_bib_value = st.text(alphabet=string.printable, max_size=30)
_bib_field = st.sampled_from(["author", "title", "year", "month", "day", "date", "doi", "file", "eprint", "note"])
_bib_entry = st.builds(
    lambda kind, key, fields, opener, closer: (
        f"@{kind}{opener}{key},\n" + "".join(f"  {k} = {{{v}}},\n" for k, v in fields.items()) + closer
    ),
    st.sampled_from(["article", "misc", "inproceedings", "", "comment", "string"]),
    st.text(alphabet=string.ascii_letters + string.digits + ":-_ {}", max_size=10),
    st.dictionaries(_bib_field, _bib_value, max_size=6),
    st.sampled_from(["{", "(", ""]),
    st.sampled_from(["}\n", ")\n", "", "}}\n"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_bib_entry, max_size=6), noise=st.binary(max_size=40))
def test_fuzz_bibtex(entries: list[str], noise: bytes, tmp_path: Path) -> None:
    p = tmp_path / "list.bib"
    p.write_bytes("\n".join(entries).encode("utf-8") + noise)
    pl = read_bibtex(p)  # never raises
    _check(pl, p)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, min_size=1, max_size=5), entries=st.lists(_bib_entry, max_size=3))
def test_fuzz_the_whole_import(rows: list, entries: list[str], tmp_path_factory: pytest.TempPathFactory) -> None:  # type: ignore[type-arg]
    from academiceval.store.workspace import Workspace

    root = tmp_path_factory.mktemp("fuzz")
    write_items(root / "list.json", [GOOD, *rows])
    (root / "list.bib").write_text("\n".join(entries), encoding="utf-8")
    ws = Workspace(root / "home")
    rep = import_publist(ws, root, parse=False)  # never raises; the good row is always stored
    assert ws.get_meta("pub:good") is not None and rep.stored_meta == rep.entries
    ws.close()
