"""`RunConfig`: every option of a model run, built once (by the CLI or a caller), passed whole to `run_round` and
stored verbatim in the run's `run.json` (`RunSpec.config`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from academiceval.errors import ConfigError
from academiceval.models.base import GenerationOptions
from academiceval.models.endpoints import parse_endpoints
from academiceval.models.prepare import Probe
from academiceval.models.rag import RagConfig
from academiceval.store.artifacts import check_name
from academiceval.store.models import StrictConfig


class RunConfig(StrictConfig):
    model: str  # openai/<model>, hf/<repo-or-path>, baseline/<name>
    tasks: list[str] | None = None  # None: every task of the round
    settings: list[str] | None = None  # None: every setting
    splits: list[str] | None = Field(default_factory=lambda: ["test"])
    options: GenerationOptions = Field(default_factory=GenerationOptions)  # -T key=value
    base_url: str | None = None
    # several servers of the same model (`--base-url` repeated / `--endpoints FILE`): least-loaded dispatch, a
    # failing server is taken out for a cool-down (models.endpoints); one URL here is the same as `base_url`
    endpoints: list[str] | None = None
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; the key itself is never stored
    max_connections: int = 16
    timeout: float = 600.0
    context_length: int | None = None  # None: no limit known (a local model's own window is used when it has one)
    tokenizer: str | None = None
    on_overflow: Literal["truncate", "skip"] = "truncate"
    rag: RagConfig | None = None
    probe: Probe | None = None
    # None: each task's protocol default (off for the writing tasks, on for L-Eval's open-ended items); True/False
    # force it on/off for every task (runs.prepare.length_instruction_for)
    length_instruction: bool | None = None
    count_tokens_only: bool = False
    run_name: str | None = None  # directory name under runs/ROUND/ (default: from the model and variant)
    use_cache: bool = True
    limit: int | None = None  # at most N samples per task and setting

    @field_validator("rag", mode="before")
    @classmethod
    def _rag(cls, v: Any) -> Any:
        """`--rag bm25|tfidf|dense[:MODEL]` (or the dict stored in run.json) through RagConfig's one parser."""
        return RagConfig.coerce(v)

    @field_validator("endpoints")
    @classmethod
    def _endpoints(cls, v: list[str] | None) -> list[str] | None:
        """Normalised; a bad URL or a duplicate is refused here, before any work (one-line ConfigError)."""
        return None if not v else parse_endpoints(v)

    @model_validator(mode="after")
    def _one_endpoint(self) -> RunConfig:
        if self.endpoints and self.base_url:
            raise ConfigError("give the servers either as base_url or as endpoints, not both")
        if self.endpoints and len(self.endpoints) == 1:  # one server: the plain backend (and its cache keys)
            self.base_url, self.endpoints = self.endpoints[0], None
        return self

    @field_validator("max_connections")
    @classmethod
    def _connections(cls, v: int) -> int:
        if v < 1:
            raise ConfigError("--max-connections must be at least 1")
        return v

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, v: float) -> float:
        if not (math.isfinite(v) and v > 0):  # inf used to fail every sample with OverflowError (issue 10, #10)
            raise ConfigError(f"--timeout {v}: must be a finite number of seconds above 0 (e.g. 600)")
        return v

    @field_validator("limit", "context_length")
    @classmethod
    def _positive(cls, v: int | None, info: Any) -> int | None:
        if v is not None and v < 1:
            raise ConfigError(f"--{info.field_name.replace('_', '-')} {v}: must be a whole number of at least 1")
        return v

    @field_validator("run_name")
    @classmethod
    def _run_name(cls, v: str | None) -> str | None:
        return None if v is None else check_name(v, "--run-name")

    def rag_settings(self) -> dict[str, Any] | None:
        """The retrieval settings as recorded in run.json (only the options given)."""
        return None if self.rag is None else self.rag.model_dump(exclude_none=True)
