"""The window options (one `Window` type for score, report and results.json): explicit dates, model cutoffs (the
scores stage's table), their misuse, and the window as stored in results.json."""

from __future__ import annotations

from datetime import date

import pytest

from academiceval.errors import ConfigError
from academiceval.report.results import Results
from academiceval.scores.windows import Window, parse_date, resolve_window


def test_explicit_date_window():
    w = resolve_window("2024-06-01")
    assert w.after == date(2024, 6, 1) and "2024-06-01" in w.reason
    assert resolve_window(None) == Window() and (Window().after, Window().reason) == (None, None)
    assert parse_date(date(2020, 1, 2)) == date(2020, 1, 2)
    assert parse_date("2020-01-02") == date(2020, 1, 2) and parse_date("") is None and parse_date(None) is None


def test_cutoff_window_from_the_model_info_table(tmp_path):
    w = resolve_window(None, "openai/gpt-4o-mini")
    assert w.after == date(2023, 10, 1) and "gpt-4o-mini" in w.reason
    extra = tmp_path / "mine.yaml"
    extra.write_text("models:\n  my-model:\n    release: 2025-01-02\n    knowledge_cutoff: 2024-07-01\n")
    assert resolve_window(None, "hf/org/my-model", model_info=extra).after == date(2024, 7, 1)


def test_bad_or_conflicting_options_are_config_errors():
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        resolve_window("June 2024")
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        parse_date("2024-13-01")
    with pytest.raises(ConfigError, match="not both"):
        resolve_window("2024-06-01", "gpt-4o")
    with pytest.raises(ConfigError, match="not in the model-info table"):
        resolve_window(None, "openai/no-such-model-xyz")


def test_window_rule_text_and_json_round_trip():
    w = resolve_window("2024-06-01")
    assert not w.contains(date(2024, 6, 1)) and w.contains(date(2024, 6, 2))  # strictly after the cutoff day
    assert Window().contains(date(1990, 1, 1))
    assert Window().describe() == "all papers" and w.describe() == w.reason
    assert Window(after=date(2024, 6, 1)).describe() == "papers first submitted after 2024-06-01"
    with pytest.raises(ValueError):  # frozen: a window is a value
        w.after = None  # type: ignore[misc]
    # the same type is the results schema's window: stored and read back unchanged
    res = Results(window=w)
    back = Results.model_validate_json(res.model_dump_json())
    assert back.window == w and isinstance(back.window, Window)
    assert res.model_dump(mode="json")["window"] == {"after": "2024-06-01", "reason": w.reason}
