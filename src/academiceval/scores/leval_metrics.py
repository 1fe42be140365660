"""L-Eval's n-gram metrics for any run with a reference, registered by name (`academiceval score --metrics
squad-f1,…`). (The `leval` metric, L-Eval's own per-task number for L-Eval items, is the L-Eval family's:
`families.leval.metrics`.)

- `squad-f1`: SQuAD token F1 against the round's label, exactly L-Eval's `f1.py` (`scores.leval_text.token_f1`);
  values {"f": F1 in [0, 1]}.
- `leval-rouge`: rouge-score's rouge1 / rouge2 / rougeL F **without stemming** (L-Eval's setting, unlike our
  `rouge-*` metrics, which stem) and their geometric mean; values {"rouge1", "rouge2", "rougeL", "f"} with
  `f` = rougeL (what L-Eval's leaderboard shows as "ROUGE avg"). Note L-Eval's geometric mean is taken over
  the *task means*, so average `rouge1/2/L` first and combine after, not per sample.
"""

from __future__ import annotations

from typing import Any

from academiceval.scores.leval_text import token_f1
from academiceval.scores.registry import Metric, MetricOptions, register
from academiceval.scores.rouge import FastRouge
from academiceval.scores.scorer import SampleScorer, Scored, ScoreItem


class SquadF1(SampleScorer):
    metric_name = "squad-f1"

    def config(self) -> dict[str, Any]:
        return {"metric": "squad-f1", "normalise": "lower, punctuation, articles (L-Eval f1.py)"}

    def score(self, item: ScoreItem) -> Scored:
        return Scored(values={"f": float(token_f1(item.output, item.label or ""))})


class LEvalRouge(SampleScorer):
    metric_name = "leval-rouge"

    def __init__(self) -> None:
        self.scorer = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)

    def config(self) -> dict[str, Any]:
        return {"metric": "leval-rouge", "types": ["rouge1", "rouge2", "rougeL"], "use_stemmer": False}

    def score(self, item: ScoreItem) -> Scored:
        s = self.scorer.score(item.label or "", item.output)
        out = {k: s[k].fmeasure for k in ("rouge1", "rouge2", "rougeL")}
        return Scored(values={**out, "f": out["rougeL"]})


def _f1(opts: MetricOptions) -> SquadF1:
    return SquadF1()


def _rouge(opts: MetricOptions) -> LEvalRouge:
    return LEvalRouge()


register(Metric("squad-f1", build=_f1, summary="SQuAD token F1 vs the reference (L-Eval's f1.py)"))
register(Metric("leval-rouge", build=_rouge, summary="ROUGE-1/2/L without stemming (L-Eval), f = ROUGE-L"))
