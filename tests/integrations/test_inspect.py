"""inspect_ai integration: our rounds as inspect tasks, scored exactly as `academiceval score` scores them.

Offline: inspect's `mockllm/model` answers; the round is the real unarXive sample (academiceval.testing)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from academiceval.store.artifacts import Layout
from academiceval.testing.sample_round import write_sample_round

ROUND = "2022-12-sample"


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("inspect-ws")
    write_sample_round(corpus, Layout.of(h).round_dir(ROUND), name=ROUND, max_papers=6, body_chars=3000)
    return h


def _answers(sel) -> list[str]:
    """Varied answers: a title-like fragment of the body, a chatty wrapper, an empty answer, the label itself."""
    out = []
    for i, s in enumerate(sel.samples):
        body = s.fields["body"].split()
        out.append(
            [
                " ".join(body[:12]),
                f'Sure! Here is a title for the paper: "{s.label}"',
                "",
                s.label,
                " ".join(body[5:9]),
                "Default output",
            ][i % 6]
        )
    return out


def test_inspect_scores_equal_academiceval_score(home: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from academiceval.integrations.inspect.core import select
    from academiceval.integrations.inspect.log import log_to_run
    from academiceval.integrations.inspect.tasks import title
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import load_run

    sel = select(ROUND, "title", home=home)
    answers = _answers(sel)
    model = get_model(
        "mockllm/model",
        custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=a) for a in answers],
    )
    [log] = inspect_eval(
        title(round=ROUND, home=str(home)),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_connections=1,
        max_samples=1,  # one at a time: mockllm hands out the custom outputs in order
    )
    assert log.status == "success", log.error
    assert len(log.samples) == len(sel.samples)
    # the prompt is the round's template rendering (as `academiceval run` sends it without a budget)
    by_id = {s.sample_id: s for s in sel.samples}
    for s in log.samples:
        assert s.input == sel.prompt(by_id[s.id])

    inspect_values = {s.id: s.scores["rouge-l"].value for s in log.samples}
    run_dir = log_to_run(log, home=home)
    [res] = score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]), home=home)
    assert res.written["rouge-l"] == len(sel.samples)
    ours = {r.sample_id: r for r in load_run(run_dir).scores.values() if r.metric == "rouge-l"}
    assert ours.keys() == inspect_values.keys()
    for sid, v in inspect_values.items():
        assert ours[sid].values["f"] == v, sid  # exactly equal, not approximately
    assert any(v == 1.0 for v in inspect_values.values())  # the wrapped and the verbatim label
    assert any(0 < v < 1 for v in inspect_values.values())
    mean = sum(inspect_values.values()) / len(inspect_values)
    assert math.isclose(log.results.scores[0].metrics["mean"].value, mean)


def test_unknown_setting_names_what_the_round_has(home: Path) -> None:
    from academiceval.errors import ConfigError
    from academiceval.integrations.inspect.core import select

    with pytest.raises(ConfigError, match="no title samples in setting 'coauthor:2'") as e:
        select(ROUND, "title", setting="coauthor:2", home=home)
    assert "title random:1" in (e.value.hint or "")


def test_without_a_round_the_workspaces_only_round_or_the_names(home: Path, tmp_path: Path) -> None:
    """`inspect eval academiceval/title` with no `-T round=`: the only round of the workspace is taken; with
    several (or none) the error names them and how to pick one (issue 28, item 11)."""
    import shutil

    from academiceval.errors import ConfigError
    from academiceval.integrations.inspect.core import select
    from academiceval.integrations.inspect.tasks import title

    sel = select(None, "title", home=home)
    assert sel.round.name == ROUND and sel.samples == select(ROUND, "title", home=home).samples
    assert title(home=str(home)).metadata["round"] == ROUND  # the @task as inspect calls it without -T round=

    two = tmp_path / "two"
    for name in (ROUND, "another"):
        shutil.copytree(Layout.of(home).round_dir(ROUND), Layout.of(two).round_dir(name))
    with pytest.raises(ConfigError, match=f"has 2 rounds: {ROUND}, another") as e:
        select(None, "title", home=two)
    assert "-T round=" in (e.value.hint or "")
    assert select("another", "title", home=two).round.path.name == "another"
    with pytest.raises(ConfigError, match="no round in the workspace") as e:
        select(None, "title", home=tmp_path / "empty")
    assert "academiceval demo" in (e.value.hint or "")


def test_inspect_cli_finds_tasks_through_the_entry_point(home: Path, tmp_path: Path) -> None:
    """`inspect eval academiceval/title -T round=...` as a user types it, through the entry point declared in
    pyproject.toml. An install that predates the entry point gets it from a dist-info on PYTHONPATH; a current
    install must not get it twice: inspect finds no task when two distributions declare the package, which is
    what a PYTHONPATH holding src/ (with its academiceval.egg-info) does — so the subprocess gets no inherited
    PYTHONPATH and imports the installed (editable) academiceval."""
    from importlib.metadata import entry_points

    paths: list[str] = []
    if not any(e.name == "academiceval" for e in entry_points(group="inspect_ai")):
        ep = tmp_path / "ep"
        dist = ep / "academiceval_inspect_entrypoint-0.0.0.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: academiceval-inspect-entrypoint\nVersion: 0.0.0\n")
        (dist / "entry_points.txt").write_text(
            "[inspect_ai]\nacademiceval = academiceval.integrations.inspect._registry\n"
        )
        paths.append(str(ep))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"INSPECT_DISPLAY": "none", **({"PYTHONPATH": os.pathsep.join(paths)} if paths else {})})
    inspect = Path(sys.executable).parent / "inspect"
    cmd = [
        str(inspect),
        "eval",
        "academiceval/title",
        "-T",
        f"round={ROUND}",
        "-T",
        f"home={home}",
        "-T",
        "setting=random:1",
        "--model",
        "mockllm/model",
        "--limit",
        "3",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (out.stdout + out.stderr)[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.eval.task == "academiceval/title"
    assert log.eval.task_args["round"] == ROUND
    assert [s.metadata["setting"] for s in log.samples] == ["random:1"] * 3
    assert "rouge-l" in log.samples[0].scores


def test_citation_cloze_through_inspect_scores_as_our_accuracy(corpus: Path, tmp_path: Path) -> None:
    """The citation-cloze family (SCALAR paper objects) as an inspect task: accuracy equals `score_runs`'."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from academiceval.families.cloze.build import build_cloze_round
    from academiceval.integrations.inspect.core import select
    from academiceval.integrations.inspect.log import log_to_run
    from academiceval.integrations.inspect.tasks import citation_cloze
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace
    from academiceval.store.artifacts import load_run

    home = tmp_path / "ws"
    ws = Workspace(home)
    index_mirror(ws, corpus / "samples" / "scalar_paper_obj_anno")
    index_mirror(ws, corpus / "metadata" / "scalar_iclr2025_metadata.json")
    build_cloze_round(ws, "cloze", overrides={"max_questions": 6}, seed=7)
    ws.close()
    sel = select("cloze", "citation_cloze", setting=None, home=home)
    assert sel.samples
    answers = [f"<answer>{s.label if i % 2 == 0 else 'Z'}</answer>" for i, s in enumerate(sel.samples)]
    model = get_model(
        "mockllm/model", custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=a) for a in answers]
    )
    [log] = inspect_eval(
        citation_cloze(round="cloze", home=str(home)),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=1,
    )
    assert log.status == "success", log.error
    ours_in_inspect = {s.id: s.scores["accuracy"].value for s in log.samples}
    run_dir = log_to_run(log, home=home)
    score_runs([run_dir], ScoreConfig(metrics=["accuracy"]), home=home)
    ours = {r.sample_id: r.values["accuracy"] for r in load_run(run_dir).scores.values() if r.metric == "accuracy"}
    assert ours == ours_in_inspect
    assert 0 < sum(ours.values()) < len(ours)  # the gold answers right, the invented option wrong
