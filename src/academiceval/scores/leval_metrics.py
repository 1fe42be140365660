"""L-Eval's n-gram metrics for our own runs, registered by name (`academiceval score --metrics squad-f1,…`).

- `squad-f1`: SQuAD token F1 against the round's label, exactly L-Eval's `f1.py` (`scores.leval_text.token_f1`);
  values {"f": F1 in [0, 1]}.
- `leval`: L-Eval's own number for each item of an L-Eval round (task `leval`), dispatched by the sample's
  *setting* — the L-Eval task id, never a substring — to `scores.leval.score_item`: exact match with the task's
  answer extraction (coursera, GSM, topic retrieval, sci_fi, CodeU, multiple choice), F1 or ROUGE-1/2/L without
  stemming, by the item's evaluation tag; percent, so a task's mean is what `score-predictions` prints for the
  same answers. Protocol `leval-compatible` (default; scores the raw answer, as L-Eval does) or `strict`
  (`ScoreConfig.leval_protocol`; scores the answer with reasoning blocks removed), in the config hash and details.
- `leval-rouge`: rouge-score's rouge1 / rouge2 / rougeL F **without stemming** (L-Eval's setting, unlike our
  `rouge-*` metrics, which stem) and their geometric mean; values {"rouge1", "rouge2", "rougeL", "f"} with
  `f` = rougeL (what L-Eval's leaderboard shows as "ROUGE avg"). Note L-Eval's geometric mean is taken over
  the *task means*, so average `rouge1/2/L` first and combine after, not per sample.
"""

from __future__ import annotations

from academiceval.errors import ConfigError
from academiceval.scores.models import ScoreRecord
from academiceval.scores.registry import Metric, MetricOptions, Needs, RunJob, config_hash, output_sha, register


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


class LEvalMetric:
    metric_name = "leval"

    def __init__(self, protocol: str = "leval-compatible") -> None:
        from academiceval.scores.leval import PROTOCOLS
        from academiceval.scores.rouge import FastRouge

        if protocol not in PROTOCOLS:
            raise ConfigError(f"unknown L-Eval protocol {protocol!r}", hint=f"one of {', '.join(PROTOCOLS)}")
        self.protocol = protocol
        self.rouge = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)
        self.chash = config_hash(
            {"metric": "leval", "protocol": protocol, "dispatch": "sample setting = L-Eval task id", "units": "%"}
        )

    def score_run(self, job: RunJob) -> list[ScoreRecord]:
        from academiceval.families.leval.items import TASKS
        from academiceval.families.leval.samples import sample_to_item
        from academiceval.scores.leval import score_item

        metric, chash = self.metric_name, self.chash
        pending = job.todo(metric, chash)
        unknown = sorted({s.setting for s in job.samples.values() if s.task == "leval" and s.setting not in TASKS})
        if unknown:
            raise ConfigError(
                f"round {job.spec.round} has L-Eval items of unknown task id(s) {', '.join(unknown)}",
                hint=f"L-Eval's task ids: {', '.join(sorted(TASKS))}",
            )
        new: list[ScoreRecord] = []
        for k, rec in enumerate(pending):
            bad = job.unusable(rec, metric, chash)
            sample = job.samples.get(rec.sample_id)
            if bad is None and (sample is None or sample.task != "leval"):
                why = f"sample {rec.sample_id} is not an L-Eval item (task {rec.task})"
                bad = job.record(rec, metric, chash, error=why, details={"output_sha256": output_sha(rec.output)})
            if bad is None:
                item = sample_to_item(sample)
                answer = rec.output_raw if self.protocol == "leval-compatible" else rec.output
                values, details = score_item(
                    item.task,
                    item.evaluation,
                    item.label,
                    answer,
                    self.protocol,  # type: ignore[arg-type]
                    rouge=self.rouge,
                )
                details["output_sha256"] = output_sha(rec.output)
                error = None if values else f"not scored: {details.get('not_scored')}"
                bad = job.record(rec, metric, chash, values=values, details=details, error=error)
            new.append(bad)
            if k % 200 == 0 or k == len(pending) - 1:
                job.tick(metric, k + 1, len(pending))
        job.emit(new)
        return new


def _leval(opts: MetricOptions) -> LEvalMetric:
    return LEvalMetric(protocol=str(getattr(getattr(opts, "config", None), "leval_protocol", "leval-compatible")))


def _f1(opts: MetricOptions) -> SquadF1:
    return SquadF1()


def _rouge(opts: MetricOptions) -> LEvalRouge:
    return LEvalRouge()


register(
    Metric(
        "leval",
        build=_leval,
        needs=Needs(reference=True),
        summary="L-Eval's per-task metric by task id (exact match / F1 / ROUGE without stemming), in percent",
    )
)
register(Metric("squad-f1", build=_f1, summary="SQuAD token F1 vs the reference (L-Eval's f1.py)"))
register(Metric("leval-rouge", build=_rouge, summary="ROUGE-1/2/L without stemming (L-Eval), f = ROUGE-L"))
