"""`academiceval collect` / `update` as a user runs them (in-process via typer's runner, real mirror directory)."""

from __future__ import annotations

from graph_data import CRAWL_UNTIL, UPDATE_SINCE, UPDATE_UNTIL
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.graph import history, stats
from academiceval.store import Workspace


def test_collect_then_update_from_the_command_line(listings, seeds, tmp_path) -> None:
    home = str(tmp_path / "ws")
    runner = CliRunner()
    args = ["collect", "--source", str(listings), "--max-authors", "60", "--until", CRAWL_UNTIL.isoformat()]
    for s in seeds[:10]:
        args += ["--seed-author", s]
    res = runner.invoke(app, [*args, "--home", home])
    assert res.exit_code == 0, res.output
    assert "authors visited (this run / total)" in res.output and "60 / 60" in res.output
    assert "refined: authors kept" in res.output
    st = stats(Workspace(home))
    assert st.visited == 60 and st.authors > 0

    res = runner.invoke(
        app,
        [
            "update",
            "--source",
            str(listings),
            "--since",
            UPDATE_SINCE.isoformat(),
            "--until",
            UPDATE_UNTIL.isoformat(),
            "--new-papers",
            "20",
            "--inactive-after",
            "2018-01-15",
            "--home",
            home,
        ],
    )
    assert res.exit_code == 0, res.output
    assert "new first-author papers of graph authors" in res.output and "API calls" in res.output
    # what refining removed and why, and a graph change that adds up (issue 14)
    assert "refine: of" in res.output and "graph authors:" in res.output
    (rec,) = history(Workspace(home))
    assert rec["since"] == "2018-04-01" and rec["until"] == "2018-06-30" and rec["papers_added"] >= 20


def test_command_line_errors_are_actionable(listings, tmp_path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "ws")
    res = runner.invoke(app, ["update", "--source", str(listings), "--since", "April 2018", "--home", home])
    assert res.exit_code == 2 and "YYYY-MM-DD" in res.output
    res = runner.invoke(app, ["update", "--source", str(listings), "--since", "2018-04-01", "--home", home])
    assert res.exit_code == 2 and "academiceval collect" in res.output
    res = runner.invoke(app, ["collect", "--source", str(tmp_path / "nope"), "--seed-author", "A B", "--home", home])
    assert res.exit_code == 2 and "unknown source" in res.output
    res = runner.invoke(
        app, ["collect", "--source", str(listings), "--seed-author", "A B", "--max-authors", "0", "--home", home]
    )
    assert res.exit_code == 2 and "--max-authors" in res.output
