"""Issue 28 item 9: every group of bars sits centred on its own setting's label, whichever models a panel holds,
and a bar has an error bar only where there is an interval — checked on the figure matplotlib draws from saved runs
of real text (see conftest), with a model that ran one task only (as the cloze baselines do beside the writing
tasks)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from academiceval.report import plots
from academiceval.report.results import build_results
from academiceval.store.artifacts import find_run_dirs, load_run


@pytest.fixture()
def results_with_a_title_only_model(saved_runs, tmp_path: Path):
    runs = tmp_path / "runs"
    shutil.copytree(saved_runs.runs_dir, runs)
    lead = next(runs.rglob("baseline__lead"))
    title_only = lead.with_name("baseline__title-only")
    shutil.copytree(lead, title_only)
    for f in title_only.glob("abstract-*.jsonl"):
        f.unlink()  # this "model" ran the title task only
    spec = (title_only / "run.json").read_text().replace('"baseline/lead"', '"baseline/title-only"')
    (title_only / "run.json").write_text(spec)
    loaded = [load_run(d) for d in find_run_dirs([runs])]
    return build_results(loaded)


def _figure(monkeypatch, draw):
    """The matplotlib figure `draw()` builds (captured where it would be saved)."""
    got = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, name: got.append(fig) or ("x.svg", "x.png"))
    plt = plots._plt()
    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    draw()
    (fig,) = got
    return fig


def _groups(ax) -> dict[float, list[float]]:
    """Tick position -> centres of the bars drawn around it."""
    ticks = list(ax.get_xticks())
    out: dict[float, list[float]] = {t: [] for t in ticks}
    for bar in ax.patches:
        x = bar.get_x() + bar.get_width() / 2
        out[min(ticks, key=lambda t: abs(t - x))].append(x)
    return out


def test_groups_are_centred_on_their_labels(results_with_a_title_only_model, tmp_path, monkeypatch):
    res = results_with_a_title_only_model
    assert "baseline/title-only" in res.labels()
    fig = _figure(monkeypatch, lambda: plots.plot_settings(res, "rouge-l", tmp_path))
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert set(panels) == {"Title", "Abstract"}
    slots = {"Title": 3, "Abstract": 2}  # the title-only model takes no slot in the abstract panel
    for title, ax in panels.items():
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == res.settings(title.lower())
        for tick, centres in _groups(ax).items():
            assert len(centres) == slots[title], (title, tick)
            assert sum(centres) / len(centres) == pytest.approx(tick), (title, tick, centres)  # centred
        # error bars: only for cells with an interval, none of zero length (the low-n rule)
        for coll in ax.collections:
            for seg in coll.get_segments():
                if len(seg) == 2 and seg[0][0] == seg[1][0]:
                    assert abs(seg[1][1] - seg[0][1]) > 0


def test_one_setting_panel_keeps_its_bars_narrow_and_centred(results_with_a_title_only_model, tmp_path, monkeypatch):
    res = results_with_a_title_only_model
    # any estimates per (label, task, setting) draw the same way; the rows' own means stand in for the effects
    effects = {(r.label, r.task, r.setting): r.metrics["rouge-l"].main for r in res.rows if r.setting == "random:1"}
    fig = _figure(monkeypatch, lambda: plots.plot_fewshot(res, effects, "rouge-l", tmp_path))
    for ax in (a for a in fig.axes if a.get_visible()):
        assert ax.get_xlim() == (-0.5, 0.5)
        (centres,) = _groups(ax).values()
        assert sum(centres) / len(centres) == pytest.approx(0.0)
        assert all(bar.get_width() <= 0.8 / len(centres) + 1e-9 for bar in ax.patches)
