"""The real HTTP client against `mirror serve` on 127.0.0.1 over the corpus, with and without injected faults."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import httpx
import pytest

from academiceval.sources import open_source
from academiceval.sources.base import MetadataSource
from academiceval.sources.client import ArxivClient
from academiceval.sources.errors import (
    HTTPStatusError,
    InvalidArxivIdError,
    NotAPdfError,
    RetriesExhaustedError,
    UnknownIdError,
)
from academiceval.sources.http import Pacer
from academiceval.sources.mirror import MirrorSource
from academiceval.sources.server import FaultConfig, ServerHandle, serve_in_thread

WINDOW = "cat:astro-ph* AND submittedDate:[201804010000 TO 201804052359]"


@pytest.fixture(scope="module")
def server(mirror: MirrorSource, mirror_dir: Path):
    h = serve_in_thread(mirror_dir)
    yield h
    h.stop()


@pytest.fixture()
def clean(server: ServerHandle) -> ServerHandle:
    server.set_faults(FaultConfig())
    return server


def _client(h: ServerHandle, **kw) -> ArxivClient:
    opts = {"min_interval": 0.01, "backoff_base": 0.01, "backoff_max": 0.05, "max_retries": 12, "seed": 1}
    return ArxivClient(h.url, **(opts | kw))


def test_served_results_equal_in_process_results(clean: ServerHandle, mirror: MirrorSource) -> None:
    c = _client(clean)
    assert isinstance(c, MetadataSource)
    served = list(c.iter_search(WINDOW, page_size=100))
    local = list(mirror.iter_search(WINDOW, page_size=100))
    assert [m.arxiv_id for m in served] == [m.arxiv_id for m in local] and len(local) > 150
    strip = {"pdf_url", "source"}
    assert [m.model_dump(exclude=strip) for m in served] == [m.model_dump(exclude=strip) for m in local]
    assert c.requests_made == -(-len(local) // 100) == clean.stats()["api_requests"] - 0
    assert c.retries == 0


def test_faults_do_not_change_results(clean: ServerHandle, mirror: MirrorSource) -> None:
    clean.set_faults(
        FaultConfig(
            rate_429=0.15, rate_500=0.1, rate_truncate=0.1, rate_empty=0.1, rate_html=0.05, retry_after=0.02, seed=5
        )
    )
    before = clean.stats()
    c = _client(clean)
    served = [m.arxiv_id for m in c.iter_search(WINDOW, page_size=10)]
    ids = [m.arxiv_id for m in mirror.iter_search(WINDOW, page_size=40)]
    assert served == ids
    c.id_batch_size = 10
    got = {m.arxiv_id for m in c.fetch_ids([*ids[:150], "9999.99999", "not-an-id"])}
    assert got == set(ids[:150]) and any("not-an-id" in w for w in c.warnings)
    after = clean.stats()
    injected = {k: after["faults"][k] - before["faults"][k] for k in after["faults"]}
    assert sum(injected.values()) >= 8 and sum(1 for v in injected.values() if v) >= 4, injected
    assert c.retries == sum(injected.values())
    assert c.requests_made == after["api_requests"] - before["api_requests"]


def test_retry_after_is_honoured(clean: ServerHandle) -> None:
    clean.set_faults(FaultConfig(rate_429=0.5, retry_after=0.3, seed=11))
    before = clean.stats()["faults"]["429"]
    c = _client(clean, backoff_base=0.001, backoff_max=0.001)
    t0 = time.monotonic()
    for _ in range(4):
        c.search("cat:astro-ph.GA", max_results=1)
    elapsed = time.monotonic() - t0
    n429 = clean.stats()["faults"]["429"] - before
    assert n429 >= 1 and elapsed >= 0.3 * n429 * 0.95


def test_persistent_failure_is_a_typed_error(clean: ServerHandle) -> None:
    clean.set_faults(FaultConfig(rate_500=1.0))
    c = _client(clean, max_retries=2)
    with pytest.raises(RetriesExhaustedError) as e:
        c.search("cat:astro-ph.GA")
    assert c.requests_made == 3 and "HTTP 500" in e.value.message
    clean.set_faults(FaultConfig(rate_html=1.0))
    with pytest.raises(RetriesExhaustedError, match="HTML"):
        _client(clean, max_retries=1).search("cat:astro-ph.GA")
    clean.set_faults(FaultConfig())
    with pytest.raises(HTTPStatusError, match="unknown field"):
        _client(clean).search("bogus:field")


def test_pdf_download_checks(clean: ServerHandle, tmp_path: Path, corpus: Path) -> None:
    c = _client(clean)
    p = c.fetch_pdf("2203.00130v1", tmp_path)
    assert p.read_bytes() == (corpus / "pdf/2203.00130v1.pdf").read_bytes()
    n = c.pdf_requests
    assert c.fetch_pdf("2203.00130", tmp_path) == p and c.pdf_requests == n  # resumable: complete file kept
    with pytest.raises(UnknownIdError):
        c.fetch_pdf("2401.00001", tmp_path)
    with pytest.raises(InvalidArxivIdError):
        c.fetch_pdf("../../etc/passwd", tmp_path)
    clean.set_faults(FaultConfig(rate_html=1.0, apply_to_pdf=True))
    with pytest.raises(NotAPdfError):
        c.fetch_pdf("1111.2011", tmp_path / "h")
    clean.set_faults(FaultConfig(rate_truncate=0.5, rate_500=0.2, apply_to_pdf=True, seed=2))
    q = c.fetch_pdf("1111.2011v2", tmp_path / "t")
    assert q.read_bytes() == (corpus / "pdf/1111.2011v2.pdf").read_bytes()
    assert not [x for x in (tmp_path / "t").iterdir() if x.suffix == ".part"]
    small = _client(clean, max_pdf_bytes=1000)
    clean.set_faults(FaultConfig())
    from academiceval.sources.errors import PdfTooLargeError

    with pytest.raises(PdfTooLargeError):
        small.fetch_pdf("1111.2011", tmp_path / "s")
    assert not (tmp_path / "s" / "1111.2011.pdf").exists()


def test_old_style_id_pdf_name_stays_inside(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/pdf/hep-th/9709111v2"
        return httpx.Response(
            200, content=b"%PDF-1.4\n" + b"x" * 100 + b"\n%%EOF\n", headers={"content-type": "application/pdf"}
        )

    c = ArxivClient("http://mirror.test/api/query", min_interval=0, transport=httpx.MockTransport(handler))
    p = c.fetch_pdf("hep-th/9709111v2", tmp_path)
    assert p == tmp_path.resolve() / "hep-th_9709111.pdf" and [x.name for x in tmp_path.iterdir()] == [p.name]


def test_pacing_is_shared_across_threads() -> None:
    pacer = Pacer(0.05)
    stamps: list[float] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(3):
            pacer.wait()
            with lock:
                stamps.append(time.monotonic())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stamps.sort()
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert len(stamps) == 12 and min(gaps) >= 0.045


def test_user_agent_and_stats_endpoint(clean: ServerHandle) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["user-agent"])
        return httpx.Response(200, content=b"<feed xmlns='http://www.w3.org/2005/Atom'></feed>")

    ArxivClient("http://x.test/api/query", min_interval=0, transport=httpx.MockTransport(handler)).search("ti:a")
    assert seen and seen[0].startswith("academiceval/")
    stats = httpx.get(clean.base_url + "/_stats").json()
    assert stats["requests"] >= stats["api_requests"] >= 1
    r = httpx.post(clean.base_url + "/_faults", json={"rate_429": 0.0, "seed": 3})
    assert r.status_code == 200 and r.json()["seed"] == 3


def test_open_source_dispatch(mirror_dir: Path, clean: ServerHandle) -> None:
    assert isinstance(open_source(str(mirror_dir)), MirrorSource)
    c = open_source(api_url=clean.url, min_interval=0.01)
    assert isinstance(c, ArxivClient) and c.base_url == clean.url and c.pdf_base_url == clean.base_url + "/pdf"
    live = open_source("arxiv")
    assert isinstance(live, ArxivClient) and live.pacer.interval == 3.0 and "export.arxiv.org" in live.base_url
    from academiceval.sources.errors import SourceError

    with pytest.raises(SourceError):
        open_source("/no/such/dir")


def test_timeouts_and_empty_page_quirk_are_retried(clean: ServerHandle, mirror: MirrorSource) -> None:
    clean.set_faults(FaultConfig(rate_slow=0.3, slow_seconds=0.6, rate_empty=0.3, seed=4))
    before = clean.stats()["faults"]
    c = _client(clean, timeout=0.3)
    got = [m.arxiv_id for m in c.iter_search("cat:astro-ph.EP", page_size=25)]
    assert got == [m.arxiv_id for m in mirror.iter_search("cat:astro-ph.EP", page_size=25)]
    faults = {k: v - before[k] for k, v in clean.stats()["faults"].items()}
    assert faults["slow"] >= 1 and faults["empty"] >= 1 and c.retries == faults["slow"] + faults["empty"]
    clean.set_faults(FaultConfig(rate_empty=1.0))
    with pytest.raises(RetriesExhaustedError, match="empty page although totalResults"):
        _client(clean, max_retries=1).search("cat:astro-ph.EP")


def test_fault_spec_parsing_and_endpoints(clean: ServerHandle) -> None:
    cfg = FaultConfig.parse("429=0.1, 500=0.05,truncate=0.02,retry_after=1.5,seed=7,apply_to_pdf=1")
    assert (cfg.rate_429, cfg.rate_500, cfg.rate_truncate, cfg.retry_after, cfg.seed) == (0.1, 0.05, 0.02, 1.5, 7)
    assert cfg.apply_to_pdf is True and FaultConfig.parse(None) == FaultConfig()
    with pytest.raises(ValueError, match="unknown fault setting"):
        FaultConfig.parse("teapot=1")
    assert httpx.get(clean.base_url + "/nowhere").status_code == 404
    assert httpx.head(clean.url, params={"search_query": "cat:astro-ph.GA"}).status_code == 200
    r = httpx.get(clean.url, params={"search_query": "cat:astro-ph.GA", "_fault": "429"})
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    bad = httpx.get(clean.url, params={"id_list": "abc"})
    assert bad.status_code == 400 and "incorrect id format" in bad.text
    from academiceval.sources.atom import parse_feed

    page = parse_feed(httpx.get(clean.url, params={"id_list": "hep-th/9709111v2,0704.0001,9999.99999"}).content)
    assert [m.arxiv_id for m in page.items] == ["hep-th/9709111", "0704.0001"] and page.total_results == 2


def test_clients_of_one_api_share_their_pacing() -> None:
    a = ArxivClient("http://api.example.test/api/query", min_interval=3.0)
    b = ArxivClient("http://api.example.test/api/query", min_interval=3.0)
    other = ArxivClient("http://elsewhere.test/api/query", min_interval=3.0)
    assert a.pacer is b.pacer and a.pacer is not other.pacer


def test_retry_after_forms_and_status_handling() -> None:
    from email.utils import formatdate

    from academiceval.sources.http import retry_after_seconds

    assert retry_after_seconds(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert retry_after_seconds(httpx.Headers({"Retry-After": "0.25"})) == 0.25
    in_2s = retry_after_seconds(httpx.Headers({"Retry-After": formatdate(time.time() + 2, usegmt=True)}))
    assert in_2s is not None and 0.0 <= in_2s <= 2.5
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None

    calls: list[int] = []
    feed = (
        b"<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>http://arxiv.org/abs/2401.00001v1</id><title>T</title>"
    )
    feed += b"<published>2024-01-01T00:00:00Z</published></entry></feed>"

    def flaky(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(429)  # no Retry-After: exponential backoff
        if len(calls) == 2:
            return httpx.Response(503, headers={"Retry-After": "0"})
        return httpx.Response(200, content=feed)

    c = ArxivClient("http://m.test/api/query", min_interval=0, backoff_base=0.01, transport=httpx.MockTransport(flaky))
    page = c.search("ti:t")
    assert [m.arxiv_id for m in page.items] == ["2401.00001"] and c.requests_made == 3 and c.retries == 2

    forbidden = ArxivClient(
        "http://n.test/api/query", min_interval=0, transport=httpx.MockTransport(lambda r: httpx.Response(403))
    )
    with pytest.raises(HTTPStatusError):
        forbidden.search("ti:t")
    assert forbidden.requests_made == 1  # not retried


def test_concurrent_clients_under_faults(clean: ServerHandle, mirror: MirrorSource) -> None:
    clean.set_faults(FaultConfig(rate_429=0.1, rate_500=0.1, rate_truncate=0.05, retry_after=0.01, seed=9))
    before = clean.stats()["api_requests"]
    cats = ["astro-ph.GA", "astro-ph.SR", "astro-ph.HE", "astro-ph.CO", "astro-ph.EP", "astro-ph.IM"]
    results: dict[str, list[str]] = {}
    clients = [_client(clean, min_interval=0.0) for _ in cats]

    def run(c: ArxivClient, category: str) -> None:
        results[category] = [m.arxiv_id for m in c.iter_search(f"cat:{category}", page_size=50)]

    threads = [threading.Thread(target=run, args=(c, k)) for c, k in zip(clients, cats, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for k in cats:
        assert results[k] == [m.arxiv_id for m in mirror.iter_search(f"cat:{k}", page_size=50)]
    assert clean.stats()["api_requests"] - before == sum(c.requests_made for c in clients)
