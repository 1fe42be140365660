"""The one model-call path (`models.generate.Generator`): cache → shared in-flight call → retries → backend, used by
the runner and the judge alike; backend capabilities; unknown backend options; models/ never imports runs/."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
from datetime import date
from pathlib import Path

import pytest

import academiceval.models as models_pkg
from academiceval.errors import ConfigError
from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.cache import ResponseCache, cache_key
from academiceval.models.errors import EmptyAnswerError, RateLimitedError
from academiceval.models.generate import Generator
from academiceval.models.registry import SHARED_OPTIONS, load_backend
from academiceval.models.retry import RetryPolicy
from academiceval.scores.judge import ASPECTS, Judge
from academiceval.store.models import Sample

FAST = RetryPolicy(max_attempts=3, initial_s=0.001, max_backoff_s=0.002)


class CountingBackend:
    """Answers `reply(prompt)` (or raises the scripted errors first), counting the calls that reach it."""

    name, model = "counting", "m"

    def __init__(self, reply=lambda p: f"answer to {p}", script=(), delay=0.0, caps=Capabilities()) -> None:
        self.reply, self.script, self.delay, self.capabilities = reply, list(script), delay, caps
        self.prompts: list[str] = []
        self.samples: list[Sample | None] = []

    def cache_identity(self) -> dict:
        return {"backend": self.name, "model": self.model}

    async def generate(self, prompt, options, sample=None):
        self.prompts.append(prompt)
        self.samples.append(sample)
        await asyncio.sleep(self.delay)
        if self.script:
            raise self.script.pop(0)
        return Completion(text=self.reply(prompt))

    async def aclose(self) -> None:
        return None


def _sample(body: str) -> Sample:
    return Sample(
        sample_id="abstract/zero-shot/2212.00001",
        round="r",
        task="abstract",
        setting="zero-shot",
        split="test",
        arxiv_id="2212.00001",
        paper_id="p",
        published=date(2022, 12, 1),
        fields={"title": "T", "body": body},
        label="L",
    )


def test_second_call_is_a_cache_hit_with_the_old_key_formula(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    backend = CountingBackend()
    gen = Generator(backend, cache=cache, policy=FAST)
    opts = GenerationOptions(max_tokens=16)
    first = asyncio.run(gen.generate("hello", opts))
    assert first.source == "backend" and first.attempts == 1 and first.unwrap().text == "answer to hello"
    # the key is the one the runner and the judge used before the call path moved: existing caches still hit
    sha = hashlib.sha256(b"hello").hexdigest()
    assert first.key == cache_key(backend.cache_identity(), opts, sha)
    again = Generator(CountingBackend(), cache=cache).generate("hello", opts)
    second = asyncio.run(again)
    assert second.source == "cache" and second.cached and second.attempts == 0 and second.committed
    assert second.unwrap().text == "answer to hello" and len(backend.prompts) == 1


def test_errors_and_empty_answers_are_not_cached_and_come_back_as_data(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    backend = CountingBackend(reply=lambda p: "  ", script=[RateLimitedError("busy", retry_after=0.0)])
    gen = Generator(backend, cache=cache, policy=FAST)
    got = asyncio.run(gen.generate("p", GenerationOptions()))
    assert got.attempts == 2 and got.completion is not None and not got.completion.text.strip()  # retried once
    assert cache.count() == 0 and gen.stats.retries == 1 and gen.stats.attempts == 2
    failing = Generator(CountingBackend(script=[EmptyAnswerError("empty")]), cache=cache, policy=FAST)
    out = asyncio.run(failing.generate("q", GenerationOptions()))
    assert isinstance(out.error, EmptyAnswerError) and out.attempts == 1 and cache.count() == 0
    with pytest.raises(EmptyAnswerError):
        out.unwrap()


def test_identical_calls_in_flight_share_one_request():
    backend = CountingBackend(delay=0.05)
    gen = Generator(backend, policy=FAST)

    async def both():
        opts = GenerationOptions()
        return await asyncio.gather(gen.generate("same", opts), gen.generate("same", opts))

    a, b = asyncio.run(both())
    assert len(backend.prompts) == 1 and sorted([a.source, b.source]) == ["backend", "shared"]
    assert a.unwrap().text == b.unwrap().text


def test_a_backend_that_reads_the_sample_is_keyed_by_it():
    reader = Generator(CountingBackend(caps=Capabilities(reads_sample=True)))
    plain = Generator(CountingBackend())
    prefix = reader.prefix(GenerationOptions())
    s1, s2 = _sample("one body"), _sample("another body")
    assert reader.key(prefix, "a" * 64, s1) != reader.key(prefix, "a" * 64, s2)
    assert reader.key(prefix, "a" * 64) == plain.key(prefix, "a" * 64) == plain.key(prefix, "a" * 64, s1)
    digest = hashlib.sha256(s1.model_dump_json().encode()).hexdigest()  # the runner's formula, unchanged
    expected = hashlib.sha256(prefix + b"|" + f"{'a' * 64}|sample:{digest}".encode()).hexdigest()
    assert reader.key(prefix, "a" * 64, s1) == expected


def test_builtin_backends_declare_their_capabilities():
    assert load_backend("baseline/lead").capabilities == Capabilities(reads_sample=True)
    assert load_backend("openai/m", base_url="http://127.0.0.1:9/v1").capabilities.validate
    # HFBackend sets Capabilities(context_length=<max_position_embeddings>) once loaded (tests/models/test_hf_backend)


def test_an_unknown_backend_option_is_an_error():
    with pytest.raises(ConfigError, match=r"unknown option 'similarty' for backend 'baseline/lead'.*similarity"):
        load_backend("baseline/lead", similarty="bm25")
    with pytest.raises(ConfigError, match=r"unknown options 'conection_limit', 'sytem_prompt'.*connection_limit"):
        load_backend("openai/m", base_url="http://127.0.0.1:9/v1", conection_limit=2, sytem_prompt="x")
    with pytest.raises(ConfigError, match="unknown option 'api_key'"):  # resolved from the environment, not passed
        load_backend("openai/m", base_url="http://127.0.0.1:9/v1", api_key="sk-x")
    # the runner-wide options reach every backend; one that does not use them ignores them
    assert {"timeout", "templates_dir"} == SHARED_OPTIONS
    assert load_backend("baseline/demo-copy", similarity="bm25", timeout=5.0, templates_dir=None).similarity == "bm25"
    assert load_backend("openai/m", base_url="http://127.0.0.1:9/v1", templates_dir="x", timeout=7.0).timeout == 7.0


def _verdict_backend() -> CountingBackend:
    return CountingBackend(reply=lambda p: json.dumps({k: "A" for k in ASPECTS}))


def test_the_judge_goes_through_the_generator_and_hits_the_cache_on_a_second_call(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    backend = _verdict_backend()
    judge = Judge(backend, cache=cache)
    assert isinstance(judge.generator, Generator) and judge.generator.cache is cache
    first = asyncio.run(judge.judge_pair("abstract", "A paper", "candidate", "reference"))
    assert len(backend.prompts) == 2 and judge.calls == 2 and first.values()["overall"] == 0.5
    # the judge's key formula is unchanged: cache_key(identity, options, sha256(prompt))
    prompt = backend.prompts[0]
    key = cache_key(backend.cache_identity(), judge.options, hashlib.sha256(prompt.encode()).hexdigest())
    assert cache.get(key) is not None
    # a second judge (a re-score in a new process) over the same cache sends nothing
    other = _verdict_backend()
    again = Judge(other, cache=cache)
    second = asyncio.run(again.judge_pair("abstract", "A paper", "candidate", "reference"))
    assert other.prompts == [] and again.calls == 0 and second.values() == first.values()


def test_the_judge_retries_transient_errors_like_the_runner(tmp_path):
    backend = _verdict_backend()
    backend.script = [RateLimitedError("429", retry_after=0.0)]
    judge = Judge(backend)
    judge.generator.policy = FAST
    j = asyncio.run(judge.judge_once("title", "T", "cand", "other", candidate_first=True))
    assert j.error is None and len(backend.prompts) == 2 and judge.generator.stats.rate_limited == 1


def test_models_never_imports_runs():
    root = Path(models_pkg.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            higher = ("academiceval.runs", "academiceval.scores")
            offenders += [f"{path.name}: {n}" for n in names if n.startswith(higher)]
    assert offenders == []
