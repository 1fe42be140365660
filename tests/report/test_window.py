"""The report window options: explicit dates, model cutoffs (the scores stage's table), and their misuse."""

from __future__ import annotations

from datetime import date

import pytest

from academiceval.errors import ConfigError
from academiceval.report.window import parse_date, resolve_window


def test_explicit_date_window():
    d, reason = resolve_window("2024-06-01")
    assert d == date(2024, 6, 1) and "2024-06-01" in reason
    assert resolve_window(None) == (None, None)
    assert parse_date(date(2020, 1, 2)) == date(2020, 1, 2)


def test_cutoff_window_from_the_model_info_table(tmp_path):
    d, reason = resolve_window(None, "openai/gpt-4o-mini")
    assert d == date(2023, 10, 1) and "gpt-4o-mini" in reason
    extra = tmp_path / "mine.yaml"
    extra.write_text("models:\n  my-model:\n    release: 2025-01-02\n    knowledge_cutoff: 2024-07-01\n")
    assert resolve_window(None, "hf/org/my-model", model_info=extra)[0] == date(2024, 7, 1)


def test_bad_or_conflicting_options_are_config_errors():
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        resolve_window("June 2024")
    with pytest.raises(ConfigError, match="not both"):
        resolve_window("2024-06-01", "gpt-4o")
    with pytest.raises(ConfigError, match="not in the model-info table"):
        resolve_window(None, "openai/no-such-model-xyz")
