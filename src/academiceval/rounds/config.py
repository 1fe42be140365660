"""`BuildConfig`: every option of a round build, built once (by the CLI or a caller), passed whole to
`build_round` and stored verbatim in the round's manifest (`RoundManifest.config`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePath
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from academiceval.errors import ConfigError
from academiceval.rounds.settings import parse_setting
from academiceval.rounds.split import DEFAULT_FRACTIONS, check_fractions
from academiceval.store.models import StrictConfig, Task
from academiceval.store.tasks import check_task, task_names


@dataclass(frozen=True)
class BuildPreset:
    """A named set of build options (`build --preset NAME`): filled in where the caller gave nothing."""

    name: str
    summary: str
    options: dict[str, Any]
    # what the runs use per task (TaskSpec.max_new_tokens), as the preset's source states it: checked, not set here
    output_tokens: dict[str, int] = field(default_factory=dict)


def _academiceval_options() -> dict[str, Any]:
    options: dict[str, Any] = {
        "tasks": ["title", "abstract", "introduction", "related_work"],  # the paper's four tasks
        # zero-shot (title_10K, abs_9K, ...), 2 random same-category demos (title_30K, ...), 2 co-author demos
        # (the "_G" settings), and the mixed construction (`_long_mix`: 1 random + 1 co-author, 2 demos)
        "settings": ["zero-shot", "random:2", "coauthor:2", "mixed:1+1"],
        "fractions": [0.72, 0.19, 0.09],  # the paper's Table 2 split
    }
    # Related Work lists of 100 cited papers (AcademicEval pads the true citations with same-topic papers to 100,
    # related_extractor.finish_dataset)
    options["citation_list_size"] = 100
    return options


BUILD_PRESETS: dict[str, Callable[[], BuildPreset]] = {
    "academiceval": lambda: BuildPreset(
        "academiceval",
        "AcademicEval's own settings (TMLR 2025, ulab-uiuc/AcademicEval): the four tasks; zero-shot, 2 random, 2 "
        "co-author and mixed demos; a 72/19/9 split; Related Work lists of 100",
        _academiceval_options(),
        # output budget per task (exp_comparison.py reserves 32 + this: title 32, abstract 32+512, intro 32+1536,
        # related 32+1024): the runs' max_new_tokens already are these (families/writing TaskSpecs)
        output_tokens={"title": 32, "abstract": 512, "introduction": 1536, "related_work": 1024},
    ),
}


def build_preset(name: str) -> BuildPreset:
    make = BUILD_PRESETS.get(name)
    if make is None:
        raise ConfigError(f"unknown build preset {name!r}", hint="one of: " + ", ".join(sorted(BUILD_PRESETS)))
    return make()


class BuildConfig(StrictConfig):
    # a named set of options (BUILD_PRESETS, e.g. "academiceval") filling every option not given
    preset: str | None = None
    settings: list[str] = Field(default_factory=lambda: ["zero-shot"])  # zero-shot, random:K, coauthor:K, ...
    tasks: list[Task] = Field(default_factory=lambda: list(task_names("writing")))  # the writing tasks to build
    fractions: list[float] = Field(default_factory=lambda: list(DEFAULT_FRACTIONS))  # train/val/test shares
    val_from: date | None = None
    test_from: date | None = None
    test_until: date | None = None
    since: date | None = None  # only papers submitted on/after this date
    context_tokens: int | None = None  # also a ctx:N setting
    ladder: list[int] = Field(default_factory=list)  # context ladder rungs in tokens (rounds.ladder), e.g. "8K,16K"
    # Related Work: pad each citation list with distractors to this many entries (AcademicEval: 100; 0 = no
    # padding), and/or with this many in any case (the larger padding wins)
    citation_list_size: int = Field(0, ge=0)
    distractors: int = Field(0, ge=0)
    min_citations: int = Field(1, ge=0)  # Related Work: least cited works the list must show
    category_level: Literal["primary", "archive"] = "primary"
    # co-author demos: how often one paper may serve in one config and split (0: no cap); candidates are ranked by
    # shared authors and closeness in time, ties by the sample's seed (rounds.settings.DemoSelector)
    coauthor_cap: int = Field(3, ge=0)
    seed: int = 0
    templates_dir: str | None = None
    fetch: bool = True  # fetch and ingest PDFs of papers with metadata but no parse (needs a source)
    max_fetch: int | None = None
    previous: str | None = None  # an earlier round (name or directory) for release notes
    # Related Work: least share of the cited works the list shows with an abstract (the others are listed by title,
    # authors and year); a target below it is excluded, with its share, in the manifest and the audit
    min_resolved_fraction: float = Field(0.0, ge=0.0, le=1.0)
    # quality-gate overrides, KEY=VALUE as on the command line (rounds.quality.QualityGate fields,
    # "label_words.TASK": "LOW:HIGH", "enabled": "false"); empty = the documented defaults
    gate: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        """A preset fills the options the caller did not give (those given win)."""
        if isinstance(data, dict) and data.get("preset") is not None:
            return {**build_preset(data["preset"]).options, **data}
        return data

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

        return parse_ladder(v)

    @field_validator("fractions")
    @classmethod
    def _fractions(cls, v: list[float]) -> list[float]:
        check_fractions(v)
        return v
