"""Atom reader on every real API response in the corpus, the writer, and fuzzing (no input crashes the reader)."""

from __future__ import annotations

import contextlib
import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from academiceval.sources.atom import parse_feed, write_feed
from academiceval.sources.base import FeedPage
from academiceval.sources.errors import AtomParseError

FIX = "arxiv_api/arxiv.py_fixtures"


def _feed(corpus: Path, name: str) -> bytes:
    return (corpus / FIX / name).read_bytes()


def test_every_recorded_response_parses(corpus: Path) -> None:
    files = sorted((corpus / FIX / "atom_xml_2016").glob("*.xml")) + sorted(
        (corpus / FIX / "atom_xml_extracted").glob("*.xml")
    )
    assert len(files) == 27
    total = 0
    for f in files:
        page = parse_feed(f.read_bytes())
        total += len(page.items)
        assert all(m.arxiv_id and m.title and m.published for m in page.items)
        assert all("v" not in m.arxiv_id.split(".")[-1] for m in page.items)  # versionless ids
    assert total > 200


def test_fields_of_a_2016_feed(corpus: Path) -> None:
    page = parse_feed(_feed(corpus, "atom_xml_2016/search_query=au_del_maestro.xml"))
    assert (page.total_results, page.start, len(page.items)) == (31, 0, 10)
    m = page.items[0]
    assert (m.arxiv_id, m.version) == ("1201.4869", 1)
    assert m.doi == "10.1142/S021797921244002X"
    assert m.journal_ref == "Int. J. Mod. Phys. B, 26, 1244002 (2012)"
    assert m.primary_category == "cond-mat.mes-hall" and m.categories == ["cond-mat.mes-hall", "cond-mat.other"]
    assert m.published == date(2012, 1, 23) and m.pdf_url == "http://arxiv.org/pdf/1201.4869v1"
    assert [a.key for a in m.authors] == ["adrian del maestro"]


def test_old_style_ids_affiliations_and_mojibake(corpus: Path) -> None:
    m = parse_feed(_feed(corpus, "atom_xml_extracted/id_astro-ph_0601001_s0_m100_3150dca9dc76.xml")).items[0]
    assert (m.arxiv_id, m.version) == ("astro-ph/0601001", 1)
    assert m.authors[0].affiliations == ["Ohio State"] and m.journal_ref == "ActaAstron.56:1-50,2006"
    q = parse_feed(_feed(corpus, "atom_xml_extracted/id_quant-ph_0201082v1_s0_m100_86989fe779ef.xml")).items[0]
    assert q.arxiv_id == "quant-ph/0201082"
    w = parse_feed(_feed(corpus, "atom_xml_extracted/id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.xml")).items[0]
    assert "Dirk Wübben" in [a.name for a in w.authors]


def test_api_error_entry_and_empty_feed(corpus: Path) -> None:
    body = json.loads((corpus / FIX / "recorded_json/id_abc_s0_m100_b79c8dcf6bc3.json").read_text())["body"]
    page = parse_feed(body)
    assert page.items == [] and page.errors == ["arXiv API error: incorrect id format for abc"]
    empty = parse_feed(_feed(corpus, "atom_xml_extracted/id_0000.0000_s0_m100_8b51d9633a68.xml"))
    assert (empty.total_results, empty.items, empty.errors) == (0, [], [])


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"<!DOCTYPE html><html><body>Rate exceeded</body></html>",
        b"<rss></rss>",
        b"not xml at all",
        b"<?xml version='1.0' encoding='ATF-8'?><feed/>",  # found by the fuzzer: unknown encoding
        b"<?xml version='1.0'?><!DOCTYPE f [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;'>]><feed>&b;</feed>",  # entities
    ],
)
def test_non_atom_bodies_raise_typed_error(body: bytes) -> None:
    with pytest.raises(AtomParseError):
        parse_feed(body)


def test_truncated_at_every_point_never_crashes(corpus: Path) -> None:
    body = _feed(corpus, "atom_xml_2016/search_query=au_del_maestro+AND+ti__quantum+criticality_.xml")
    for cut in range(0, len(body) - 1, max(1, len(body) // 300)):
        with pytest.raises(AtomParseError):
            parse_feed(body[:cut])


def test_bad_entry_is_recorded_and_the_rest_kept(corpus: Path) -> None:
    body = _feed(corpus, "atom_xml_2016/search_query=au_del_maestro.xml").decode()
    broken = body.replace("<id>http://arxiv.org/abs/1201.4869v1</id>", "<id>http://arxiv.org/abs/garbage</id>", 1)
    page = parse_feed(broken)
    assert len(page.items) == 9 and len(page.errors) == 1 and "garbage" in page.errors[0]


def test_writer_round_trip(corpus: Path) -> None:
    page = parse_feed(_feed(corpus, "atom_xml_extracted/q_testing_s0_m100_cfe7536492ca.xml"))
    out = parse_feed(write_feed(page.items, total_results=page.total_results, start=0, items_per_page=100))
    assert out.total_results == page.total_results and len(out.items) == 100
    strip = lambda m: m.model_dump(exclude={"pdf_url"})  # noqa: E731 - the writer points PDFs at its own host
    assert [strip(m) for m in out.items] == [strip(m) for m in page.items]


_XML_BITS = st.sampled_from(
    [
        "<feed xmlns='http://www.w3.org/2005/Atom'>",
        "</feed>",
        "<entry>",
        "</entry>",
        "<id>",
        "</id>",
        "<title>x",
        "</title>",
        "<published>2020-01-01T00:00:00Z</published>",
        "<published>nope</published>",
        "<id>http://arxiv.org/abs/2001.00001v1</id>",
        "<author><name>A B</name></author>",
        "&amp;",
        "&bogus;",
        "<!DOCTYPE x [<!ENTITY a 'b'>]>",
        "<![CDATA[",
        "]]>",
        "\x00",
        "é",
        "<category term=''/>",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_XML_BITS | st.text(max_size=20), max_size=30).map("".join))
def test_fuzz_structured_never_crashes(doc: str) -> None:
    try:
        page = parse_feed(doc)
    except AtomParseError:
        return
    assert isinstance(page, FeedPage)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_fuzz_bytes_never_crash(data: bytes) -> None:
    with contextlib.suppress(AtomParseError):
        parse_feed(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_mutated_real_feed(corpus: Path, data: st.DataObject) -> None:
    body = bytearray(_feed(corpus, "atom_xml_2016/search_query=au_del_maestro+AND+ti_checkerboard.xml"))
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] = data.draw(st.integers(0, 255))
    try:
        page = parse_feed(bytes(body))
    except AtomParseError:
        return
    assert len(page.items) + len(page.errors) <= 1
