"""Leaderboard Markdown, the HTML pages and the CLI, on saved runs of real text (see conftest)."""

from __future__ import annotations

import re
from datetime import date
from html.parser import HTMLParser

import markupsafe
import numpy as np
import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.report import leaderboard as lb
from academiceval.report.render import make_report
from academiceval.report.results import Results, build_results

from .conftest import build_saved_runs

EVIL = '<script>alert("pwned")</script> <img src=x onerror=alert(1)> & "quotes" | pipe'


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _parse(text: str) -> _Collect:
    p = _Collect()
    p.feed(text)
    return p


@pytest.fixture(scope="module")
def report(saved_runs, tmp_path_factory):
    return make_report(saved_runs.runs_dir, tmp_path_factory.mktemp("report"))


def test_leaderboard_ranks_by_the_named_metric(saved_runs, report):
    md = report.leaderboard_md.read_text()
    for task, title in (("abstract", "Abstract"), ("title", "Title")):
        for setting in ("zero-shot", "random:1"):
            means = {
                m: float(np.mean([v for _, _, v in saved_runs.values[(m, task, setting)]]))
                for m in ("baseline/lead", "baseline/tail")
            }
            expected = sorted(means, key=lambda m: -means[m])
            section = md.split(f"## {title} · {setting}\n", 1)[1].split("\n## ", 1)[0]
            assert "Ranked by **rouge-l (f)**" in section
            order = [m for m in re.findall(r"^\| \d+ \| (\S+) \|", section, flags=re.M)]
            assert order == expected
            assert f"{means[expected[0]]:.3f} [" in section


def test_ties_share_a_rank(saved_runs):
    res = build_results(saved_runs.runs_dir)
    # give the second run identical scores to the first by duplicating the row's metrics
    t = res.rows[0].model_copy(deep=True)
    t.label = "copy-of-" + t.label
    res.rows.append(t)
    table = next(x for x in lb.tables(res) if x.task == t.task and x.setting == t.setting)
    ranks = {e.row.label: e.rank for e in table.entries}
    assert ranks[t.label] == ranks[res.rows[0].label]


def test_html_lists_every_model_and_task(saved_runs, report):
    page = report.index_html.read_text()
    parsed = _parse(page)
    text = " ".join(parsed.text)
    for model in ("baseline/lead", "baseline/tail"):
        assert model in text
    for title in ("Title", "Abstract"):
        assert title in text
    assert "rouge-l (f)" in text
    # self-contained: no external URLs; every image is a file written beside the page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    imgs = [a["src"] for tag, a in parsed.tags if tag == "img"]
    assert len(imgs) == 3
    for src in imgs:
        assert (report.out_dir / src).is_file()
        assert (report.out_dir / src).with_suffix(".png").is_file()


def test_outputs_are_escaped(corpus, tmp_path):
    saved = build_saved_runs(tmp_path / "home", corpus, limit=6, evil=EVIL)
    rep = make_report(saved.runs_dir, tmp_path / "out", examples_per_task=6)
    page = rep.examples_html.read_text()
    assert "<script>" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert str(markupsafe.escape(EVIL)) in page
    parsed = _parse(page)
    assert not [t for t, _ in parsed.tags if t in ("script", "img")]
    assert any(EVIL in d for d in ["".join(parsed.text)])  # the text itself survives, as text
    md = rep.leaderboard_md.read_text()
    assert md.count("\n## ") >= 4


def test_empty_window_and_no_runs_render(saved_runs, tmp_path):
    rep = make_report(saved_runs.runs_dir, tmp_path / "late", after=date(2030, 1, 1))
    n = 2 * 2 * 2 * len(saved_runs.papers)  # runs × tasks × settings × papers
    for text in (rep.leaderboard_md.read_text(), rep.index_html.read_text()):
        assert f"No samples inside the window: all {n} run records" in text
    # a window that empties only some papers keeps the tables, with per-table notes where nothing is left
    part = make_report(saved_runs.runs_dir, tmp_path / "part", after=date(2022, 12, 21))
    assert "No samples inside the window" not in part.leaderboard_md.read_text()
    assert Results.read(rep.results_json).window.after == date(2030, 1, 1)
    (tmp_path / "nothing").mkdir()
    rep2 = make_report(tmp_path / "nothing", tmp_path / "empty")
    assert "No run records found" in rep2.index_html.read_text()
    assert rep2.results.rows == []


def test_cli_report_with_window(saved_runs, tmp_path):
    out = tmp_path / "cli"
    r = CliRunner().invoke(
        app, ["report", "--runs", str(saved_runs.runs_dir), "--out", str(out), "--after", "2022-12-21"]
    )
    assert r.exit_code == 0, r.output
    res = Results.read(out / "results.json")
    inside = sum(1 for p in saved_runs.papers if p.published > date(2022, 12, 21))
    assert {row.counts.samples for row in res.rows} == {inside}
    for f in ("leaderboard.md", "index.html", "examples.html", "plots/settings.svg", "plots/fewshot.png"):
        assert (out / f).is_file()
    assert not list((out / "plots").glob(".*.part"))  # images are written aside and renamed
    bad = CliRunner().invoke(app, ["report", "--runs", str(saved_runs.runs_dir), "--after", "yesterday"])
    assert bad.exit_code == 2 and "YYYY-MM-DD" in bad.output


def test_references_and_not_run_counts_come_from_the_round(saved_runs, corpus, tmp_path):
    import shutil

    from academiceval.testing.sample_round import write_sample_round

    from .conftest import ROUND

    home = tmp_path / "home"
    shutil.copytree(saved_runs.root, home)
    write_sample_round(corpus, home / "rounds" / ROUND, name=ROUND, max_papers=None)
    # drop two records of one run: the report must count them as not run, from the round
    rec_file = home / "runs" / ROUND / "baseline__lead" / "abstract-zero-shot.jsonl"
    lines = rec_file.read_text().splitlines()
    rec_file.write_text("\n".join(lines[2:]) + "\n")
    rep = make_report(home / "runs", tmp_path / "out", examples_per_task=2)
    assert not [p for p in rep.results.problems if "not found" in p]
    for row in rep.results.rows:
        dropped = row.model == "baseline/lead" and row.task == "abstract" and row.setting == "zero-shot"
        assert row.counts.not_run == (2 if dropped else 0)
        assert row.counts.skipped == 0
    page = rep.examples_html.read_text()
    assert "the round&#39;s export was not found" not in page and "export was not found" not in page
    by_id = {p.arxiv_id: p for p in saved_runs.papers}
    shown = re.findall(r"<code>abstract/zero-shot/([0-9.]+)</code>", page)
    assert shown
    for aid in shown:
        assert str(markupsafe.escape(by_id[aid].abstract[:200])) in page


def test_cli_names_a_missing_runs_path(tmp_path):
    r = CliRunner().invoke(app, ["report", "--runs", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "path does not exist" in r.output
    assert not (tmp_path / "o").exists()
