"""The interface between the runner and a model backend (OpenAI-compatible server, local HF model, baseline).

The runner prepares the prompt (rendering, truncation, retrieval) and the judge (scores) writes its own; both hand
it to `models.generate.Generator`, which does cache → retry → `Backend.generate`. Baselines receive the sample
too, since they read its fields. What a backend supports beyond `generate` it declares in `capabilities`; callers
read that object, never probe the backend's attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from academiceval.store.models import Sample


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


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports beyond `generate` / `cache_identity` / `aclose`.

    - `validate`: it has `async validate()`, which checks the model before any work (the OpenAI backend lists the
      server's models); callers await it once before the first request.
    - `context_length`: the model's window in tokens when the backend knows it (a local HF checkpoint's
      `max_position_embeddings`); the runner truncates to it when no `--context-length` is given.
    - `reads_sample`: its answer depends on the sample's fields, not only on the prompt (the baselines); its
      answers are cached per sample and it is shown what retrieval kept under `--rag`.

    A provider declares what is known before any backend exists (`models.registry.provider`):
    - `tokenizer`: which tokenizer counts the model's tokens — "tiktoken" (tiktoken's encoding for the model
      name), "checkpoint" (a local checkpoint folder's own tokenizer), None (the packaged estimator);
    - `endpoint_pool`: it can spread one run over several endpoints (`--endpoint URL` repeated);
    - `base_url`: it talks to a server at a base URL (`--base-url`);
    - `local_checkpoint`: the model part may be a local folder (a run directory names it by the folder).
    """

    validate: bool = False
    context_length: int | None = None
    reads_sample: bool = False
    tokenizer: Literal["tiktoken", "checkpoint"] | None = None
    endpoint_pool: bool = False
    base_url: bool = False
    local_checkpoint: bool = False


class Backend(Protocol):
    """A model that turns a prompt into text. Implementations must be safe to call concurrently."""

    name: str  # "openai", "hf", "baseline"
    model: str  # model name within the backend
    capabilities: Capabilities

    def cache_identity(self) -> dict[str, Any]:
        """What distinguishes this backend's answers in the response cache (model, base URL, revision...).
        Must never include secrets."""
        ...

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion: ...

    async def aclose(self) -> None: ...
