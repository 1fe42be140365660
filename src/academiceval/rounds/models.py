"""A benchmark round and its samples — the boundary model between `rounds` and `runs`.

A sample stores its input *fields* (not only a rendered prompt) so that any backend can re-render it after
truncation or retrieval; `prompt_sha256` is the hash of the default rendering.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

# "citation_cloze" names the multiple-choice family (rounds/cloze); its items are `ClozeItem`s, not `Sample`s,
# and it appears here only so a round manifest can describe its configs. TASKS lists the writing tasks.
Task = Literal["title", "abstract", "introduction", "related_work", "citation_cloze"]
TASKS: tuple[Task, ...] = ("title", "abstract", "introduction", "related_work")
Split = Literal["train", "val", "test"]


class Demo(BaseModel):
    """One demonstration: an input/label pair of the same task from an older paper."""

    arxiv_id: str
    published: date
    fields: dict[str, str]  # same field names as the target's `fields`
    label: str
    origin: Literal["random", "coauthor"]


class CitedPaper(BaseModel):
    """One entry of the Related-Work citation corpus."""

    arxiv_id: str | None = None
    title: str
    abstract: str = ""
    distractor: bool = False  # padding paper not cited by the target (never shown to the model as such)


class Sample(BaseModel):
    sample_id: str  # stable: "<task>/<setting>/<arxiv_id>"
    round: str
    task: Task
    setting: str  # "zero-shot", "random:2", "coauthor:2", "mixed:1+1", "ctx:32000"
    setting_name: str = ""  # paper style, from measured mean input length: "title-10K", "abs-29K-G", ...
    split: Split
    arxiv_id: str
    paper_id: str
    published: date  # v1 date of the target paper
    primary_category: str | None = None
    fields: dict[str, str]  # task inputs: title / abstract / body, depending on the task
    citations: list[CitedPaper] = Field(default_factory=list)
    demos: list[Demo] = Field(default_factory=list)
    label: str
    prompt_sha256: str = ""
    seed: int = 0
    input_tokens: int | None = None  # BERT WordPiece tokens of the default rendered prompt (no special tokens)
    label_tokens: int | None = None  # BERT WordPiece tokens of the label


class SplitWindows(BaseModel):
    train_until: date | None = None  # inclusive end of the train window
    val_from: date | None = None
    val_until: date | None = None
    test_from: date | None = None
    test_until: date | None = None


class ConfigInfo(BaseModel):
    """One exported task-setting (a `datasets` config): what it holds and where."""

    task: Task
    setting: str  # the setting spec, e.g. "random:2"
    setting_name: str  # the config name, e.g. "title-30K"
    counts: dict[str, int] = Field(default_factory=dict)  # split -> samples
    mean_input_tokens: float = 0.0
    mean_label_tokens: float = 0.0
    files: list[str] = Field(default_factory=list)  # relative paths (parquet and JSONL, one per split)


class RoundManifest(BaseModel):
    round: str
    created_at: str  # ISO timestamp of the build
    package_version: str
    seed: int
    windows: SplitWindows
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task-setting: split -> count
    skipped: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task: reason -> count
    files: dict[str, str] = Field(default_factory=dict)  # relative path -> sha256
    build_options: dict[str, object] = Field(default_factory=dict)
    adds: list[str] = Field(default_factory=list)  # sample ids new in this round (vs previous round)
    retires: list[str] = Field(default_factory=list)  # sample ids of the previous round not carried over
    previous_round: str | None = None
    configs: dict[str, ConfigInfo] = Field(default_factory=dict)  # config name -> what it holds
    notes: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task: non-fatal observations -> count
