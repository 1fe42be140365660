"""squad-f1 and leval-rouge as registered run metrics: `score_runs` on a real round + run directory."""

from __future__ import annotations

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
