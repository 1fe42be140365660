"""`--json` on the commands that print a table (issue 28, item 7): `run`, `score` and `stats` give what their
tables show as JSON another tool reads, on a small real round, and the numbers agree with the stored artifacts."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.store.artifacts import Layout, load_round, read_scores
from academiceval.testing.sample_round import write_sample_round


def _json(args: list[str]) -> object:
    res = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_run_score_and_stats_print_json(corpus: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    rnd_dir = write_sample_round(corpus, Layout.of(home).round_dir("demo"), name="demo", max_papers=4, body_chars=1500)
    rnd = load_round(rnd_dir)

    stats = _json(["stats", "demo", "--home", str(home), "--json"])
    assert {c["config"] for c in stats["configs"]} == set(rnd.manifest.configs)
    assert all(c["samples"] == sum(rnd.manifest.counts[c["config"]].values()) for c in stats["configs"])

    ran = _json(["run", "demo", "--model", "baseline/lead", "--split", "test", "--home", str(home), "--json"])
    assert ran["model"] == "baseline/lead" and ran["error_codes"] == {} and ran["configs"]
    done = sum(int(c["done"]) for c in ran["configs"])
    assert done == sum(int(c["selected"]) for c in ran["configs"]) > 0

    # ROUND/RUN, as `compare` takes a run (issue 28 item 8), or the run directory's path
    ref = "/".join(Path(ran["run_dir"]).parts[-2:])
    scored = _json(["score", ref, "--metrics", "rouge-l", "--home", str(home), "--json"])
    (one,) = scored
    assert one["written"] == {"rouge-l": done}
    records = [r for r in read_scores(Path(ran["run_dir"])) if r.metric == "rouge-l"]
    for summary in one["summary"]:
        mine = [r for r in records if r.task == summary["task"] and r.setting == summary["setting"]]
        assert summary["n"] == len(mine)


def _leaves(cmd: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        return [(path, cmd)]
    return [leaf for name, sub in subs.items() for leaf in _leaves(sub, (*path, name))]


def test_every_command_takes_json_and_a_table_command_prints_its_tables(corpus: Path, tmp_path: Path) -> None:
    """Every command has `--json` (its own, or the one `cli.main` adds that prints the command's tables); on a
    real mirror index the JSON on stdout is the table the command shows, and the people's output is on stderr."""
    import os
    import subprocess
    import sys

    from academiceval.cli.main import command
    from academiceval.store import Workspace

    missing = [" ".join(p) for p, c in _leaves(command()) if not any("--json" in q.opts for q in c.params)]
    assert not missing, missing
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    home = tmp_path / "home"
    src = corpus / "samples" / "scalar_paper_obj_anno"
    args = [sys.executable, "-m", "academiceval.cli.main", "mirror", "index", str(src), "--home", str(home), "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (table,) = json.loads(proc.stdout)
    assert table["columns"][:3] == ["format", "files", "records read"]
    stored = sum(int(r[3]) for r in table["rows"])
    ws = Workspace(home)
    assert stored == ws.count_meta() > 0
    assert "papers stored" in proc.stderr  # the summary line people read went to stderr


def test_score_names_the_judge_key_variable_it_reads(corpus: Path, tmp_path: Path) -> None:
    """A remote judge without its key: the one-line error names the variable `score` read and the option that
    picks another (issue 28 item 8: the hint named `--api-key-env`, which `score` does not take)."""
    home = tmp_path / "home"
    write_sample_round(corpus, Layout.of(home).round_dir("demo"), name="demo", max_papers=3, body_chars=1000)
    ran = _json(["run", "demo", "--model", "baseline/lead", "--split", "test", "--home", str(home), "--json"])
    args = ["score", ran["run_dir"], "--metrics", "judge", "--judge", "openai/some-judge", "--home", str(home)]
    args += ["--judge-base-url", "https://judge.example.com/v1", "--judge-api-key-env", "NO_SUCH_JUDGE_KEY"]
    res = CliRunner().invoke(app, args, env={"NO_SUCH_JUDGE_KEY": None, "COLUMNS": "200"})
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "NO_SUCH_JUDGE_KEY" in res.output and "--judge-api-key-env" in res.output, res.output


def test_stats_fits_80_columns_and_cuts_no_number(corpus: Path, tmp_path: Path) -> None:
    """Issue 28 item 7: `stats` in a pipe at COLUMNS=80 — every line within 80 columns, every config name and
    number of its JSON whole on the page (the setting is in the config's name, the test dates below the table)."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    write_sample_round(corpus, Layout.of(home).round_dir("demo"), name="demo", max_papers=12, body_chars=20_000)
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    args = [sys.executable, "-m", "academiceval.cli.main", "stats", "demo", "--home", str(home)]
    text = subprocess.run(args, capture_output=True, text=True, env=env, check=True, timeout=300).stdout
    stats = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, env=env, check=True).stdout)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    cut = [c for line in lines if "│" in line for c in line.split("│") if c.strip().endswith("…")]
    assert not cut, text  # no cell cut short
    header = next(line for line in lines if "config" in line)
    assert all(h in header.split() for h in ("config", "n", "split", "demos", "in/out")), header  # unbroken
    cells = {w.strip() for line in lines for w in line.split("│")}
    for c in stats["configs"]:
        pct = c["split_pct"]
        split = f"{pct['train']:.0f}/{pct['val']:.0f}/{pct['test']:.0f}"
        row = (c["config"], str(c["samples"]), split, f"{c['mean_input_tokens']:,.0f}")
        row += (f"{c['mean_output_tokens']:,.0f}", f"{c['compression']:.1f}")
        assert set(row) <= cells, (row, text)
        assert c["timespan"].replace(" … ", "…") in cells  # the test dates, in the table below
