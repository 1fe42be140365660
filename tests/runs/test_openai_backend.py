"""The OpenAI-compatible backend against the local fake server: every failure becomes a typed error."""

from __future__ import annotations

import asyncio

import pytest

from academiceval.errors import ConfigError
from academiceval.models import errors as E
from academiceval.models.base import GenerationOptions
from academiceval.models.openai_backend import OpenAIBackend, is_loopback, normalize_base_url
from academiceval.models.registry import load_backend, parse_spec
from academiceval.sources.http import retry_after_seconds
from academiceval.store.hashing import sha256_hex
from academiceval.testing.fake_server import FakeServerConfig, _pick, _unit, deterministic_answer

OPTS = GenerationOptions(max_tokens=32)


def prompt_with(kind: str, table: str, cfg: FakeServerConfig, start: int = 0) -> str:
    """A real-looking prompt that the server's seeded hash assigns to fault `kind` (or to no fault: kind='')."""
    fractions = cfg.transient if table == "transient" else cfg.permanent
    for i in range(start, start + 5000):
        p = f"Write the title of paper {i} about random polynomials and their zeros."
        got = _pick(fractions, _unit(cfg.seed, table, sha256_hex(p)))
        if (got or "") == kind:
            return p
    raise AssertionError(f"no prompt maps to {kind}")


def gen(backend: OpenAIBackend, prompt: str):
    async def go():
        try:
            return await backend.generate(prompt, OPTS)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_answer_is_deterministic_and_counted(fake_server):
    srv = fake_server()
    b = OpenAIBackend("fake-model", base_url=srv.url)
    p = "Write the title of a paper on the zeros of derivatives of random polynomials."
    c1, c2 = gen(b, p), gen(b, p)
    assert c1.text == c2.text == deterministic_answer(p + "", 24, 32)
    assert c1.input_tokens == len(p.split()) and c1.output_tokens == len(c1.text.split())
    assert srv.stats.by_prompt[sha256_hex(p)] == 2


@pytest.mark.parametrize(
    ("kind", "error", "retry_after"),
    [("429", E.RateLimitedError, 0.25), ("500", E.ServerError, None), ("malformed", E.MalformedResponseError, None)],
)
def test_transient_faults_are_typed_and_retryable(fake_server, kind, error, retry_after):
    srv = fake_server(transient={kind: 0.5}, retry_after_s=0.25)
    p = prompt_with(kind, "transient", srv.config)
    with pytest.raises(error) as ei:
        gen(OpenAIBackend("fake-model", base_url=srv.url), p)
    assert ei.value.retryable
    assert getattr(ei.value, "retry_after", None) == retry_after
    # the fault is only on the first attempt: the same request then succeeds
    assert gen(OpenAIBackend("fake-model", base_url=srv.url), p).text


def test_timeout_is_typed(fake_server):
    srv = fake_server(transient={"timeout": 0.5}, hang_s=1.0)
    p = prompt_with("timeout", "transient", srv.config)
    with pytest.raises(E.RequestTimeoutError):
        gen(OpenAIBackend("fake-model", base_url=srv.url, timeout=0.3), p)


@pytest.mark.parametrize(("kind", "error"), [("empty", E.EmptyAnswerError), ("refusal", E.RefusedAnswerError)])
def test_permanent_faults_are_typed_and_final(fake_server, kind, error):
    srv = fake_server(permanent={kind: 0.5})
    p = prompt_with(kind, "permanent", srv.config)
    for _ in range(2):
        with pytest.raises(error) as ei:
            gen(OpenAIBackend("fake-model", base_url=srv.url), p)
        assert not ei.value.retryable


def test_invalid_utf8_is_kept_and_flagged(fake_server):
    srv = fake_server(permanent={"invalid_utf8": 0.5})
    p = prompt_with("invalid_utf8", "permanent", srv.config)
    c = gen(OpenAIBackend("fake-model", base_url=srv.url), p)
    assert c.raw.get("invalid_utf8") is True
    assert "\ufffd" in c.text and c.text.endswith(deterministic_answer(p, 24, 32))


def test_context_length_error_from_server(fake_server):
    srv = fake_server(context_window=10)
    with pytest.raises(E.ContextLengthError) as ei:
        gen(OpenAIBackend("fake-model", base_url=srv.url), "word " * 50)
    assert "maximum context length is 10" in str(ei.value) and not ei.value.retryable


def test_unknown_model_and_unreachable_server_fail_validation(fake_server):
    srv = fake_server(models=("served-a", "served-b"))

    async def validate(b):
        try:
            await b.validate()
        finally:
            await b.aclose()

    with pytest.raises(E.UnknownModelError, match="served-a, served-b"):
        asyncio.run(validate(OpenAIBackend("missing-model", base_url=srv.url)))
    asyncio.run(validate(OpenAIBackend("served-b", base_url=srv.url)))
    with pytest.raises(E.ConnectionFailedError, match="cannot reach"):
        asyncio.run(validate(OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", timeout=2)))


def test_rejected_key_is_redacted(fake_server):
    secret = "sk-test-THIS-KEY-MUST-NOT-LEAK-0123456789"
    srv = fake_server(api_key="sk-right-key-right-key-right-key")

    async def validate(b):
        try:
            await b.validate()
        finally:
            await b.aclose()

    b = OpenAIBackend("fake-model", base_url=srv.url, api_key=secret)
    assert secret not in repr(b) and secret not in str(b.cache_identity())
    with pytest.raises(E.MissingAPIKeyError) as ei:
        asyncio.run(validate(b))
    assert secret not in str(ei.value)
    with pytest.raises(E.AuthError) as ei:
        gen(OpenAIBackend("fake-model", base_url=srv.url, api_key=secret), "hello there")
    assert "Incorrect API key" in str(ei.value) and secret not in str(ei.value)
    assert secret[:8] not in str(ei.value) and secret[-4:] not in str(ei.value)


def test_spec_parsing_and_missing_key(monkeypatch):
    assert parse_spec("openai/gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_spec("hf/org/model-7b") == ("hf", "org/model-7b")
    for bad in ("gpt-4o", "vllm/x", "openai/", ""):
        with pytest.raises(ConfigError, match="provider/model"):
            parse_spec(bad)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(E.MissingAPIKeyError, match="OPENAI_API_KEY is not set"):
        load_backend("openai/gpt-4o-mini")
    with pytest.raises(E.MissingAPIKeyError, match="MY_KEY"):
        load_backend("openai/m", base_url="https://api.together.xyz/v1", api_key_env="MY_KEY")
    b = load_backend("openai/m", base_url="http://localhost:8000")  # loopback: no key needed
    assert b.base_url == "http://localhost:8000/v1"
    monkeypatch.setenv("MY_KEY", "sk-abc")
    assert load_backend("openai/m", base_url="https://x.example/v1", api_key_env="MY_KEY").cache_identity() == {
        "backend": "openai",
        "model": "m",
        "base_url": "https://x.example/v1",
    }


def test_url_and_retry_after_helpers():
    assert normalize_base_url("http://user:pw@127.0.0.1:8000/") == "http://127.0.0.1:8000/v1"
    assert normalize_base_url("https://api.example.com/openai/v1/") == "https://api.example.com/openai/v1"
    assert is_loopback("http://127.0.0.1:1/v1") and is_loopback("http://[::1]:8/v1")
    assert not is_loopback("https://api.openai.com/v1")
    with pytest.raises(ConfigError):
        normalize_base_url("localhost:8000")
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert retry_after_seconds({}) is None


def test_request_body_is_the_payload_as_json_and_answers_parse_as_json_loads_does():
    """The body is encoded by pydantic-core (non-ASCII as UTF-8), sent as application/json, and decodes to the
    same value json.dumps would have sent; answer bodies parse to json.loads's value, and a body pydantic-core
    refuses (a lone surrogate escape) is still read the way json.loads reads it."""
    import json

    from aiohttp import web

    from academiceval.models.openai_backend import _loads

    seen: list[tuple[str, bytes]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.read()
        seen.append((request.content_type, body))
        prompt = json.loads(body)["messages"][0]["content"]
        answer = {"choices": [{"message": {"content": f"len {len(prompt)} \\ud800"}, "finish_reason": "stop"}]}
        return web.Response(body=json.dumps(answer).replace("\\\\ud800", "\\ud800"), content_type="application/json")

    prompt = 'Schrödinger’s “cat” — ∑ over 😀 "quoted" \\ back\nslash\t\u2028'
    options = GenerationOptions(max_tokens=7, seed=3, stop=["\n\n"], temperature=0.2)

    async def go():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        b = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1")
        try:
            return await b.generate(prompt, options), b._payload(prompt, options)
        finally:
            await b.aclose()
            await runner.cleanup()

    completion, payload = asyncio.run(go())
    ((content_type, body),) = seen
    assert content_type == "application/json"
    assert json.loads(body) == json.loads(json.dumps(payload)) == payload
    assert "ö".encode() in body and b"\\u00f6" not in body  # UTF-8, not \u escapes (the openai SDK sends the same)
    assert (
        completion.text == f"len {len(prompt)} \ud800"
    )  # pydantic-core refuses the lone surrogate; json.loads decided
    for text in ('{"a": 1, "a": [1e400, NaN, 12345678901234567890123, 0.1, -0.0, "\\u00e9\\ud83d\\ude00"]}', "[]"):
        assert repr(_loads(text)) == repr(json.loads(text))
    with pytest.raises(ValueError):
        _loads('{"choices": [')
