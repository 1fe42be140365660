"""`ScoreConfig`: every option of a scoring pass, built once (by the CLI or a caller), passed whole to
`score_runs` and stored verbatim in each score record it writes (`ScoreRecord.config`).

Metric options are namespaced by metric: `options = {"bertscore": {"layer": 9}, "judge": {"against": RUN}}`
(`--metric-arg bertscore.layer=9` on the CLI). Each metric declares its options as a pydantic model in the
registry (`Metric.options`), so a misspelled or mistyped option is a ConfigError before any run is read, and a
new metric brings its options without a new field here. The flat options of earlier versions (`layer=`,
`bertscore_model=`, `mcq_parser=`, `leval_protocol=`, `against=`, …) are still accepted and mapped onto the
namespace (`LEGACY_OPTIONS`); records written before keep them in their stored config, which
`stored_option` reads too.
"""

from __future__ import annotations

from datetime import date
from pathlib import PurePath
from typing import Any

from pydantic import Field, field_validator, model_validator

from academiceval.errors import ConfigError
from academiceval.store.models import StrictConfig

MIN_JUDGED = 10  # judge summaries give no win rate from fewer readable judgements (scores.winrate)

# flat option of earlier versions -> (metric, option)
LEGACY_OPTIONS: dict[str, tuple[str, str]] = {
    "bertscore_model": ("bertscore", "model"),
    "layer": ("bertscore", "layer"),
    "idf": ("bertscore", "idf"),
    "baseline": ("bertscore", "baseline"),
    "long_inputs": ("bertscore", "long_inputs"),
    "mcq_parser": ("accuracy", "parser"),
    "leval_protocol": ("leval", "protocol"),
    "against": ("judge", "against"),
}


def parse_metric_args(args: list[str] | None) -> dict[str, dict[str, Any]]:
    """`["bertscore.layer=9", "judge.against=runs/r/m"]` → `{"bertscore": {"layer": "9"}, "judge": {...}}`; the
    values stay text (the metric's options model converts them: "9" → 9, "true" → True)."""
    out: dict[str, dict[str, Any]] = {}
    for arg in args or []:
        key, sep, value = arg.partition("=")
        metric, dot, option = key.strip().partition(".")
        if not sep or not dot or not metric or not option:
            raise ConfigError(
                f"--metric-arg {arg!r} is not METRIC.OPTION=VALUE", hint="e.g. --metric-arg bertscore.layer=9"
            )
        out.setdefault(metric, {})[option.strip()] = value.strip()
    return out


def _text(v: object) -> object:
    return str(v) if isinstance(v, PurePath) else v


class ScoreConfig(StrictConfig):
    metrics: list[str] | None = None  # None: rouge-l and bertscore, plus judge when a judge is given
    judge: str | None = None  # judge model spec, loaded with `judge_base_url` when no backend is passed in
    judge_base_url: str | None = None
    judge_api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the judge server's key
    after: date | None = None  # the summary's window: papers first submitted after this date
    # metric name -> its options, e.g. {"bertscore": {"layer": 9}} (`--metric-arg bertscore.layer=9`)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Flat options of earlier versions → their metric's namespace (an explicit namespaced value wins)."""
        if not isinstance(data, dict) or not any(k in LEGACY_OPTIONS for k in data):
            return data
        data = dict(data)
        options = {m: dict(o) for m, o in (data.get("options") or {}).items()}
        for key, (metric, option) in LEGACY_OPTIONS.items():
            if key in data:
                value = data.pop(key)
                if value is not None:
                    options.setdefault(metric, {}).setdefault(option, _text(value))
        data["options"] = options
        return data

    @field_validator("options", mode="before")
    @classmethod
    def _paths(cls, v: object) -> object:
        if isinstance(v, dict):
            return {m: {k: _text(x) for k, x in (o or {}).items()} for m, o in v.items()}
        return v

    def option(self, metric: str, name: str, default: Any = None) -> Any:
        """One option as given (not validated: the registry's `metric_options` gives the typed model)."""
        return self.options.get(metric, {}).get(name, default)


def stored_option(stored: dict[str, Any] | None, metric: str, name: str, default: Any = None) -> Any:
    """An option of a ScoreConfig as stored in a score record, in the namespaced form or a legacy flat key."""
    stored = stored or {}
    got = (stored.get("options") or {}).get(metric, {}).get(name)
    if got is not None:
        return got
    for key, where in LEGACY_OPTIONS.items():
        if where == (metric, name) and stored.get(key) is not None:
            return stored[key]
    return default
