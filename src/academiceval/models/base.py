"""The interface between the runner and a model backend (OpenAI-compatible server, local HF model, baseline).

The runner prepares the prompt (rendering, truncation, retrieval) and hands it to `Backend.generate`; the
judge (scores) uses the same backends. Baselines receive the sample too, since they read its fields.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from academiceval.rounds.models import Sample


class GenerationOptions(BaseModel):
    """Generation options (`-T key=value` on the command line). Unknown keys pass through to the backend."""

    model_config = ConfigDict(extra="allow")

    temperature: float = 0.0
    max_tokens: int | None = None  # None: the task's default output length
    top_p: float | None = None
    seed: int | None = None


class Completion(BaseModel):
    text: str
    input_tokens: int | None = None  # as reported by the backend, when it reports it
    output_tokens: int | None = None
    finish_reason: str | None = None
    raw: dict[str, Any] = Field(default_factory=dict)  # backend-specific extras worth keeping (no secrets)


class Backend(Protocol):
    """A model that turns a prompt into text. Implementations must be safe to call concurrently."""

    name: str  # "openai", "hf", "baseline"
    model: str  # model name within the backend

    def cache_identity(self) -> dict[str, Any]:
        """What distinguishes this backend's answers in the response cache (model, base URL, revision...).
        Must never include secrets."""
        ...

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion: ...

    async def aclose(self) -> None: ...
