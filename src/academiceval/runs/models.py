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
