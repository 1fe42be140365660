"""`ScoreConfig`: every option of a scoring pass, built once (by the CLI or a caller), passed whole to
`score_runs` and stored verbatim in each score record it writes (`ScoreRecord.config`)."""

from __future__ import annotations

from datetime import date
from pathlib import PurePath
from typing import Literal

from pydantic import field_validator

from academiceval.store.models import StrictConfig


class ScoreConfig(StrictConfig):
    metrics: list[str] | None = None  # None: rouge-l and bertscore, plus judge when a judge is given
    judge: str | None = None  # judge model spec, loaded with `judge_base_url` when no backend is passed in
    judge_base_url: str | None = None
    against: str = "reference"  # what the judge compares with: the round's reference or another run directory
    bertscore_model: str = "all-MiniLM-L6-v2"
    layer: int | None = None  # BERTScore layer (None: the model's usual one)
    idf: bool = False
    baseline: str | None = None  # BERTScore baseline file for rescaling
    long_inputs: Literal["truncate", "window"] = "window"  # issue 16: nothing cut by default; truncate is opt-in
    after: date | None = None  # the summary's window: papers first submitted after this date
    mcq_parser: Literal["strict", "lenient"] = "strict"  # how the accuracy metric reads <answer> (scores.mcq)
    leval_protocol: Literal["leval-compatible", "strict"] = "leval-compatible"  # the leval metric (scores.leval)

    @field_validator("against", "baseline", mode="before")
    @classmethod
    def _path_text(cls, v: object) -> object:
        return str(v) if isinstance(v, PurePath) else v
