"""`BuildConfig`: every option of a round build, built once (by the CLI or a caller), passed whole to
`build_round` and stored verbatim in the round's manifest (`RoundManifest.config`)."""

from __future__ import annotations

from datetime import date
from pathlib import PurePath
from typing import Literal

from pydantic import Field, field_validator

from academiceval.rounds.models import Task
from academiceval.rounds.settings import parse_setting
from academiceval.rounds.split import DEFAULT_FRACTIONS, check_fractions
from academiceval.store.models import StrictConfig
from academiceval.store.tasks import check_task, task_names


class BuildConfig(StrictConfig):
    settings: list[str] = Field(default_factory=lambda: ["zero-shot"])  # zero-shot, random:K, coauthor:K, ...
    tasks: list[Task] = Field(default_factory=lambda: list(task_names("writing")))  # the writing tasks to build
    fractions: list[float] = Field(default_factory=lambda: list(DEFAULT_FRACTIONS))  # train/val/test shares
    val_from: date | None = None
    test_from: date | None = None
    test_until: date | None = None
    since: date | None = None  # only papers submitted on/after this date
    context_tokens: int | None = None  # also a ctx:N setting
    ladder: list[int] = Field(default_factory=list)  # context ladder rungs in tokens (rounds.ladder), e.g. "8K,16K"
    distractors: int = Field(0, ge=0)
    min_citations: int = Field(1, ge=0)
    category_level: Literal["primary", "archive"] = "primary"
    seed: int = 0
    templates_dir: str | None = None
    fetch: bool = True  # fetch and ingest PDFs of papers with metadata but no parse (needs a source)
    max_fetch: int | None = None
    previous: str | None = None  # an earlier round (name or directory) for release notes
    # Related Work: least share of the works cited in the section that must resolve to a title and abstract
    min_resolved_fraction: float = Field(0.5, ge=0.0, le=1.0)
    # quality-gate overrides, KEY=VALUE as on the command line (rounds.quality.QualityGate fields,
    # "label_words.TASK": "LOW:HIGH", "enabled": "false"); empty = the documented defaults
    gate: dict[str, str] = Field(default_factory=dict)

    @field_validator("templates_dir", "previous", mode="before")
    @classmethod
    def _path_text(cls, v: object) -> object:
        return str(v) if isinstance(v, PurePath) else v

    @field_validator("settings")
    @classmethod
    def _settings(cls, v: list[str]) -> list[str]:
        for s in v:
            parse_setting(s)  # a ConfigError naming the bad setting
        return v

    @field_validator("tasks")
    @classmethod
    def _tasks(cls, v: list[str]) -> list[str]:
        for t in v:
            check_task(t, kind="writing", source="--task")  # a build writes the writing tasks; others import
        return v

    @field_validator("gate")
    @classmethod
    def _gate(cls, v: dict[str, str]) -> dict[str, str]:
        from academiceval.rounds.quality import default_gate

        default_gate().with_overrides(v)  # a ConfigError naming the bad setting
        return v

    @field_validator("ladder", mode="before")
    @classmethod
    def _ladder(cls, v: object) -> object:
        from academiceval.rounds.ladder import parse_ladder

        return parse_ladder(v)  # type: ignore[arg-type]

    @field_validator("fractions")
    @classmethod
    def _fractions(cls, v: list[float]) -> list[float]:
        check_fractions(v)
        return v
