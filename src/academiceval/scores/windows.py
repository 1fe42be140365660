"""Knowledge-cutoff windows: which papers a score counts, computed from saved records (never by re-running).

`--after DATE` keeps papers first submitted strictly after DATE; `--after-cutoff MODEL` looks the model up in
the packaged table `model_info.yaml` (plus a user YAML of the same shape via `--model-info` or
`$ACADEMICEVAL_MODEL_INFO`) and uses its knowledge cutoff, or its release date when no cutoff was published.

`Window` is the one window type: `score`, `report`, the results schema (`Results.window`) and the CLI all use
it, so `score --after-cutoff` and `report --after-cutoff` always agree on the date and on how it was chosen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from academiceval.errors import ConfigError
from academiceval.sources.dates import surely_after
from academiceval.store.paper_models import DatePrecision

ENV = "ACADEMICEVAL_MODEL_INFO"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    release: date | None
    knowledge_cutoff: date | None
    aliases: tuple[str, ...] = ()


class Window(BaseModel):
    """Which target papers count: those first submitted strictly after `after` (None: all papers)."""

    model_config = ConfigDict(frozen=True)

    after: date | None = None
    reason: str | None = None  # how the date was chosen, e.g. "after gpt-4o-mini's knowledge cutoff (2023-10-01)"

    def contains(self, published: date, precision: DatePrecision = "day") -> bool:
        return in_window(published, self.after, precision)

    def describe(self) -> str:
        """The reason, or a plain statement of the window, for table titles."""
        if self.reason:
            return self.reason
        return f"papers first submitted after {self.after}" if self.after else "all papers"


def parse_date(value: Any, where: str = "--after") -> date | None:
    """A date option (`YYYY-MM-DD`, a `date`, or empty for none); anything else is a ConfigError."""
    return _as_date(value, where)


def _as_date(value: Any, where: str) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{where}: {value!r} is not a date", hint="write dates as YYYY-MM-DD") from None


def _parse(text: str, source: str) -> dict[str, ModelInfo]:
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{source} is not valid YAML: {e}") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(f"{source} has no 'models:' mapping", hint="see the packaged scores/model_info.yaml")
    out: dict[str, ModelInfo] = {}
    for name, entry in models.items():
        entry = entry or {}
        where = f"{source}: {name}"
        out[str(name).lower()] = ModelInfo(
            name=str(name),
            release=_as_date(entry.get("release"), where),
            knowledge_cutoff=_as_date(entry.get("knowledge_cutoff"), where),
            aliases=tuple(str(a).lower() for a in entry.get("aliases") or ()),
        )
    return out


def load_model_info(path: str | Path | None = None) -> dict[str, ModelInfo]:
    """The packaged table, updated by `path` (or $ACADEMICEVAL_MODEL_INFO) where given; user entries win."""
    table = _parse(
        resources.files("academiceval.scores").joinpath("model_info.yaml").read_text("utf-8"), "model_info.yaml"
    )
    extra = path or os.environ.get(ENV)
    if extra:
        p = Path(extra)
        if not p.is_file():
            raise ConfigError(f"model-info file {p} does not exist", hint=f"pass an existing YAML file or unset {ENV}")
        table.update(_parse(p.read_text(encoding="utf-8"), str(p)))
    return table


def find_model(spec: str, table: dict[str, ModelInfo]) -> ModelInfo | None:
    """`openai/gpt-4o-mini`, `hf/meta-llama/Llama-3.1-8B-Instruct`, `gpt-4o` → the table entry, if any."""
    candidates = [spec.lower(), spec.lower().split("/", 1)[-1], spec.lower().rsplit("/", 1)[-1]]
    for c in candidates:
        if c in table:
            return table[c]
    for info in table.values():
        if any(c in info.aliases for c in candidates):
            return info
    return None


def resolve_window(
    after: date | str | None = None, after_cutoff: str | None = None, *, model_info: str | Path | None = None
) -> Window:
    """One window from `--after` or `--after-cutoff` (not both); neither gives `Window()` (all papers)."""
    if after is not None and after_cutoff:
        raise ConfigError("give --after or --after-cutoff, not both")
    if after is not None:
        d = _as_date(after, "--after")
        return Window(after=d, reason=f"papers first submitted after {d}" if d else None)
    if after_cutoff:
        table = load_model_info(model_info)
        info = find_model(after_cutoff, table)
        if info is None:
            raise ConfigError(
                f"model {after_cutoff!r} is not in the model-info table",
                hint=f"use --after DATE, or add it to a YAML file passed with --model-info (or ${ENV})",
            )
        if info.knowledge_cutoff:
            return Window(
                after=info.knowledge_cutoff, reason=f"after {info.name}'s knowledge cutoff ({info.knowledge_cutoff})"
            )
        if info.release:
            why = f"after {info.name}'s release ({info.release}; no published cutoff)"
            return Window(after=info.release, reason=why)
        raise ConfigError(f"model {info.name} has neither a knowledge cutoff nor a release date in the table")
    return Window()


def in_window(published: date, after: date | None, precision: DatePrecision = "day") -> bool:
    """Strictly after: a paper submitted on the cutoff day may have been seen."""
    # a date known only to the year/month is in the window only if all of it is after the cutoff (a 2024 paper
    # is not after 2024-06-01)
    return after is None or surely_after(published, precision, after)
