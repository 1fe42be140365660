"""Hostile model servers: answers of the wrong type, endless Retry-After (issue 10, findings 9 and 11)."""

from __future__ import annotations

import asyncio
import json

import pytest

from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.errors import EmptyAnswerError, MalformedResponseError, RateLimitedError, ServerError
from academiceval.models.openai_backend import OpenAIBackend
from academiceval.models.retry import RetryPolicy, RetryStats, generate_with_retry


def body(content, **extra) -> bytes:
    msg = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"message": msg, "finish_reason": "stop"}], **extra}).encode()


BAD_CONTENT = [42, 3.5, True, {"text": "x"}, ["a", "b"], [{"type": "image", "text": 7}], [None]]


@pytest.mark.parametrize("content", BAD_CONTENT, ids=[type(c).__name__ + str(i) for i, c in enumerate(BAD_CONTENT)])
def test_content_that_is_not_text_is_a_malformed_response(content) -> None:
    # before: `internal: TypeError` (a number) or AttributeError (a list of strings) from the parser
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(MalformedResponseError) as ei:
        backend._parse(body(content))
    assert ei.value.code == "malformed_response" and "not text" in str(ei.value)


@pytest.mark.parametrize(
    "raw",
    [
        body("fine", usage=[1, 2]),
        body("fine", usage={"prompt_tokens": "many", "completion_tokens": -3}),
        body("fine", model=17, system_fingerprint=["x"]),
        json.dumps({"choices": [{"message": {"content": "fine"}, "finish_reason": 3}]}).encode(),
    ],
)
def test_odd_metadata_around_a_good_answer_is_ignored_not_fatal(raw: bytes) -> None:
    c = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")._parse(raw)
    assert c.text == "fine" and c.input_tokens in (None,) and c.output_tokens is None


def test_content_parts_and_null_content_keep_their_meaning() -> None:
    b = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    assert b._parse(body([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])).text == "ab"
    with pytest.raises(EmptyAnswerError):
        b._parse(body(None))


class Scripted:
    name, model = "scripted", "m"
    capabilities = Capabilities()

    def __init__(self, script: list[Exception]) -> None:
        self.script, self.calls = list(script), 0

    def cache_identity(self):
        return {"backend": self.name, "model": self.model}

    async def generate(self, prompt, options, sample=None):
        self.calls += 1
        if self.script:
            raise self.script.pop(0)
        return Completion(text="ok")

    async def aclose(self):
        pass


def call(backend: Scripted, policy: RetryPolicy) -> Completion:
    return asyncio.run(generate_with_retry(backend, "p", GenerationOptions(), policy=policy, stats=RetryStats()))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("first_ok_wait", [False, True], ids=["first-retry", "later-retry"])
def test_retry_after_past_max_wait_gives_up_as_rate_limited(first_ok_wait: bool) -> None:
    # before: Retry-After 86400 was capped at 300 s and waited up to 5 times, silently
    script = [RateLimitedError("429", retry_after=86400.0)]
    if first_ok_wait:
        script.insert(0, ServerError("500", retry_after=0.0))
    seen: list[float] = []
    backend = Scripted(script)
    policy = RetryPolicy(max_wait_s=60.0, on_wait=lambda s, e: seen.append(s))
    with pytest.raises(RateLimitedError) as ei:
        call(backend, policy)
    err = ei.value
    assert err.code == "rate_limited" and err.retryable and "86400" in str(err) and "--max-wait" in str(err)
    assert backend.calls == len(script)  # no attempt after the 429 that asked for a day
    assert seen == []  # it gave up instead of waiting


def test_long_waits_are_reported_before_they_start() -> None:
    seen: list[tuple[float, str]] = []
    backend = Scripted([RateLimitedError("429", retry_after=0.05), ServerError("500", retry_after=0.01)])
    policy = RetryPolicy(max_wait_s=10.0, show_wait_s=0.02, on_wait=lambda s, e: seen.append((s, e.code)))
    assert call(backend, policy).text == "ok"
    assert seen == [(0.05, "rate_limited")]  # the 0.01 s wait is below the threshold
    assert backend.calls == 3


def test_waits_add_up_against_the_budget() -> None:
    backend = Scripted([RateLimitedError("429", retry_after=0.2)] * 4)
    with pytest.raises(RateLimitedError, match=r"past the wait limit of 0\.5 s"):
        call(backend, RetryPolicy(max_wait_s=0.5))
    assert backend.calls == 3  # waited 0.2 + 0.2, the third wait would pass 0.5
