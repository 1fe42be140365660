"""The runner calls models through `models.generate.Generator` (the judge's path too) and reads what a backend
supports from its `capabilities`, never by probing attributes."""

from __future__ import annotations

from academiceval.models.base import Capabilities, Completion
from academiceval.models.generate import Generator
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round


class DeclaringBackend:
    """Declares validate + a context window; has a `base_url`-free identity and no other optional attributes."""

    name, model = "declaring", "m"
    capabilities = Capabilities(validate=True, context_length=4096)

    def __init__(self) -> None:
        self.validated = 0
        self.calls = 0

    def cache_identity(self) -> dict:
        return {"backend": self.name, "model": self.model}

    async def validate(self) -> None:
        self.validated += 1

    async def generate(self, prompt, options, sample=None) -> Completion:
        self.calls += 1
        return Completion(text=f"A title for {len(prompt)} characters", finish_reason="stop")

    async def aclose(self) -> None:
        return None


def test_runner_uses_capabilities_and_the_generator(sample_round, tmp_path, monkeypatch):
    sources: list[str] = []
    real = Generator.generate

    async def spy(self, prompt, options, sample=None, **kw):
        got = await real(self, prompt, options, sample, **kw)
        sources.append(got.source)
        return got

    monkeypatch.setattr(Generator, "generate", spy)
    backend = DeclaringBackend()
    s = run_round(
        tmp_path / "ws", sample_round, RunConfig(model="baseline/lead", limit=2, tasks=["title"]), backend=backend
    )
    assert backend.validated == 1  # Capabilities.validate: awaited once before any request
    assert s.run_dir.name.endswith("ctx4096")  # Capabilities.context_length became the run's window
    assert s.total("done") == 4 and s.total("errors") == 0
    # one Generator call per sample; twins with the same prompt are answered by the cache or the call in flight
    assert len(sources) == 4 and backend.calls == sources.count("backend") >= 1
    # a rerun with the records deleted is answered by the same path's cache (bulk replay), sending nothing
    for f in s.run_dir.rglob("*.jsonl"):
        f.unlink()
    again = run_round(
        tmp_path / "ws", sample_round, RunConfig(model="baseline/lead", limit=2, tasks=["title"]), backend=backend
    )
    assert backend.calls == sources.count("backend") and again.total("cached") == 4


def test_run_json_takes_base_url_from_the_identity():
    """run.json's base_url (which decides whether earlier records may refill the cache) is the identity's."""
    from academiceval.models.registry import load_backend

    b = load_backend("openai/m", base_url="http://127.0.0.1:8000")
    assert b.cache_identity().get("base_url") == b.base_url == "http://127.0.0.1:8000/v1"
    assert DeclaringBackend().cache_identity().get("base_url") is None
