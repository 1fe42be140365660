"""Name normalisation: LaTeX escapes from real .abs records, mojibake from real Atom, conservative merging."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from academiceval.sources.names import (
    NameResolver,
    _split_plain,
    _split_with_parens,
    author_fields,
    author_key,
    display_name,
    initials_compatible,
    is_initial_form,
    latex_to_unicode,
    make_author,
    parse_authors,
    split_authors,
)
from academiceval.store.paper_models import Author


@pytest.mark.parametrize(
    ("raw", "shown", "key"),
    [
        (r"Bohdan Paczy\'nski", "Bohdan Paczyński", "bohdan paczynski"),
        (r"Fr\'{e}d\'{e}ric Klopp", "Frédéric Klopp", "frederic klopp"),
        (r"H. Nesse Tyss{\o}y", "H. Nesse Tyssøy", "h nesse tyssoy"),
        (r"Martin Eker{\aa}", "Martin Ekerå", "martin ekera"),
        (r"Rastislav \v{S}r\'amek", "Rastislav Šrámek", "rastislav sramek"),
        (r"A. Lan\c{c}on", "A. Lançon", "a lancon"),
        (r"G{\"o}del", "Gödel", "godel"),
        (r"Kurt G\"odel", "Kurt Gödel", "kurt godel"),
        (r"{\ss}mith", "ßmith", "ssmith"),
        (r"Lu\"{\i}s", "Luïs", "luis"),
        ("Dirk WÃ¼bben", "Dirk Wübben", "dirk wubben"),  # as served by the real API (tests/corpus Atom fixture)
        ("Paczyński, Bohdan", "Paczyński, Bohdan", "bohdan paczynski"),
        ("C.J. Horowitz", "C.J. Horowitz", "c j horowitz"),
        ("R. Wagner-Kaiser", "R. Wagner-Kaiser", "r wagner kaiser"),
        ("John Smith, Jr.", "John Smith, Jr.", "john smith jr"),
        ("  Jane\t Doe ", "Jane Doe", "jane doe"),
        ("ＪＡＮＥ ＤＯＥ", "ＪＡＮＥ ＤＯＥ", "jane doe"),  # NFKC folds full-width letters
        ("Plato", "Plato", "plato"),  # one-word names are keys too
    ],
)
def test_display_and_key(raw: str, shown: str, key: str) -> None:
    assert display_name(raw) == shown
    assert author_key(raw) == key


def test_same_person_written_differently_gets_one_key() -> None:
    forms = [r"Bohdan Paczy\'nski", "Bohdan Paczyński", "PACZYŃSKI, Bohdan", "Bohdan  Paczynski"]
    assert len({author_key(f) for f in forms}) == 1


def test_initials_are_not_merged_with_full_names() -> None:
    assert author_key("J. Doe") != author_key("Jane Doe")
    assert is_initial_form(author_key("J. M. Doe")) and not is_initial_form(author_key("Jane Doe"))
    assert initials_compatible("j doe", "jane doe")
    assert not initials_compatible("j doe", "jane m doe")
    assert not initials_compatible("k doe", "jane doe")


def test_split_authors_affiliations_numbered_and_collaboration() -> None:
    raw = (
        r"Edward F. Brown (1), Andrew Cumming (2), C. J. Horowitz (3), and Sanjay Reddy (5) ((1) Michigan State "
        r"University, (2) McGill University, (3) Indiana University, (5) Institute for Nuclear Theory, University of "
        r"Washington)"
    )
    got = split_authors(raw)
    assert [n for n, _ in got] == ["Edward F. Brown", "Andrew Cumming", "C. J. Horowitz", "Sanjay Reddy"]
    assert got[3][1] == ["Institute for Nuclear Theory, University of Washington"]
    assert split_authors("Andrea Brignole (CERN-TH), Fabio Zwirner (INFN-Padua)")[1] == (
        "Fabio Zwirner",
        ["INFN-Padua"],
    )
    assert [n for n, _ in split_authors("Ileana Streinu and Louis Theran")] == ["Ileana Streinu", "Louis Theran"]
    assert [n for n, _ in split_authors(r"LHCb collaboration: R. Aaij, C. Abell\'an Beteta")] == [
        "R. Aaij",
        "C. Abellán Beteta",
    ]
    assert [n for n, _ in split_authors("A. Smith, B. Jones et al.")] == ["A. Smith", "B. Jones"]


def test_every_real_listing_author_gets_a_nonempty_key(corpus: Path) -> None:
    from academiceval.sources.mirror.records import read_abs_text

    text = (corpus / "metadata/arxiv_browse_astro-ph_listings/astro-ph_listing_2018-02.txt").read_text()
    recs = list(read_abs_text(text, fmt="listing"))
    assert len(recs) == 1162
    authors = [a for r in recs for a in r.meta.authors]  # type: ignore[union-attr]
    assert len(authors) > 8000
    assert all(a.key and a.key == a.key.lower() and "\\" not in a.name and "{" not in a.name for a in authors)
    # no affiliation text leaks into names
    assert not [a.name for a in authors if "(" in a.name or ")" in a.name]


def test_resolver_merges_only_on_same_paper_evidence() -> None:
    r = NameResolver()
    r.observe("2401.00001", [Author(name="Jane Doe", key="jane doe"), Author(name="Bob Roe", key="bob roe")])
    assert r.resolve("j doe") == "j doe"  # no evidence yet: kept apart
    r.observe("2401.00002", ["J. Doe", "B. Roe"])  # a different paper: still no evidence
    assert r.resolve("j doe") == "j doe"
    r.observe("2401.00001", ["J. Doe", "B. Roe"])  # same paper, same positions: evidence
    assert r.resolve("j doe") == "jane doe"
    assert r.resolve("b roe") == "bob roe"
    assert r.merges() == {"j doe": "jane doe", "b roe": "bob roe"}


def test_resolver_refuses_ambiguous_initials() -> None:
    r = NameResolver()
    r.observe("a", ["Jane Doe"])
    r.observe("a", ["J. Doe"])
    r.observe("b", ["John Doe"])
    r.observe("b", ["J. Doe"])
    assert r.resolve("j doe") == "j doe"  # Jane or John: not merged
    assert "j doe" not in r.merges()


def test_resolver_apply_keeps_display_names() -> None:
    from datetime import date

    from academiceval.store.paper_models import PaperMeta

    r = NameResolver()
    r.observe("x", ["Jane Doe"])
    r.observe("x", ["J. Doe"])
    m = PaperMeta(arxiv_id="2401.00003", title="t", published=date(2024, 1, 1), authors=[Author(name="J. Doe")])
    out = r.apply(m)
    assert out.authors[0].name == "J. Doe" and out.authors[0].key == "jane doe"


def test_mirror_index_collects_name_evidence_from_duplicate_records() -> None:
    from datetime import UTC, datetime
    from pathlib import Path as _P

    from academiceval.sources.mirror.index import MirrorIndex
    from academiceval.sources.mirror.records import MirrorRecord
    from academiceval.sources.names import parse_authors
    from academiceval.store.paper_models import PaperMeta

    def rec(authors: str, source: str) -> MirrorRecord:
        m = PaperMeta(arxiv_id="1801.00001", title="t", published=datetime(2018, 1, 1).date(), source=source)
        m.authors = parse_authors(authors)
        return MirrorRecord(m, datetime(2018, 1, 1, tzinfo=UTC), fmt=source)

    idx = MirrorIndex(_P("."))
    idx.add_record(rec("J. Doe, Bob Roe", "listing"))
    idx.add_record(rec("Jane Doe, Bob Roe", "atom"))
    idx.finish()
    assert idx.names.merges() == {"j doe": "jane doe"}
    assert [a.key for a in idx.records["1801.00001"].meta.authors] == ["jane doe", "bob roe"]  # the atom record won


def test_apostrophe_accent_without_backslash_gives_one_key() -> None:
    from academiceval.sources.names import author_key

    # the real 2018-04 astro-ph listing writes "I. Soszy'nski"; other records write the LaTeX escape
    assert author_key("I. Soszy'nski") == author_key("I. Soszy\\'nski") == author_key("I. Soszyński")
    assert author_key("Sean O'Brien") == "sean obrien"


def _real_author_strings(corpus: Path) -> list[str]:
    """Every author list of the corpus' metadata: `Authors:` of the .abs records and listings, Kaggle `authors`."""
    out: list[str] = []
    meta = corpus / "metadata"
    for path in [*sorted((meta / "arxiv_browse_astro-ph_listings").glob("*.txt")), *sorted(meta.rglob("*.abs"))]:
        text = path.read_bytes().decode("utf-8", errors="replace")
        out += [m.replace("\n", " ") for m in re.findall(r"^Authors?:\s?(.*(?:\n[ \t]+.*)*)", text, re.MULTILINE)]
    for line in (meta / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl").read_text().splitlines():
        out.append(json.loads(line)["authors"])
    return out


def test_plain_lists_split_the_same_by_the_fast_path(corpus: Path) -> None:
    """`split_authors` takes `str.split` for lists without parentheses: on every real list of the corpus the fast
    path gives what the general (parenthesis-walking) path gives, and `make_author`'s cache what it computes."""
    lists = _real_author_strings(corpus)
    plain = [" ".join(latex_to_unicode(t).split()) for t in lists]
    plain = [s for s in plain if "(" not in s and ")" not in s]
    assert len(lists) > 9000 and len(plain) > 4000  # the listings write affiliations in parentheses: both paths run
    for s in plain:
        assert _split_plain(s) == _split_with_parens(s, {}), s
    names = [n for t in lists for n, _ in split_authors(t)]
    assert len(names) > 50_000
    for n in names[::7]:
        a = make_author(n)
        assert (a.name, a.key) == (display_name(n), author_key(display_name(n)))
    for t in lists[::5]:  # the readers' one-call form builds the same authors
        assert [Author(**f) for f in author_fields(t)] == parse_authors(t)
