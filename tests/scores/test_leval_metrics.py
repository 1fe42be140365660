"""squad-f1 and leval-rouge as registered run metrics: `score_runs` on a real round + run directory."""

from __future__ import annotations

import json
from pathlib import Path

from academiceval.scores import registry
from academiceval.scores.config import ScoreConfig
from academiceval.scores.leval_text import token_f1
from academiceval.scores.rescore import score_runs
from academiceval.scores.rouge import FastRouge
from academiceval.store.artifacts import load_round, read_run_records, read_scores


def test_registered_and_scored_like_leval(run_home: tuple[Path, Path]) -> None:
    home, run_dir = run_home
    assert {"squad-f1", "leval-rouge"} <= set(registry.names())
    res = score_runs([run_dir], ScoreConfig(metrics=["squad-f1", "leval-rouge"]), home=home)[0]
    assert res.written == {"squad-f1": 12, "leval-rouge": 12}
    assert res.errors == {"squad-f1": 1, "leval-rouge": 1}  # the fixture's one failed generation, recorded
    records = read_run_records(run_dir)
    samples = load_round(home / "rounds" / "2022-12").samples_by_id()
    scorer = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)
    scores = read_scores(run_dir)
    assert {s.metric for s in scores} == {"squad-f1", "leval-rouge"}
    for s in scores:
        if s.error:
            continue
        rec, label = records[s.sample_id], samples[s.sample_id].label
        if s.metric == "squad-f1":
            assert s.values == {"f": token_f1(rec.output, label)}
        else:
            r = scorer.score(label, rec.output)
            assert s.values["rouge2"] == r["rouge2"].fmeasure and s.values["f"] == r["rougeL"].fmeasure
    again = score_runs([run_dir], ScoreConfig(metrics=["squad-f1"]), home=home)[0]
    assert sum(again.written.values()) == 0  # already scored: resumable, nothing twice


def test_length_control_of_a_project_judge_run(run_home: tuple[Path, Path]) -> None:
    from datetime import date

    from academiceval.scores.winrate import run_judge_summaries
    from academiceval.store.artifacts import append_scores
    from academiceval.store.models import ScoreRecord

    home, run_dir = run_home
    records = read_run_records(run_dir)
    labels = load_round(home / "rounds" / "2022-12").samples_by_id()
    judged, longer = 0, 0
    new = []
    for sid, rec in sorted(records.items()):
        if rec.error:
            continue
        cand_longer = len(rec.output.split()) > len(labels[sid].label.split())
        orders = [
            {"candidate_first": True, "verdicts": {"overall": "A" if cand_longer else "B"}, "error": None},
            {"candidate_first": False, "verdicts": {"overall": "B" if cand_longer else "A"}, "error": None},
        ]
        new.append(
            ScoreRecord(
                sample_id=sid,
                task=rec.task,
                setting=rec.setting,
                split=rec.split,
                published=rec.published or date(2022, 12, 1),
                metric="judge-fake-vs-reference",
                config_hash="h",
                values={"judged": 2.0},
                details={"orders": orders},
                config={"against": "reference"},
            )
        )
        judged += 2
        longer += 2 * cand_longer
    append_scores(run_dir, new)
    res = run_judge_summaries(run_dir, home=home)["judge-fake-vs-reference"]  # a legacy stored config: read
    assert res.judged == judged and res.errors == 0 and res.wins == longer
    assert res.win_rate == longer / judged and res.lc_win_rate is not None
    assert res.lc_coefficients["length"] > 0  # the judge preferred the longer text

    from typer.testing import CliRunner

    from academiceval.cli.main import app

    cli = CliRunner().invoke(app, ["judge-length-control", str(run_dir), "--home", str(home), "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)[str(run_dir)]["judge-fake-vs-reference"]["wins"] == longer
