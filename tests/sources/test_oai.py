"""OAI-PMH bulk harvest: `OaiHarvester` (oaipmh-scythe underneath) against `mirror serve`'s `/oai2` over real corpus
records — selection, paging by resumption tokens, faults (503 + Retry-After, 500, truncated bodies), expired
tokens, OAI error codes — and a harvest stored into a disk index serving the monthly window query."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest

pytest.importorskip("oaipmh_scythe", reason="the [oai] extra is not installed")

from academiceval.sources.errors import RetriesExhaustedError, SourceError
from academiceval.sources.mirror import MirrorSource
from academiceval.sources.mirror.disk import DiskIndex
from academiceval.sources.oai import OaiHarvester, harvest_into
from academiceval.sources.server import FaultConfig, serve_in_thread

APRIL = (date(2018, 4, 1), date(2018, 4, 30))


@pytest.fixture(scope="module")
def oai(mirror: MirrorSource, mirror_dir: Path):
    with serve_in_thread(mirror_dir, index=mirror.index) as srv:
        srv.server.oai_page_size = 50
        yield srv


def _expected(mirror: MirrorSource, lo: date, hi: date, archive: str | None) -> dict[str, object]:
    out = {}
    for r in mirror.index.iter_records():
        stamp = (r.updated_at or r.published_at).astimezone(UTC).date()
        if lo <= stamp <= hi and (archive is None or any(c.split(".")[0] == archive for c in r.meta.categories)):
            out[r.meta.arxiv_id] = r
    return out


def _harvester(srv, **kw) -> OaiHarvester:  # type: ignore[no-untyped-def]
    opts = {"min_interval": 0, "default_retry_after": 0.01, "transport_backoff": 0.01, "max_retries": 8, **kw}
    return OaiHarvester(srv.base_url + "/oai2", **opts)


def test_list_records_equals_the_mirror_selection(oai, mirror: MirrorSource) -> None:  # type: ignore[no-untyped-def]
    want = _expected(mirror, *APRIL, "astro-ph")
    before = oai.stats()["api_requests"]
    with _harvester(oai) as h:
        got = list(h.iter_records(*APRIL, "physics:astro-ph"))
    assert [r.meta.arxiv_id for r in got] == sorted(
        want, key=lambda k: ((want[k].updated_at or want[k].published_at), k)
    )
    assert len(got) > 500 and len({r.meta.arxiv_id for r in got}) == len(got)
    assert h.stats.requests == oai.stats()["api_requests"] - before == math.ceil(len(want) / 50)
    for r in got:
        m = want[r.meta.arxiv_id].meta
        assert (r.meta.title, r.meta.categories, r.meta.published) == (m.title, m.categories, m.published)
        assert [a.key for a in r.meta.authors] == [a.key for a in m.authors]
    # a whole group, and a set with a sub-category
    with _harvester(oai) as h:
        ga = list(h.iter_records(*APRIL, "physics:astro-ph:GA"))
    assert ga and all("astro-ph.GA" in r.meta.categories for r in ga) and len(ga) < len(got)


def test_faults_do_not_change_the_harvest(oai, mirror: MirrorSource) -> None:  # type: ignore[no-untyped-def]
    with _harvester(oai) as h:
        clean = [r.meta for r in h.iter_records(*APRIL, "physics:astro-ph")]
    oai.set_faults(FaultConfig(rate_503=0.2, rate_500=0.05, rate_truncate=0.1, retry_after=0.01, seed=11))
    try:
        before = oai.stats()["faults"]
        with _harvester(oai) as h:
            faulty = [r.meta for r in h.iter_records(*APRIL, "physics:astro-ph")]
        injected = {k: v - before[k] for k, v in oai.stats()["faults"].items()}
    finally:
        oai.set_faults(FaultConfig())
    assert faulty == clean
    assert injected["503"] > 0 and injected["truncate"] > 0
    assert h.stats.retries == injected["503"] + injected["500"] + injected["truncate"]
    assert h.stats.transport_errors == injected["truncate"]  # body shorter than its Content-Length


def test_a_cut_body_with_a_consistent_length_is_retried(oai, mirror: MirrorSource) -> None:  # type: ignore[no-untyped-def]
    """A proxy may deliver a cut page as a complete response; scythe's recovering parser would take it as a short
    page. The harvester notices the missing </OAI-PMH> and asks again."""
    import httpx2

    calls = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        real = httpx.get(str(request.url))
        calls.append(str(request.url))
        body = real.content if len(calls) != 2 else real.content[: len(real.content) // 2]
        return httpx2.Response(real.status_code, content=body, headers={"Content-Type": "text/xml"})

    with _harvester(oai) as h:
        clean = [r.meta.arxiv_id for r in h.iter_records(*APRIL, "physics:astro-ph")]
    with _harvester(oai) as h:
        h._scythe._client = httpx2.Client(transport=httpx2.MockTransport(handler))
        got = [r.meta.arxiv_id for r in h.iter_records(*APRIL, "physics:astro-ph")]
    assert got == clean and h.stats.truncated == 1 and len(calls) == h.stats.requests


def test_expired_resumption_tokens_restart_without_duplicates(oai, mirror: MirrorSource) -> None:  # type: ignore[no-untyped-def]
    want = _expected(mirror, *APRIL, "astro-ph")
    oai.server.oai_expire_every = 7
    try:
        with _harvester(oai) as h:
            got = [r.meta.arxiv_id for r in h.iter_records(*APRIL, "physics:astro-ph")]
    finally:
        oai.server.oai_expire_every = 0
    assert h.stats.restarts >= 2 and len(got) == len(set(got)) and set(got) == set(want)
    oai.server.oai_expire_every = 1  # every token expires: a clear error after max_restarts, not a loop
    try:
        with _harvester(oai, max_restarts=2) as h, pytest.raises(SourceError, match="badResumptionToken"):
            list(h.iter_records(*APRIL, "physics:astro-ph"))
    finally:
        oai.server.oai_expire_every = 0


def test_no_records_match_is_an_empty_harvest(oai) -> None:  # type: ignore[no-untyped-def]
    with _harvester(oai) as h:
        assert list(h.iter_records(date(1995, 1, 1), date(1995, 1, 31), "cs")) == []
    assert h.stats.requests == 1


def test_oai_error_responses(oai) -> None:  # type: ignore[no-untyped-def]
    url = oai.base_url + "/oai2"

    def code(**params: str) -> str | None:
        body = httpx.get(url, params=params).text
        assert body.rstrip().endswith("</OAI-PMH>")
        return body.split('<error code="')[1].split('"')[0] if '<error code="' in body else None

    assert code(verb="Identify") is None
    assert code(verb="ListRecords", metadataPrefix="oai_dc") == "cannotDisseminateFormat"
    assert code(verb="ListRecords") == "badArgument"
    assert code(verb="ListRecords", metadataPrefix="arXiv", **{"from": "2018-13-45"}) == "badArgument"
    assert code(verb="ListRecords", resumptionToken="not-a-token") == "badResumptionToken"
    assert (
        code(
            verb="ListRecords",
            metadataPrefix="arXiv",
            set="physics:astro-ph",
            **{"from": "1990-01-01", "until": "1990-02-01"},
        )
        == "noRecordsMatch"
    )
    assert code(verb="Harvest") == "badVerb"
    assert code(verb="GetRecord", metadataPrefix="arXiv", identifier="oai:arXiv.org:1111.2011") is None
    assert code(verb="GetRecord", metadataPrefix="arXiv", identifier="oai:arXiv.org:9999.99999") == "idDoesNotExist"
    with _harvester(oai) as h, pytest.raises(SourceError, match="BadArgument"):
        list(h.iter_records("2018-04-31", None))


def test_persistent_503_gives_retries_exhausted(oai) -> None:  # type: ignore[no-untyped-def]
    oai.set_faults(FaultConfig(rate_503=1.0, retry_after=0.01))
    try:
        with _harvester(oai, max_retries=3) as h, pytest.raises(RetriesExhaustedError, match="OAI-PMH"):
            list(h.iter_records(*APRIL))
    finally:
        oai.set_faults(FaultConfig())
    assert h.stats.requests == 4


def test_harvest_into_a_disk_index_serves_the_monthly_window(oai, mirror: MirrorSource, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty"
    empty.mkdir()
    idx = DiskIndex(tmp_path / "oai.sqlite", empty)
    idx.update()
    with _harvester(oai) as h:
        # a monthly update harvests everything stamped since the month began: every paper submitted in it
        n, _ = harvest_into(idx, h, APRIL[0], None, "physics:astro-ph", batch=300)
    assert n == len(idx) == h.stats.records > 500
    src = MirrorSource(empty, index=idx)
    q = "submittedDate:[201804010000 TO 201804302359] AND cat:astro-ph*"
    got = [m.arxiv_id for m in src.iter_search(q, page_size=500)]
    want = [m.arxiv_id for m in mirror.iter_search(q, page_size=500)]
    # the same papers; the order within a day may differ (the arXiv format dates v1 to the day, listings to the minute)
    assert set(got) == set(want) and len(got) == len(want) > 500
    # harvesting the same window again merges: nothing doubles
    with _harvester(oai) as h:
        harvest_into(idx, h, APRIL[0], None, "physics:astro-ph")
    assert len(idx) == n
    assert datetime(2018, 4, 1, tzinfo=UTC) <= idx.get(got[0]).published_at  # type: ignore[union-attr]


def test_cli_harvest_updates_the_workspace_index(oai, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from academiceval.cli.main import app
    from academiceval.sources.mirror.disk import open_index

    mirror = tmp_path / "m"
    mirror.mkdir()
    (mirror / "k.jsonl").symlink_to(corpus / "metadata" / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    home = tmp_path / "h"
    args = [
        "mirror",
        "harvest",
        str(mirror),
        "--from",
        "2018-04-01",
        "--until",
        "2018-04-30",
        "--set",
        "physics:astro-ph",
    ]
    res = CliRunner().invoke(app, [*args, "--url", oai.base_url + "/oai2", "--min-interval", "0", "--home", str(home)])
    assert res.exit_code == 0, res.output
    idx = open_index(mirror, index_dir=home / "mirror-index")
    assert len(idx) > 200 + 500 and "200 → " in res.output
    bad = CliRunner().invoke(
        app,
        [
            *args[:3],
            "--from",
            "2018-02-31",
            "--url",
            oai.base_url + "/oai2",
            "--min-interval",
            "0",
            "--home",
            str(home),
        ],
    )
    assert bad.exit_code == 2 and "BadArgument" in bad.output
