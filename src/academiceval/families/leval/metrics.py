"""The `leval` metric: L-Eval's own number for each item of an L-Eval round, registered with `scores.registry`
when the metric table is first looked up (`Family.extensions["metrics"]`).

Dispatched by the sample's *setting* — the L-Eval task id, never a substring — to `scoring.score_item`: exact
match with the task's answer extraction (coursera, GSM, topic retrieval, sci_fi, CodeU, multiple choice), F1 or
ROUGE-1/2/L without stemming, by the item's evaluation tag; percent, so a task's mean is what `score-predictions`
prints for the same answers. Protocol `leval-compatible` (default; scores the raw answer, as L-Eval does) or
`strict` (scores the answer with reasoning blocks removed): option `leval.protocol` (`--metric-arg
leval.protocol=strict`), in the config hash and details.
"""

from __future__ import annotations

from typing import Any, Literal

from academiceval.errors import ConfigError
from academiceval.families.leval.items import FAMILY, TASKS
from academiceval.families.leval.samples import sample_to_item
from academiceval.families.leval.scoring import PROTOCOLS, score_item
from academiceval.scores.registry import Metric, MetricOptions, Options, register
from academiceval.scores.rouge import FastRouge
from academiceval.scores.scorer import Needs, RunJob, SampleScorer, Scored, ScoreItem


class LEvalMetric(SampleScorer):
    metric_name = "leval"

    def __init__(self, protocol: str = "leval-compatible") -> None:
        if protocol not in PROTOCOLS:
            raise ConfigError(f"unknown L-Eval protocol {protocol!r}", hint=f"one of {', '.join(PROTOCOLS)}")
        self.protocol = protocol
        self.rouge = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)

    def config(self) -> dict[str, Any]:
        dispatch = "sample setting = L-Eval task id"
        return {"metric": "leval", "protocol": self.protocol, "dispatch": dispatch, "units": "%"}

    def begin(self, job: RunJob) -> dict[str, Any]:
        unknown = sorted({s.setting for s in job.samples.values() if s.task == FAMILY and s.setting not in TASKS})
        if unknown:
            raise ConfigError(
                f"round {job.spec.round} has L-Eval items of unknown task id(s) {', '.join(unknown)}",
                hint=f"L-Eval's task ids: {', '.join(sorted(TASKS))}",
            )
        return self.config()

    def check(self, item: ScoreItem) -> str | None:
        if item.sample is None or item.sample.task != FAMILY:
            return f"sample {item.rec.sample_id} is not an L-Eval item (task {item.rec.task})"
        return None

    def score(self, item: ScoreItem) -> Scored:
        leval_item = sample_to_item(item.sample)
        answer = item.rec.output_raw if self.protocol == "leval-compatible" else item.rec.output
        values, details = score_item(
            leval_item.task,
            leval_item.evaluation,
            leval_item.label,
            answer,
            self.protocol,
            rouge=self.rouge,
        )
        error = None if values else f"not scored: {details.get('not_scored')}"
        return Scored(values=values, details=details, error=error)


class LEvalOptions(Options):
    protocol: Literal["leval-compatible", "strict"] = "leval-compatible"  # scoring.PROTOCOLS


def _leval(opts: MetricOptions) -> LEvalMetric:
    return LEvalMetric(protocol=opts.of("leval").protocol)


register(
    Metric(
        "leval",
        build=_leval,
        needs=Needs(reference=True),
        summary="L-Eval's per-task metric by task id (exact match / F1 / ROUGE without stemming), in percent",
        options=LEvalOptions,
    )
)
