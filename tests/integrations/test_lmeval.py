"""lm-evaluation-harness integration (issue 28, item 11): `academiceval export --format lm-eval ROUND OUT`, run by
the real `lm_eval` CLI against the project's local OpenAI-compatible server, gives the numbers `academiceval score`
gives on the same answers, and sends exactly the prompts `academiceval run` sends.

Rounds from the corpus: a writing round built from the unarXive sample (title, abstract × zero-shot, random:1),
a citation-cloze round built from SCALAR's paper objects (`cloze build`) and two L-Eval tasks (`leval import`:
sci_fi, exam; news_summ, ROUGE with judge-only items)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("lm_eval")

from academiceval.cli.main import app
from academiceval.integrations.lmeval.folder import MANIFEST, read_manifest
from academiceval.store.artifacts import Layout, load_round, load_run
from academiceval.store.hashing import sha256_hex
from academiceval.testing.fake_server import FakeServerConfig, deterministic_answer, start_in_thread

ROUNDS = ("uxv", "cloze", "leval")
runner = CliRunner()


def cli(*args: object) -> str:
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with three small real rounds: writing and citation cloze (built), L-Eval (imported)."""
    from academiceval.rounds.build import build_round
    from academiceval.rounds.config import BuildConfig
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace

    h = tmp_path_factory.mktemp("lmeval-ws")
    ws = Workspace(h)
    index_mirror(ws, corpus / "samples" / "unarXive_sample")
    build_round(ws, "uxv", BuildConfig(settings=["zero-shot", "random:1"], tasks=["title", "abstract"], fetch=False))
    ws.close()
    # citation cloze from SCALAR's paper objects (`cloze import` of SCALAR's published question files fails on
    # the corpus copy: their candidate ids are bib ids; left to the family's owner, see notes/ecosystem.md)
    cli("mirror", "index", corpus / "samples" / "scalar_paper_obj_anno", "--home", h)
    cli("mirror", "index", corpus / "metadata" / "scalar_iclr2025_metadata.json", "--home", h)
    cli("cloze", "build", "--round", "cloze", "--set", "max_questions=4", "--seed", "7", "--home", h)
    cli(
        "leval",
        "import",
        corpus / "leval" / "LEval-data",
        "--round",
        "leval",
        "--tasks",
        "sci_fi,news_summ",
        "--home",
        h,
    )
    return h


def answer(prompt: str) -> str:
    """The fake server's answer: a pick among the candidates for a cloze question, True/False for sci_fi, words of
    the prompt otherwise; blank for about one prompt in eleven (the runner's empty_answer)."""
    h = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16)
    if h % 11 == 0:
        return ""
    if "<answer>" in prompt:
        return f"The masked work is <answer>{h % max(1, prompt.count('<Candidate>'))}</answer>"
    if "science-fiction story" in prompt:
        return f"{('True', 'False')[h % 2]} [fact: {('True', 'False')[h // 2 % 2]}]"
    return deterministic_answer(prompt, 40, None)


def _bertscore() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def _samples(out: Path, task: str) -> list[dict]:
    [path] = out.rglob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_lm_eval_runs_the_rounds_and_equals_academiceval_score(home: Path, tmp_path: Path) -> None:
    from academiceval.scores.aggregate import aggregate

    writing = "rouge-l,bertscore" if _bertscore() else "rouge-l"
    tasks_dir = tmp_path / "tasks"
    for r in ROUNDS:
        out = cli("export", "--format", "lm-eval", r, tasks_dir / r, "--metrics", writing, "--home", home)
        assert "equal to the round's prompt_sha256" in out
    manifests = {r: read_manifest(tasks_dir / r) for r in ROUNDS}
    assert all(c.prompts_checked == c.docs and c.prompts_unchecked == 0 for m in manifests.values() for c in m.configs)
    assert manifests["leval"].length_instruction and not manifests["uxv"].length_instruction  # the runner's default

    out_dir = tmp_path / "lm-eval-out"
    with start_in_thread(FakeServerConfig(responder=answer)) as server:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        cmd = [
            str(Path(sys.executable).parent / "lm_eval"),
            "--model",
            "local-chat-completions",
            "--model_args",
            f"base_url={server.url}/chat/completions,model=fake-model",
            "--tasks",
            ",".join(m.tags[0] for m in manifests.values()),
            "--include_path",
            str(tasks_dir),
            "--apply_chat_template",
            "--log_samples",
            "--output_path",
            str(out_dir),
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
        docs = sum(c.docs for m in manifests.values() for c in m.configs)
        assert server.stats.completed == docs  # one request per doc, nothing retried
        print(proc.stdout)  # lm-eval's table (shown with -s)
        # the same round, the same server, through academiceval's own runner: the same prompts get the same answers
        for r in ROUNDS:
            cli("run", r, "--model", "openai/fake-model", "--base-url", server.url, "--home", home)
    assert "title-zero-shot" in proc.stdout and "citation_cloze-easy" in proc.stdout  # aliases = config names

    [results_file] = out_dir.rglob("results_*.json")
    lm = json.loads(results_file.read_text())["results"]
    imported = cli("lm-eval", "import", out_dir, "--home", home)
    runs = {r: Layout.of(home).run_dir(r, "lm-eval__local-chat-completions__fake-model") for r in ROUNDS}
    runs["leval"] = runs["leval"].with_name(runs["leval"].name + "+lie")  # named as `academiceval run` names it
    for r, run_dir in runs.items():
        n = sum(c.docs for c in manifests[r].configs)
        assert f"{r}: {n} answers" in imported and f"prompts sent = the round's: {n}/{n}" in imported
        cli("score", run_dir, *(["--metrics", writing] if r == "uxv" else []), "--home", home)

    blank = checked = 0
    for r, m in manifests.items():
        data = load_run(runs[r])
        ours = load_run(Layout.of(home).run_dir(r, "openai__fake-model" + ("+lie" if r == "leval" else "")))
        summaries = {(s.task, s.setting, s.metric.split("-all-")[0]): s for s in aggregate(data.scores.values())}
        by_id = {(sid, rec.metric.split("-all-")[0]): rec for (sid, _, _), rec in data.scores.items()}
        for c in m.configs:
            lines = _samples(out_dir, c.task_name)
            assert len(lines) == c.docs
            for line in lines:  # what lm-eval got is what academiceval's runner got for the same sample
                sid = line["doc"]["sample_id"]
                assert line["filtered_resps"][0] == ours.records[sid].output_raw == data.records[sid].output_raw
                blank += data.records[sid].error_code == "empty_answer"
            for metric in c.metrics:
                s = summaries[(c.task, c.setting, metric)]
                per_sample = {ln["doc"]["sample_id"]: ln[metric] for ln in lines if metric in ln}
                if not per_sample:  # every answer blank: lm-eval shows no value, academiceval counts only errors
                    assert f"{metric},none" not in lm[c.task_name] and s.n == 0 and s.errors == c.docs
                    continue
                value = lm[c.task_name][f"{metric},none"]
                assert s.n == len(per_sample) == s.main.n  # the same answers counted (blank and judge-only left out)
                if metric == "bertscore":  # our scorer batches, lm-eval scores one at a time: padding moves ~1e-8
                    assert math.isclose(value, s.main.mean, abs_tol=1e-6), (c.config, value, s.main.mean)
                    continue
                assert math.isclose(value, s.main.mean, rel_tol=1e-12), (c.config, metric, value, s.main.mean)
                for sid, v in per_sample.items():
                    rec = by_id[(sid, metric)]
                    assert rec.values[s.primary] == v, (sid, metric)  # per sample: exactly equal
                    checked += 1
    assert blank > 0 and checked > 100
    cloze = [lm[c.task_name]["accuracy,none"] for c in manifests["cloze"].configs]
    assert 0 < sum(cloze) / len(cloze) < 1  # some picks right, some wrong
    scifi = next(c for c in manifests["leval"].configs if c.setting == "sci_fi")
    assert 0 < lm[scifi.task_name]["leval,none"] < 100  # L-Eval's percent


# ---- the export itself (fast) -----------------------------------------------------------------------------------
@pytest.fixture()
def small(corpus: Path, tmp_path: Path) -> Path:
    """The testing sample round (real unarXive text; its samples record no prompt_sha256)."""
    from academiceval.testing.sample_round import write_sample_round

    h = tmp_path / "ws"
    write_sample_round(corpus, Layout.of(h).round_dir("s"), name="s", max_papers=5, body_chars=2000)
    return h


def test_export_writes_the_runners_prompts_and_options(small: Path, tmp_path: Path) -> None:
    from academiceval.integrations.lmeval.harness import load_docs, process_results
    from academiceval.runs.prepare import PromptPreparer

    out = tmp_path / "t"
    text = cli("export", "--format", "lm-eval", "s", out, "--config", "title-zero-shot", "--home", small)
    assert "without a recorded hash (not compared)" in text
    m = read_manifest(out)
    [c] = m.configs
    assert (c.task_name, c.max_gen_toks, c.metrics, c.prompts_unchecked) == (
        "academiceval_s_title_zero_shot",
        32,
        ["rouge-l"],
        5,
    )
    spec = (out / f"{c.task_name}.yaml").read_text()
    assert (
        "custom_dataset: !function utils.load_docs" in spec
        and "process_results: !function utils.process_results" in spec
    )
    assert "until: []" in spec and "max_gen_toks: 32" in spec and "- academiceval_s_title" in spec
    docs = load_docs(out, config=c.config, split="test", version=1.0)["test"]
    rnd = load_round(Layout.of(small).round_dir("s"))
    prep = PromptPreparer(templates_dir=rnd.templates_dir)
    samples = {s.sample_id: s for s in rnd.samples(c.config, split="test")}
    assert len(docs) == len(samples) == 5
    for d in docs:
        assert d["prompt"] == prep(samples[d["sample_id"]], 32).prompt
        assert process_results(d, [d["label"]]) == {"rouge-l": 1.0}  # the reference itself
        assert process_results(d, [f'Sure! Here is a title: "{d["label"]}"']) == {"rouge-l": 1.0}  # cleaned as ours
        assert process_results(d, ["   "]) == {}  # blank: the runner's empty_answer, left out of the mean
    # a changed data file is refused when lm-eval loads it
    path = out / c.data_file
    path.write_text(path.read_text().replace("title", "titel", 1))
    with pytest.raises(Exception, match="changed after the export"):
        load_docs(out, config=c.config, split="test")


def test_export_overwrite_policy_and_bad_input(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = ("export", "--format", "lm-eval", "s", out, "--home", small)
    cli(*args)
    (out / "stale.yaml").write_text("task: stale\n")
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 2 and "already holds files" in res.output and "--force" in res.output
    cli(*args, "--force")
    assert not (out / "stale.yaml").exists() and (out / MANIFEST).is_file()  # replaced whole: no stale task
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".t.")]  # no leftover beside it
    for bad, message in (
        (("--format", "leval"), "no run.json here"),  # the run format of the one export verb: SOURCE is no run
        (("--format", "lm_eval"), "unknown --format 'lm_eval'"),
        (("--config", "nope"), "has no config 'nope'"),
        (("--metrics", "judge"), "needs a judge model"),
        (("--metrics", "rouge-x"), "unknown metric 'rouge-x'"),
        (("--split", "train"), "has no train samples"),
    ):
        res = runner.invoke(
            app, ["export", "--format", "lm-eval", "s", str(tmp_path / "u"), "--home", str(small), *bad]
        )
        assert res.exit_code == 2 and message in res.output, res.output
    inside = Layout.of(small).round_dir("s") / "lm"
    res = runner.invoke(app, ["export", "--format", "lm-eval", "s", str(inside), "--home", str(small)])
    assert res.exit_code == 2 and "inside the round" in res.output
    runs = Layout.of(small).runs_dir / "s" / "lm"  # would be read as a run
    res = runner.invoke(app, ["export", "--format", "lm-eval", "s", str(runs), "--home", str(small)])
    assert res.exit_code == 2 and "inside runs/" in res.output
    assert not (tmp_path / "u").exists() and not inside.exists() and not runs.exists()
    cli("export", "--format", "lm-eval", "s", small / "lm-tasks", "--home", small)  # elsewhere in the home: fine


def test_a_prompt_that_is_not_the_rounds_refuses_the_export(corpus: Path, tmp_path: Path) -> None:
    from academiceval.errors import ConfigError
    from academiceval.integrations.lmeval.export import export_round
    from academiceval.rounds.prompts import render_prompt
    from academiceval.store.models import Sample
    from academiceval.testing.sample_round import load_unarxive_papers, write_round

    papers = load_unarxive_papers(corpus, max_papers=3, body_chars=1000)
    rows = []
    for p in papers:
        s = Sample(
            sample_id=f"title/zero-shot/{p['arxiv_id']}",
            round="r",
            task="title",
            setting="zero-shot",
            split="test",
            arxiv_id=p["arxiv_id"],
            paper_id=p["arxiv_id"],
            published=p["published"],
            fields={"abstract": p["abstract"], "body": p["body"]},
            label=p["title"],
        )
        s.prompt_sha256 = sha256_hex(render_prompt(s))
        rows.append(s)
    rows[1].prompt_sha256 = sha256_hex("a prompt the build never rendered")
    write_round(tmp_path / "ws" / "rounds" / "r", "r", {"title-zero-shot": rows})
    with pytest.raises(ConfigError, match="1 of 3 prompts of config title-zero-shot differ") as e:
        export_round("r", tmp_path / "out", home=tmp_path / "ws")
    assert rows[1].sample_id in str(e.value) and not (tmp_path / "out").exists()


def test_a_release_withholds_its_test_papers_from_the_export_and_says_so(small: Path, tmp_path: Path) -> None:
    """A release withholds its test papers whole (no input, no label: issue 23 item 1), so exporting that split
    is refused with the reason and nothing is written."""
    rel = tmp_path / "rel"
    cli("release", "s", rel, "--home", small)
    r = CliRunner().invoke(app, ["export", "--format", "lm-eval", str(rel), str(tmp_path / "t"), "--home", str(small)])
    assert r.exit_code == 2 and "withholds its test papers" in r.output, r.output
    assert not (tmp_path / "t").exists()


def test_import_marks_answers_to_other_prompts(home: Path, tmp_path: Path) -> None:
    """lm-eval output whose request is not the doc's prompt (here: a system instruction added) is imported with
    the warning and the hash of what was sent; an existing run is replaced only with --force."""
    from academiceval.integrations.lmeval.harness import load_docs
    from academiceval.integrations.lmeval.samples import PROMPT_CHANGED, import_output

    out = tmp_path / "t"
    cli(
        "export",
        "--format",
        "lm-eval",
        "uxv",
        out,
        "--config",
        _config(home, "uxv", "title", "random:1"),
        "--home",
        home,
    )
    [c] = read_manifest(out).configs
    [doc] = list(load_docs(out, config=c.config, split="test")["test"])
    lm_out = tmp_path / "lm" / "m"
    lm_out.mkdir(parents=True)
    (lm_out / "results_2026-01-01T00-00-00.json").write_text(
        json.dumps(
            {
                "config": {
                    "model": "local-chat-completions",
                    "model_args": {"base_url": "http://u:KEY@h/v1", "model": "m"},
                },
                "model_name": "m",
                "configs": {
                    c.task_name: {"metadata": {"academiceval_round": "uxv"}, "generation_kwargs": {"max_gen_toks": 32}}
                },
            }
        )
    )
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": doc["prompt"]}]
    line = {"doc": doc, "arguments": {"gen_args_0": {"arg_0": [json.dumps(msgs)]}}, "filtered_resps": ["A title"]}
    broken = {**line, "doc": {**doc, "sample": "{}"}}  # a doc whose sample does not validate
    (lm_out / f"samples_{c.task_name}_2026-01-01T00-00-00.jsonl").write_text(
        "\n".join([json.dumps(line), "{torn", json.dumps(broken)]) + "\n"
    )
    rep = import_output(tmp_path / "lm", home=home)
    [run] = rep.runs
    assert (run.records, run.prompts_changed, run.prompts_equal) == (1, 1, 0)
    assert sum(rep.skipped.values()) == 2 and len(rep.skipped) == 2  # the torn line and the bad doc, counted
    data = load_run(run.run_dir)
    [rec] = data.records.values()
    assert PROMPT_CHANGED in rec.warnings and rec.prompt_sha256 != doc["prompt_sha256"]
    assert "KEY" not in (run.run_dir / "run.json").read_text()  # the key in the URL is not stored
    with pytest.raises(Exception, match="already exists"):
        import_output(tmp_path / "lm", home=home)
    import_output(tmp_path / "lm", home=home, force=True)
    shutil.rmtree(run.run_dir)


def _config(home: Path, round_name: str, task: str, setting: str) -> str:
    """The round's config name of a task × setting (names carry a size today; issue 28 item 5 may drop it)."""
    rnd = load_round(Layout.of(home).round_dir(round_name))
    return next(name for name, info in rnd.manifest.configs.items() if (info.task, info.setting) == (task, setting))
