"""Issue 28 item 8: a val/test window cut at a date known only to the year is that year, not "a single day"."""

from __future__ import annotations

from datetime import date

from academiceval.rounds.split import split_report
from academiceval.store.models import SplitWindows

Y22, Y23, Y24 = date(2022, 1, 1), date(2023, 1, 1), date(2024, 1, 1)


def test_a_window_of_year_dated_papers_is_not_a_single_day():
    dates = [Y22] * 6 + [Y23] * 3 + [Y24] * 3  # a publication list dated to the year (lab list style)
    w = SplitWindows(train_until=Y22, val_from=Y23, val_until=Y23, test_from=Y24, test_until=Y24)
    year = split_report(dates, w, None, ["year"] * len(dates))
    assert not [x for x in year["warnings"] if "single day" in x]
    day = split_report(dates, w, None, ["day"] * len(dates))  # the same dates known to the day: one day each
    assert [x for x in day["warnings"] if "single day" in x] == [
        "the val window is a single day (2023-01-01)",
        "the test window is a single day (2024-01-01)",
    ]
