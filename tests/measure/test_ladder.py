"""Context ladders: a real ladder build (unarXive workspace) and effective writing length from saved runs."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from tests.report.conftest import _sentences, load_papers
from tests.rounds.conftest import mws, unarxive_home  # noqa: F401  (fixtures)

from academiceval.rounds.config import BuildConfig
from academiceval.rounds.ladder import parse_ladder
from academiceval.store.models import RunRecord, RunSpec, ScoreRecord

RUNGS = [20_000, 40_000, 80_000]
TASKS = ("abstract", "title")


def test_parse_ladder():
    assert parse_ladder("8K,16K, 32k,64K") == [8000, 16000, 32000, 64000]
    assert BuildConfig(ladder="16K,8K").ladder == [8000, 16000]
    assert BuildConfig(ladder=[4000]).ladder == [4000]
    from academiceval.errors import ConfigError

    with pytest.raises((ConfigError, ValueError)):
        BuildConfig(ladder="8K,lots")
    with pytest.raises(ConfigError):
        parse_ladder("0")


def test_ladder_build_same_targets_nested_demos(mws):  # noqa: F811
    from academiceval.rounds.build import build_round
    from academiceval.rounds.prompts import render_prompt
    from academiceval.rounds.tokens import count
    from academiceval.store.artifacts import load_round

    rungs = [8_000, *RUNGS]  # most unarXive papers are longer than 8K tokens
    m = build_round(
        mws, "ladder", BuildConfig(tasks=["title"], ladder=rungs, category_level="archive", seed=7, settings=[])
    )
    rnd = load_round(mws.rounds_dir / "ladder")
    by_rung: dict[int, dict[str, object]] = {}
    for cfg, info in m.configs.items():
        by_rung[int(info.setting[4:])] = {s.arxiv_id: s for s in rnd.samples(cfg)}
    assert sorted(by_rung) == rungs
    # a rung's inputs fit the rung (issue 28: the 8K rung held 13-14K-token inputs): counted exactly, template
    # included; a target longer than the rung keeps the beginning of its body and no demos
    cut = m.notes["title/ctx:8000"]["body cut at the end to fit the rung (no demos)"]
    assert cut > 10
    for r, samples in by_rung.items():
        for k, s in enumerate(samples.values()):
            assert s.input_tokens <= r
            if k % 7 == 0 or r == 8_000:
                assert s.input_tokens == count(render_prompt(s, templates_dir=rnd.templates_dir))
    shorter = [
        s for s in by_rung[8_000].values() if len(s.fields["body"]) < len(by_rung[80_000][s.arxiv_id].fields["body"])
    ]
    assert len(shorter) == cut and all(not s.demos for s in shorter)
    for s in shorter:
        full = by_rung[80_000][s.arxiv_id].fields["body"]
        assert full.startswith(s.fields["body"]) and s.input_tokens > 8_000 - 60  # the end is cut, little is wasted
    assert m.configs["title-ctx8K"].mean_input_tokens <= 8_000
    targets = [set(v) for v in by_rung.values()]
    assert all(t == targets[0] for t in targets) and len(targets[0]) > 20  # every rung: the same targets
    grew = 0
    for aid in targets[0]:
        demos = [[d.arxiv_id for d in by_rung[r][aid].demos] for r in rungs]
        for small, big in itertools.pairwise(demos):
            assert big[: len(small)] == small  # a larger rung holds the smaller rung's demos, in order
        for r in rungs:
            s = by_rung[r][aid]
            assert all(d.published <= s.published for d in s.demos)
        grew += len(demos[-1]) > len(demos[0])
    assert grew > 0


def _write_run(home: Path, model: str, outputs: dict[tuple[str, str, int], str], papers, scorer) -> Path:
    d = home / "runs" / "ladder" / model.replace("/", "__")
    d.mkdir(parents=True)
    spec = RunSpec(
        round="ladder",
        round_manifest_sha256="0" * 64,
        model=model,
        backend="baseline",
        package_version="t",
        created_at="2026-01-01T00:00:00+00:00",
    )
    (d / "run.json").write_text(spec.model_dump_json())
    recs, scores = [], []
    for (task, aid, rung), out in outputs.items():
        p = papers[aid]
        setting = f"ctx:{rung}"
        sid = f"{task}/{setting}/{aid}"
        recs.append(
            RunRecord(
                sample_id=sid,
                task=task,
                setting=setting,
                split="test",
                arxiv_id=aid,
                published=p.published,
                prompt_sha256="0" * 64,
                output_raw=out,
                output=out,
            ).model_dump_json()
        )
        f = scorer.score(p.abstract if task == "abstract" else p.title, out)["rougeL"].fmeasure
        scores.append(
            ScoreRecord(
                sample_id=sid,
                task=task,
                setting=setting,
                split="test",
                published=p.published,
                metric="rouge-l",
                config_hash="cfg",
                values={"f": f},
            ).model_dump_json()
        )
    (d / "records-ladder.jsonl").write_text("\n".join(recs) + "\n")
    (d / "scores.jsonl").write_text("\n".join(scores) + "\n")
    return d


def test_fake_model_that_degrades_with_length_has_a_smaller_effective_length(tmp_path, corpus):
    """Real papers and real ROUGE-L: the lead baseline writes the same at every budget; the fake model's answer
    loses sentences as the budget grows. The fake one must get a smaller effective length than the baseline."""
    from academiceval.report.render import make_report
    from academiceval.scores.rouge import FastRouge

    papers = {p.arxiv_id: p for p in load_papers(corpus)}
    scorer = FastRouge(("rougeL",))
    lead = {
        (t, a, r): " ".join(_sentences(" ".join(p.body))[:4]) for t in TASKS for a, p in papers.items() for r in RUNGS
    }
    # the fake model degrades with length on abstracts only; its titles are the lead's at every budget
    fake = {
        (t, a, r): " ".join(
            _sentences(" ".join(p.body))[: {20_000: 4, 40_000: 2, 80_000: 1}[r] if t == "abstract" else 4]
        )
        for t in TASKS
        for a, p in papers.items()
        for r in RUNGS
    }
    home = tmp_path / "h"
    _write_run(home, "baseline/lead", lead, papers, scorer)
    _write_run(home, "fake/degrading", fake, papers, scorer)
    paths = make_report(home / "runs", tmp_path / "rep")
    res = paths.results
    assert res.effective_length["baseline/lead"] == {"abstract": 80_000, "title": 80_000}  # flat: the largest rung
    assert res.effective_length["fake/degrading"]["title"] == 80_000  # tasks are never mixed
    assert res.effective_length["fake/degrading"]["abstract"] < 80_000
    lad = next(x for x in res.ladders if x.model == "fake/degrading")
    assert lad.best == 20_000 and lad.targets == len(papers)
    assert [r.below_best for r in lad.rungs] == [False, True, True] and lad.effective_length == 20_000
    out = json.loads(paths.results_json.read_text())
    assert out["effective_length"]["fake/degrading"]["abstract"] == lad.effective_length
    assert "effective writing length" in paths.leaderboard_md.read_text()
    assert (tmp_path / "rep" / "plots" / "ladder.png").is_file()
    assert "Context ladder" in paths.index_html.read_text()
