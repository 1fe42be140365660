"""Leakage invariants: constructed violations must abort, on their own and inside a real build."""

from __future__ import annotations

from datetime import date

import pytest

from academiceval.rounds.config import BuildConfig
from academiceval.rounds.leakage import LeakageError, check_sample, check_windows
from academiceval.store.models import Demo, Sample, SplitWindows

W = SplitWindows(
    train_until=date(2024, 1, 31),
    val_from=date(2024, 2, 1),
    val_until=date(2024, 2, 28),
    test_from=date(2024, 3, 1),
    test_until=date(2024, 3, 31),
)


def _target(**kw) -> Sample:
    base = dict(
        sample_id="title/random:1/2403.00001",
        round="r",
        task="title",
        setting="random:1",
        split="test",
        arxiv_id="2403.00001",
        paper_id="pdf-sha",
        published=date(2024, 3, 5),
        fields={"body": "we propose a method", "abstract": "an abstract"},
        label="Deep Nets for Cats",
    )
    base.update(kw)
    return Sample(**base)  # type: ignore[arg-type]


def _demo(aid: str = "2401.00002", published: date = date(2024, 1, 10), label: str = "Other Title") -> Demo:
    return Demo(
        arxiv_id=aid,
        published=published,
        fields={"body": "old body", "abstract": "old abstract"},
        label=label,
        origin="random",
    )


def _check(s: Sample, info: dict[str, tuple[str, str, str]] | None = None) -> None:
    check_sample(
        s, W, target_title="deep nets for cats", demo_info=info or {"2401.00002": ("other", "other title", "train")}
    )


def test_clean_sample_passes() -> None:
    _check(_target(demos=[_demo()]))


def test_test_target_inside_val_window_aborts() -> None:
    with pytest.raises(LeakageError, match="before the test window"):
        _check(_target(published=date(2024, 2, 15)))


def test_overlapping_windows_abort() -> None:
    with pytest.raises(LeakageError, match="strictly"):
        check_windows(W.model_copy(update={"test_from": date(2024, 2, 20)}))
    with pytest.raises(LeakageError):
        check_windows(W.model_copy(update={"val_from": date(2024, 1, 15)}))


def test_demo_newer_than_target_aborts() -> None:
    with pytest.raises(LeakageError, match="newer"):
        _check(_target(demos=[_demo(published=date(2024, 3, 6))]), {"2401.00002": ("o", "other title", "val")})


@pytest.mark.parametrize(
    ("aid", "info"),
    [
        ("2403.00001", ("x", "unrelated", "train")),  # the target itself
        ("2403.00001v2", ("x", "unrelated", "train")),  # another version
        ("2401.09999", ("pdf-sha", "unrelated", "train")),  # the same parsed file under another id
        ("2401.09999", ("x", "deep nets for cats!", "train")),  # a re-submission with the same title
    ],
)
def test_demo_that_is_a_version_of_the_target_aborts(aid: str, info: tuple[str, str, str]) -> None:
    with pytest.raises(LeakageError, match="version"):
        _check(_target(demos=[_demo(aid=aid)]), {aid: info})


def test_demo_from_test_split_aborts() -> None:
    with pytest.raises(LeakageError, match="test split"):
        _check(_target(demos=[_demo()]), {"2401.00002": ("o", "other title", "test")})
    with pytest.raises(LeakageError, match="val split"):
        _check(
            _target(split="val", published=date(2024, 2, 10), demos=[_demo()]),
            {"2401.00002": ("o", "other title", "val")},
        )


@pytest.mark.parametrize("where", ["body", "demo", "citation"])
def test_label_in_input_aborts(where: str) -> None:
    from academiceval.store.models import CitedPaper

    s = _target()
    if where == "body":
        s = _target(fields={"body": "Our paper, Deep  Nets for\ncats, shows", "abstract": "a"})
    elif where == "demo":
        s = _target(demos=[_demo(label="deep nets for cats")])
    else:
        s = _target(citations=[CitedPaper(title="Deep Nets for Cats")])
    with pytest.raises(LeakageError, match="label text"):
        _check(s)


def test_build_aborts_when_selection_leaks(uws, monkeypatch) -> None:
    """Break demo eligibility on purpose: the real build over real papers must refuse to write the round."""
    from academiceval.rounds import settings as rs
    from academiceval.rounds.build import build_round

    monkeypatch.setattr(rs.DemoSelector, "eligible", lambda self, target, cand: self.task in cand.cost)
    with pytest.raises(LeakageError):
        build_round(uws, "leaky", BuildConfig(settings=["random:1"], category_level="archive", tasks=("title",)))
    assert not (uws.rounds_dir / "leaky").exists()
    assert not any(p.name.startswith(".leaky") for p in uws.rounds_dir.iterdir())


def test_build_aborts_on_overlapping_dates(uws) -> None:
    from academiceval.errors import ConfigError
    from academiceval.rounds.build import build_round

    with pytest.raises(ConfigError):
        build_round(
            uws, "bad", BuildConfig(val_from=date(2022, 12, 22), test_from=date(2022, 12, 21), tasks=("title",))
        )


@pytest.mark.parametrize("where", ["body", "demo"])
def test_near_copy_of_the_label_aborts(where: str) -> None:
    """Issue 16: a label that is not verbatim in the input but mostly is (LaTeX accents, a stray hyphen space,
    other casing) is caught by the overlap limits, in the fields and in demonstrations alike."""
    label = " ".join(f"w{i}" for i in range(60)) + " at 1å with LLaMA-65B."
    copy = "Intro. " + r" ".join(f"W{i}" for i in range(58)) + r" plus 1\r{a} and LLaMA- 65B"
    assert "w0 w1" not in copy  # not an exact copy: the exact guard does not see it
    if where == "body":
        s = _target(task="abstract", fields={"body": copy, "title": "t"}, label=label)
    else:
        s = _target(task="abstract", fields={"body": "b", "title": "t"}, label=label, demos=[_demo()])
        s.demos[0].fields = {"body": copy, "title": "old"}
    with pytest.raises(LeakageError, match="near-copy"):
        _check(s)
