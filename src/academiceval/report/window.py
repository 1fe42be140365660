"""Resolving the report window: an explicit `--after DATE` or a model's knowledge cutoff (`--after-cutoff`).

The model-info table (release and knowledge-cutoff dates, user-extensible YAML) belongs to the scores stage;
this module only asks it for a date, so `score --after-cutoff` and `report --after-cutoff` always agree.
"""

from __future__ import annotations

from datetime import date

from academiceval.errors import ConfigError


def parse_date(text: str | date | None) -> date | None:
    if text is None or isinstance(text, date):
        return text
    try:
        return date.fromisoformat(text.strip())
    except ValueError as e:
        raise ConfigError(f"not a date: {text!r}", hint="use YYYY-MM-DD, e.g. --after 2024-06-01") from e


def cutoff_of(model: str, model_info: str | None = None) -> date:
    """The knowledge cutoff of `model` from the scores stage's model-info table (plus `model_info` YAML)."""
    try:
        from academiceval.scores import modelinfo
    except ImportError as e:
        raise ConfigError(
            "the model-info table (academiceval.scores.modelinfo) is not available",
            hint="use --after YYYY-MM-DD instead",
        ) from e
    return modelinfo.knowledge_cutoff(model, extra=model_info)


def resolve_window(
    after: str | date | None = None, after_cutoff: str | None = None, *, model_info: str | None = None
) -> tuple[date | None, str | None]:
    """(date, human-readable reason) for the window; at most one of the two options may be given."""
    if after is not None and after_cutoff:
        raise ConfigError("give either --after or --after-cutoff, not both")
    if after_cutoff:
        d = cutoff_of(after_cutoff, model_info)
        return d, f"knowledge cutoff of {after_cutoff}: {d.isoformat()}"
    d = parse_date(after)
    return d, (f"--after {d.isoformat()}" if d else None)
