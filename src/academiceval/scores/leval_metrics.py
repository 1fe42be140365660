"""L-Eval's n-gram metrics for our own runs, registered by name (`academiceval score --metrics squad-f1,…`).

- `squad-f1`: SQuAD token F1 against the round's label, exactly L-Eval's `f1.py` (`scores.leval_text.token_f1`);
  values {"f": F1 in [0, 1]}.
- `leval-rouge`: rouge-score's rouge1 / rouge2 / rougeL F **without stemming** (L-Eval's setting, unlike our
  `rouge-*` metrics, which stem) and their geometric mean; values {"rouge1", "rouge2", "rougeL", "f"} with
  `f` = rougeL (what L-Eval's leaderboard shows as "ROUGE avg"). Note L-Eval's geometric mean is taken over
  the *task means*, so average `rouge1/2/L` first and combine after, not per sample.
"""

from __future__ import annotations

from academiceval.scores.models import ScoreRecord
from academiceval.scores.registry import Metric, MetricOptions, RunJob, config_hash, output_sha, register


class _PerSample:
    metric_name = ""
    chash = ""

    def values(self, label: str, output: str) -> dict[str, float]:
        raise NotImplementedError

    def score_run(self, job: RunJob) -> list[ScoreRecord]:
        metric, chash = self.metric_name, self.chash
        new: list[ScoreRecord] = []
        pending = job.todo(metric, chash)
        for k, rec in enumerate(pending):
            bad = job.unusable(rec, metric, chash)
            if bad is None:
                details = {"output_sha256": output_sha(rec.output)}
                vals = self.values(job.label_of(rec) or "", rec.output)
                bad = job.record(rec, metric, chash, values=vals, details=details)
            new.append(bad)
            if k % 200 == 0 or k == len(pending) - 1:
                job.tick(metric, k + 1, len(pending))
        job.emit(new)
        return new


class SquadF1(_PerSample):
    metric_name = "squad-f1"
    chash = config_hash({"metric": "squad-f1", "normalise": "lower, punctuation, articles (L-Eval f1.py)"})

    def values(self, label: str, output: str) -> dict[str, float]:
        from academiceval.scores.leval_text import token_f1

        return {"f": float(token_f1(output, label))}


class LEvalRouge(_PerSample):
    metric_name = "leval-rouge"
    chash = config_hash({"metric": "leval-rouge", "types": ["rouge1", "rouge2", "rougeL"], "use_stemmer": False})

    def __init__(self) -> None:
        from academiceval.scores.rouge import FastRouge

        self.scorer = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)

    def values(self, label: str, output: str) -> dict[str, float]:
        s = self.scorer.score(label, output)
        out = {k: s[k].fmeasure for k in ("rouge1", "rouge2", "rougeL")}
        return {**out, "f": out["rougeL"]}


def _f1(opts: MetricOptions) -> SquadF1:
    return SquadF1()


def _rouge(opts: MetricOptions) -> LEvalRouge:
    return LEvalRouge()


register(Metric("squad-f1", build=_f1, summary="SQuAD token F1 vs the reference (L-Eval's f1.py)"))
register(Metric("leval-rouge", build=_rouge, summary="ROUGE-1/2/L without stemming (L-Eval), f = ROUGE-L"))
