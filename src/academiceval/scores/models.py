"""Per-sample scores — the boundary model between `scores` and `report`."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


class ScoreRecord(BaseModel):
    """One metric on one sample, appended to `<run dir>/scores.jsonl`.

    `metric` names carry their configuration (e.g. "bertscore-all-MiniLM-L6-v2-L6"), and `config_hash`
    identifies the exact configuration, so results from different settings are never mixed.
    """

    sample_id: str
    task: str
    setting: str
    split: str
    published: date
    metric: str
    config_hash: str
    values: dict[str, float] = Field(default_factory=dict)  # e.g. {"p": .., "r": .., "f": ..}
    details: dict[str, object] = Field(default_factory=dict)  # e.g. tokens cut, judge verdicts
    error: str | None = None
