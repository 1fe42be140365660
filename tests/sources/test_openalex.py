"""The OpenAlex client against a local server replaying recorded work records (no network here; see
testing/openalex_replay.py for how the records were written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.sources.errors import HTTPStatusError, RetriesExhaustedError
from academiceval.sources.openalex import OpenAlexClient, abstract_from_index, request_key
from academiceval.testing.openalex_replay import serve_recorded

RECORDED = Path(__file__).parent / "data" / "openalex_recorded.json"


@pytest.fixture()
def replay():
    server = serve_recorded(RECORDED)
    yield server
    server.stop()


def client(url: str, **kw) -> OpenAlexClient:
    return OpenAlexClient(url, mailto="lab@example.org", api_key="secret-key", min_interval=0.0, seed=1, **kw)


def test_dois_in_batches_with_the_polite_pool(replay) -> None:
    c = client(replay.url, doi_batch=2)
    got = c.works_by_dois(
        ["10.1038/NATURE25978", "10.1038/s41586-018-0637-6", "10.48550/arXiv.2005.14165", "10.1/none"]
    )
    assert set(got) == {"10.1038/nature25978", "10.1038/s41586-018-0637-6", "10.48550/arxiv.2005.14165"}
    assert c.requests_made == 2 and len(replay.state.log) == 2  # 4 DOIs, 2 per request
    assert replay.state.log[0]["filter"] == "doi:10.1038/nature25978|10.1038/s41586-018-0637-6"
    assert all(r["mailto"] == "lab@example.org" and r["api_key"] == "***" for r in replay.state.log)
    gpt3 = got["10.48550/arxiv.2005.14165"]
    assert gpt3.arxiv_id == "2005.14165" and gpt3.authors[0] == "Tom B. Brown" and gpt3.year == 2020
    assert gpt3.abstract.startswith("Recent work has demonstrated substantial gains on many NLP tasks")
    moral = got["10.1038/s41586-018-0637-6"]
    assert moral.arxiv_id is None and moral.abstract == "" and moral.published.isoformat() == "2018-10-24"


def test_title_search_with_year_window(replay) -> None:
    c = client(replay.url)
    hits = c.search_title("The moral machine experiment.", year=2018)
    assert [w.doi for w in hits] == ["10.1038/s41586-018-0637-6"]
    assert replay.state.log[-1]["filter"] == "title.search:The moral machine experiment,publication_year:2017-2019"
    assert c.search_title("The moral machine experiment", year=2010) == []


def test_retries_429_and_5xx_then_gives_a_typed_error(replay) -> None:
    c = client(replay.url, max_retries=2, backoff_base=0.01)
    replay.state.faults = [429, 503]
    assert list(c.works_by_dois(["10.1038/nature25978"])) == ["10.1038/nature25978"]
    assert c.retries == 2 and c.requests_made == 3
    replay.state.faults = [503, 503, 503]
    with pytest.raises(RetriesExhaustedError):
        c.works_by_dois(["10.1073/pnas.1911517117"])


def test_bad_filter_is_a_clear_error_without_the_key(replay) -> None:
    c = client(replay.url)
    with pytest.raises(HTTPStatusError) as e:
        c._get({"filter": "nonsense:1"})
    assert e.value.status == 400 and "not a valid field" in e.value.message and "secret-key" not in e.value.message


def test_abstract_index_and_request_key() -> None:
    assert abstract_from_index({"world": [1], "hello": [0], "again": [3], "hello ": [2]}) == "hello world hello  again"
    assert abstract_from_index(None) == ""
    assert request_key([("mailto", "x"), ("filter", "doi:a"), ("api_key", "k")]) == "filter=doi:a"
