"""Leakage invariants, checked on every sample while a round is built. A failure aborts the build.

They hold by construction (selection never offers a leaking demo, tasks skip papers whose label appears in their
input); these checks are the independent guard that makes a bug loud instead of silently inflating scores.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from academiceval.errors import AcademicEvalError
from academiceval.rounds.models import Sample, SplitWindows
from academiceval.rounds.tasks import contains
from academiceval.sources.dates import not_after


class LeakageError(AcademicEvalError):
    """A round would leak its labels or its future: nothing is written."""

    code = "leakage"


VERSION_TITLE_SIMILARITY = 0.95


def _base(arxiv_id: str) -> str:
    return re.sub(r"v\d+$", "", arxiv_id.strip())


def is_version(a_id: str, a_pid: str, a_title: str, b_id: str, b_pid: str, b_title: str) -> bool:
    """Same paper (any version): same versionless id, same parsed file, or a near-identical title."""
    if _base(a_id) == _base(b_id):
        return True
    if a_pid == b_pid:
        return True
    return bool(a_title) and fuzz.ratio(a_title, b_title) / 100.0 >= VERSION_TITLE_SIMILARITY


def check_windows(w: SplitWindows) -> None:
    if w.train_until and w.val_from and not w.train_until < w.val_from:
        raise LeakageError(f"train window ends {w.train_until}, not before the val window starts {w.val_from}")
    ends = [d for d in (w.val_until, w.train_until) if d is not None]
    if w.test_from and ends and not max(ends) < w.test_from:
        raise LeakageError(
            f"test window starts {w.test_from} but earlier windows run to {max(ends)}: test targets must be strictly"
            " newer than the val window",
            hint="choose --test-from after the last validation date",
        )


def check_sample(
    s: Sample,
    w: SplitWindows,
    *,
    target_title: str,
    demo_info: dict[str, tuple[str, str, str]],  # demo arxiv id -> (paper_id, normalised title, split)
) -> None:
    """Raise LeakageError naming the sample and the rule it breaks."""
    where = f"sample {s.sample_id}"
    if s.split == "test" and (w.test_from is None or s.published < w.test_from):
        raise LeakageError(f"{where}: test target dated {s.published} lies before the test window ({w.test_from})")
    if s.split == "test" and w.val_until is not None and not s.published > w.val_until:
        raise LeakageError(f"{where}: test target dated {s.published} is not after the val window ({w.val_until})")
    for d in s.demos:
        pid, title, split = demo_info.get(d.arxiv_id, ("", "", "?"))
        if is_version(s.arxiv_id, s.paper_id, target_title, d.arxiv_id, pid, title):
            raise LeakageError(f"{where}: demo {d.arxiv_id} is the target itself or a version of it")
        if not not_after(d.published, d.date_precision, s.published, s.date_precision):
            raise LeakageError(
                f"{where}: demo {d.arxiv_id} ({d.published}, {d.date_precision}) is newer than the target, or not "
                f"known to be older ({s.published}, {s.date_precision})"
            )
        allowed = ("train", "val") if s.split == "test" else ("train",)
        if split not in allowed:
            raise LeakageError(f"{where}: demo {d.arxiv_id} comes from the {split} split (allowed: {allowed})")
    texts = [*s.fields.values()]
    for d in s.demos:
        texts += [*d.fields.values(), d.label]
    for c in s.citations:
        texts += [c.title, c.abstract]
    for t in texts:
        if contains(t, s.label):
            raise LeakageError(f"{where}: the label text appears in the input")
