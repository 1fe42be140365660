"""Run specs and per-sample run records — the boundary model between `runs` and `scores`."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field


class RunSpec(BaseModel):
    """What produced a run directory (`run.json`)."""

    round: str
    round_manifest_sha256: str
    model: str  # the spec as given: "openai/gpt-4o-mini", "hf/path", "baseline/lead"
    backend: str  # "openai", "hf", "baseline"
    base_url: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # generation options
    context_length: int | None = None
    rag: dict[str, Any] | None = None  # retriever, top_k, chunk size/overlap, embedding model
    probe: str | None = None  # "title-only", "no-context"
    length_instruction: bool = False
    package_version: str
    created_at: str
    # added by the runs area (optional, backward compatible)
    on_overflow: str = "truncate"  # or "skip"
    tokenizer: str | None = None  # what counted tokens for truncation
    prompt_preparation: str = ""  # which code rendered/truncated prompts (module.function)
    max_connections: int | None = None
    timeout_s: float | None = None
    task_max_tokens: dict[str, int] = Field(default_factory=dict)  # output length used per task when not set
    updated_at: str = ""


class RunRecord(BaseModel):
    """One finished sample, appended to `runs/ROUND/MODEL/<task-setting>.jsonl` as soon as it is done."""

    sample_id: str
    task: str
    setting: str
    split: str
    arxiv_id: str
    published: date  # the target paper's v1 date, so windows can be computed without re-running
    prompt_sha256: str
    output_raw: str = ""
    output: str = ""  # post-processed (e.g. refined title)
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_cut: int = 0
    truncation: str = "none"  # policy applied: none, demos-dropped, body-tail-cut, ...
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    finished_at: str = ""
    # added by the runs area (optional, backward compatible)
    error_code: str | None = None  # machine-readable: rate_limited, timeout, context_length, empty_answer, ...
    retryable: bool = False  # the error may go away on a rerun: the next run requests this sample again
    skipped: bool = False  # --on-overflow skip: too long, not sent
    finish_reason: str | None = None
    attempts: int = 0  # HTTP attempts this run made for the sample (0 when cached or skipped)
    warnings: list[str] = Field(default_factory=list)  # e.g. invalid_utf8 in the answer
    prompt_info: dict[str, Any] = Field(default_factory=dict)  # demos/citations dropped, tokenizer, retrieved chunks
