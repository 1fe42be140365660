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
from academiceval.runs.presets import get_preset
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
    # independent repeats of every sample (inspect_ai's epochs; ElaipBench averages 3 runs). Epoch 1 is the plain
    # run (its records, cache keys and options are those of a run without epochs); epoch e > 1 sends the seed
    # `epoch_options` gives it, so its answers are new requests with their own cache keys. Not part of the run's
    # identity: `--epochs 3` on a finished one-epoch run adds epochs 2 and 3 beside it.
    epochs: int = 1
    preset: str | None = None  # a named protocol (runs.presets) filling the options not given; part of the run name
    prompt_suffix: str | None = None  # appended to every prompt (a preset's chain-of-thought instruction)

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

    @model_validator(mode="after")
    def _apply_preset(self) -> RunConfig:
        """A preset fills what was not given: epochs, generation options, the prompt suffix."""
        if self.preset is None:
            return self
        preset = get_preset(self.preset)
        given = self.model_fields_set
        if "epochs" not in given:
            self.epochs = preset.epochs
        if "prompt_suffix" not in given and preset.prompt_suffix:
            self.prompt_suffix = preset.prompt_suffix
        asked = self.options.model_fields_set | set(self.options.model_extra or {})
        fill = {k: v for k, v in preset.options.items() if k not in asked}
        if fill:
            self.options = GenerationOptions.model_validate({**self.options.model_dump(exclude_unset=True), **fill})
        return self

    @field_validator("epochs")
    @classmethod
    def _epochs(cls, v: int) -> int:
        if v < 1:
            raise ConfigError(f"--epochs {v}: must be a whole number of at least 1")
        return v

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

    def epoch_options(self, options: GenerationOptions, epoch: int) -> GenerationOptions:
        """The options epoch `epoch` sends: epoch 1 the options as given (so a one-epoch run keeps today's requests
        and cache keys); epoch e > 1 the seed (given seed or 0) + e - 1, so each repeat is a distinct, reproducible
        request that the response cache keys apart and a server samples anew (vLLM and OpenAI honour `seed`)."""
        return epoch_options(options, epoch)

    def rag_settings(self) -> dict[str, Any] | None:
        """The retrieval settings as recorded in run.json (only the options given)."""
        return None if self.rag is None else self.rag.model_dump(exclude_none=True)


def epoch_options(options: GenerationOptions, epoch: int) -> GenerationOptions:
    """See `RunConfig.epoch_options`."""
    if epoch == 1:
        return options
    return options.model_copy(update={"seed": (options.seed or 0) + epoch - 1})
