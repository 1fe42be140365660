"""A local OpenAI-compatible server for tests and benchmarks (`/v1/chat/completions`, `/v1/models`).

It answers deterministically from the prompt (the same prompt always gets the same answer, built from the
prompt's own words so metrics see overlap), counts requests per prompt hash, and injects faults on demand:
  * transient faults (429 with Retry-After, 500, a hang longer than the client's timeout, a cut JSON body, a
    `content` that is a number, a body trickled out slowly) on the first `transient_attempts` requests of a chosen
    fraction of prompts — a retry then succeeds;
  * permanent faults (empty content, a refusal, invalid UTF-8 in the answer, non-text content) on a chosen
    fraction of prompts;
  * `fail_all=401` (or any status): every chat request answers that status while it is set (a key that lists
    models but may not generate; set it back to None to "fix the key");
  * a context-length error (HTTP 400, vLLM's wording) for prompts longer than `context_window` "tokens"
    (whitespace words, a stand-in tokenizer).
A `responder` (prompt → text) replaces the default answer, e.g. a scripted judge (tests/scores, benchmarks).
Which prompts get which fault is decided by a seeded hash of the prompt, so a run is reproducible. Binds
127.0.0.1 only. `python -m academiceval.testing.fake_server --port 8000` serves until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from academiceval.store.hashing import sha256_hex

TRANSIENT_KINDS = ("429", "500", "timeout", "malformed", "nonstring", "slow")
PERMANENT_KINDS = ("empty", "refusal", "invalid_utf8", "malformed", "nonstring")


@dataclass
class FakeServerConfig:
    models: tuple[str, ...] = ("fake-model",)
    latency_s: float = 0.0
    seed: int = 0
    transient: dict[str, float] = field(default_factory=dict)  # kind -> fraction of prompts
    transient_attempts: int = 1  # how many first attempts of such a prompt fail
    permanent: dict[str, float] = field(default_factory=dict)  # kind -> fraction of prompts
    context_window: int | None = None  # whitespace words; longer prompts get a context-length error
    retry_after_s: float = 0.05
    hang_s: float = 30.0  # how long a "timeout" fault stalls (the client should give up first)
    api_key: str | None = None  # if set, requests must carry it; a wrong key gets a 401 that echoes it (like some APIs)
    answer_words: int = 24
    slow_body_s: float = 0.2  # a "slow" fault sends its (good) body in 4 pieces over this many seconds
    fail_all: int | None = None  # while set, every chat request answers this HTTP status (e.g. 401)
    responder: Callable[[str], str] | None = None  # the answer to a prompt (e.g. a judge's reply); default: words
    # a prompt that asks for `<answer>…</answer>` (multiple choice) gets one letter A-D (two when it asks for "two or
    # more") picked by a hash of the prompt and the request's seed, as a sampling model would (epochs then differ)
    answer_choices: bool = False


@dataclass
class ServerStats:
    total: int = 0
    in_flight: int = 0
    completed: int = 0
    by_prompt: Counter[str] = field(default_factory=Counter)  # sha256(prompt) -> requests seen
    by_model_prompt: Counter[tuple[str, str]] = field(default_factory=Counter)  # (model, sha256) -> requests seen
    by_prompt_seed: Counter[tuple[str, object]] = field(default_factory=Counter)  # (sha256, seed or None) -> requests
    by_status: Counter[int] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    auth_headers: list[str] = field(default_factory=list)  # distinct Authorization values seen (tests only)


def _unit(seed: int, salt: str, digest: str) -> float:
    h = hashlib.sha256(f"{seed}:{salt}:{digest}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def _pick(fractions: dict[str, float], u: float) -> str | None:
    acc = 0.0
    for kind, frac in sorted(fractions.items()):
        acc += frac
        if u < acc:
            return kind
    return None


def deterministic_answer(prompt: str, n_words: int, max_tokens: int | None) -> str:
    """A stable answer built from the prompt's words (chosen by its hash), capped by max_tokens."""
    words = prompt.split()
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    n = min(n_words, max_tokens or n_words)
    if not words:
        return f"answer {digest.hex()[:8]}"
    start = int.from_bytes(digest[:4], "big") % len(words)
    picked = [words[(start + 7 * i) % len(words)] for i in range(max(1, n - 1))]
    return " ".join([f"[{digest.hex()[:6]}]", *picked])


class FakeOpenAIServer:
    def __init__(self, config: FakeServerConfig | None = None) -> None:
        self.config = config or FakeServerConfig()
        self.stats = ServerStats()
        self.app = web.Application(client_max_size=64 * 1024**2)
        self.app.router.add_get("/v1/models", self.models)
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_get("/_stats", self.stats_json)

    async def stats_json(self, request: web.Request) -> web.Response:
        """Counters for benchmarks that run the server in its own process."""
        st = self.stats
        return web.json_response(
            {
                "total": st.total,
                "completed": st.completed,
                "distinct_prompts": len(st.by_prompt),
                "max_per_prompt": max(st.by_prompt.values(), default=0),
                "by_status": {str(k): v for k, v in st.by_status.items()},
                "faults": dict(st.faults),
            }
        )

    def _auth_error(self, request: web.Request) -> web.Response | None:
        header = request.headers.get("Authorization", "")
        if header and header not in self.stats.auth_headers:
            self.stats.auth_headers.append(header)
        want = self.config.api_key
        if want is None or header == f"Bearer {want}":
            return None
        given = header.removeprefix("Bearer ")
        body = {
            "error": {
                "message": f"Incorrect API key provided: {given}.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        }
        return web.json_response(body, status=401)

    async def models(self, request: web.Request) -> web.Response:
        if (err := self._auth_error(request)) is not None:
            return err
        data = [{"id": m, "object": "model", "owned_by": "academiceval-fake"} for m in self.config.models]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        st = self.stats
        st.total += 1
        st.in_flight += 1
        try:
            resp = await self._chat(request)
        finally:
            st.in_flight -= 1
        st.completed += 1
        st.by_status[resp.status] += 1
        return resp

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        cfg, st = self.config, self.stats
        if (err := self._auth_error(request)) is not None:
            return err
        if cfg.fail_all is not None:
            st.faults[f"fail_all_{cfg.fail_all}"] += 1
            return web.json_response(
                {"error": {"message": f"failing every request with {cfg.fail_all}"}}, status=cfg.fail_all
            )
        try:
            payload = await request.json()
            prompt = "\n".join(str(m.get("content", "")) for m in payload["messages"])
            model = payload["model"]
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": {"message": "bad request body"}}, status=400)
        if model not in cfg.models:
            return web.json_response({"error": {"message": f"The model `{model}` does not exist."}}, status=404)
        digest = sha256_hex(prompt)
        st.by_prompt[digest] += 1
        st.by_model_prompt[(model, digest)] += 1
        seen = st.by_model_prompt[(model, digest)]  # each model's first attempts fail (two runs, one server)
        if cfg.latency_s:
            await asyncio.sleep(cfg.latency_s)
        transient = _pick(cfg.transient, _unit(cfg.seed, "transient", digest))
        if transient and seen <= cfg.transient_attempts:
            st.faults[transient] += 1
            if transient == "429":
                return web.json_response(
                    {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
                    status=429,
                    headers={"Retry-After": f"{cfg.retry_after_s:g}"},
                )
            if transient == "500":
                return web.json_response({"error": {"message": "internal error"}}, status=500)
            if transient == "timeout":
                await asyncio.sleep(cfg.hang_s)
            if transient == "malformed":
                return web.Response(
                    body=b'{"id": "x", "choices": [{"message": {"content": "cut',
                    status=200,
                    content_type="application/json",
                )
            if transient == "nonstring":
                return web.json_response({"choices": [{"message": {"content": 42}, "finish_reason": "stop"}]})
        n_words = len(prompt.split())
        if cfg.context_window is not None and n_words > cfg.context_window:
            st.faults["context_length"] += 1
            msg = (
                f"This model's maximum context length is {cfg.context_window} tokens. However, you requested "
                f"{n_words} tokens in the messages. Please reduce the length of the messages."
            )
            return web.json_response({"error": {"message": msg, "type": "BadRequestError", "code": 400}}, status=400)
        max_tokens = payload.get("max_tokens")
        seed = payload.get("seed")
        st.by_prompt_seed[(digest, seed)] += 1
        # the same prompt and seed always get the same answer; a request without a seed is answered as before
        seeded = prompt if seed is None else f"{prompt}\x00seed={seed}"
        if cfg.responder is not None:
            answer = cfg.responder(prompt)
        else:
            answer = deterministic_answer(seeded, cfg.answer_words, max_tokens)
        if cfg.answer_choices and "<answer>" in prompt:  # two letters when the prompt asks for several
            h = int(sha256_hex(seeded)[:8], 16)
            pick = "ABCD"[h % 4] if "two or more" not in prompt.lower() else ["AB", "AC", "AD", "BC", "BD", "CD"][h % 6]
            answer = f"<answer>{pick}</answer>"
        permanent = _pick(cfg.permanent, _unit(cfg.seed, "permanent", digest))
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        finish = "stop"
        if permanent:
            st.faults[permanent] += 1
        if permanent == "empty":
            message["content"] = ""
        elif permanent == "refusal":
            message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
        elif permanent == "malformed":
            return web.Response(body=b"<html>502 Bad Gateway</html>", status=200, content_type="application/json")
        elif permanent == "nonstring":
            message["content"] = [1, 2, 3]
        body = {
            "id": f"chatcmpl-{digest[:12]}",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": n_words,
                "completion_tokens": len(answer.split()),
                "total_tokens": n_words + len(answer.split()),
            },
        }
        raw = json.dumps(body).encode("utf-8")
        if permanent == "invalid_utf8":
            raw = raw.replace(b'"content": "', b'"content": "\xff\xfe ', 1)
        if transient == "slow" and seen <= cfg.transient_attempts:
            return await self._trickle(request, raw)
        return web.Response(body=raw, status=200, content_type="application/json")

    async def _trickle(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        """A good answer sent in four pieces with pauses (a slow proxy; the client's total timeout covers it)."""
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        resp.content_length = len(raw)
        await resp.prepare(request)
        step = max(1, len(raw) // 4 + 1)
        for i in range(0, len(raw), step):
            await resp.write(raw[i : i + step])
            await asyncio.sleep(self.config.slow_body_s / 4)
        await resp.write_eof()
        return resp


@dataclass
class ServerHandle:
    url: str  # base URL including /v1
    server: FakeOpenAIServer
    thread: threading.Thread
    _loop: asyncio.AbstractEventLoop
    _stop: asyncio.Event

    @property
    def stats(self) -> ServerStats:
        return self.server.stats

    @property
    def config(self) -> FakeServerConfig:
        return self.server.config

    def stop(self) -> None:
        if self.thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self.thread.join(timeout=10)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(config: FakeServerConfig | None = None, *, port: int = 0) -> ServerHandle:
    """Serve on 127.0.0.1 (an ephemeral port by default) in a daemon thread; returns when it accepts requests."""
    server = FakeOpenAIServer(config)
    ready = threading.Event()
    box: dict[str, Any] = {}

    def main() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        stop = asyncio.Event()

        async def serve() -> None:
            runner = web.AppRunner(server.app, access_log=None, handle_signals=False)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
            await site.start()
            sock = site._server.sockets[0]
            box["port"] = sock.getsockname()[1]
            box["loop"], box["stop"] = loop, stop
            ready.set()
            await stop.wait()
            await runner.cleanup()

        try:
            loop.run_until_complete(serve())
        except BaseException as e:  # surface bind errors to the caller
            box["error"] = e
            ready.set()
        finally:
            loop.close()

    thread = threading.Thread(target=main, name="fake-openai-server", daemon=True)
    thread.start()
    if not ready.wait(timeout=30):
        raise RuntimeError("fake server did not start within 30 s")
    if "error" in box:
        raise box["error"]
    return ServerHandle(f"http://127.0.0.1:{box['port']}/v1", server, thread, box["loop"], box["stop"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Local OpenAI-compatible test server (127.0.0.1 only).")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--model", action="append", help="model id to serve (repeatable); default fake-model")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    ap.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND=FRACTION",
        help=f"transient fault on first attempts: {', '.join(TRANSIENT_KINDS)}",
    )
    ap.add_argument(
        "--permanent",
        action="append",
        default=[],
        metavar="KIND=FRACTION",
        help=f"permanent fault: {', '.join(PERMANENT_KINDS)}",
    )
    ap.add_argument("--context-window", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--retry-after", type=float, default=0.05, help="Retry-After seconds of a 429 fault")
    ap.add_argument("--hang", type=float, default=30.0, help="seconds a timeout fault stalls")
    ap.add_argument("--slow-body", type=float, default=0.2, help="seconds a slow fault takes to send its body")
    ap.add_argument("--transient-attempts", type=int, default=1, help="first attempts of a faulty prompt that fail")
    ap.add_argument(
        "--answer-choices", action="store_true", help="answer <answer>-tag prompts with a letter per (prompt, seed)"
    )
    ap.add_argument("--fail-all", type=int, default=None, metavar="STATUS", help="answer every chat request so")
    a = ap.parse_args(argv)

    def pairs(items: list[str]) -> dict[str, float]:
        return {k: float(v) for k, v in (i.split("=", 1) for i in items)}

    cfg = FakeServerConfig(
        models=tuple(a.model or ["fake-model"]),
        latency_s=a.latency,
        seed=a.seed,
        transient=pairs(a.fault),
        permanent=pairs(a.permanent),
        context_window=a.context_window,
        retry_after_s=a.retry_after,
        hang_s=a.hang,
        slow_body_s=a.slow_body,
        transient_attempts=a.transient_attempts,
        answer_choices=a.answer_choices,
        fail_all=a.fail_all,
    )
    web.run_app(FakeOpenAIServer(cfg).app, host="127.0.0.1", port=a.port, access_log=None, print=print)


if __name__ == "__main__":
    main()
