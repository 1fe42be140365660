"""The `accuracy` metric: multiple-choice items (citation cloze, ElaipBench format) scored 0/1 per item.

Each ScoreRecord carries `values = {"accuracy": 0|1, "unparsed": 0|1}` — an unparsed answer counts as wrong and
is also counted on its own, so a summary shows both the accuracy and the unparsed rate with their bootstrap
intervals — and `details` with the gold slot, the parsed choice, the parser and the rule that read it (see
`scores.mcq`). The gold label decides how an answer is read: an index ("2"), a letter ("C"), or a set of
letters ("A,C": multi-answer items, correct only when the sets are equal). Option: `accuracy.parser` ("strict" default,
or "lenient"). A sample with a `question_type` field (ElaipBench: SA-MCQ / MA-MCQ) also gets
`accuracy:<type>`, so summaries show the accuracy per question type with its own n and interval.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from academiceval.scores.mcq import METRIC, score_response
from academiceval.scores.registry import Metric, MetricOptions, Options, register
from academiceval.scores.scorer import Needs, SampleScorer, Scored, ScoreItem

CHOICE_GOLD = re.compile(r"^(?:\d{1,2}|[A-Za-z](?:\s*[,;]?\s*[A-Za-z])*)$")  # "2", "C", "A,C", "AC"


def n_choices_of(sample: Any) -> int:
    fields = getattr(sample, "fields", None) or {}
    n = sum(1 for k in fields if k.startswith("candidate_"))
    return n or 4


class AccuracyMetric(SampleScorer):
    metric_name = METRIC

    def __init__(self, parser: str = "strict") -> None:
        if parser not in ("strict", "lenient"):
            raise ValueError(f"unknown parser {parser!r}: strict or lenient")
        self.parser = parser

    def config(self) -> dict[str, Any]:
        return {"metric": METRIC, "parser": self.parser, "rule": "last <answer>, gold decides form"}

    def check(self, item: ScoreItem) -> str | None:
        if not CHOICE_GOLD.match((item.label or "").strip()):
            return f"sample {item.rec.sample_id} is not a multiple-choice item (its label is not an option)"
        return None

    def score(self, item: ScoreItem) -> Scored:
        rec, sample = item.rec, item.sample
        sc = score_response(
            rec.sample_id,
            rec.output,
            (item.label or "").strip(),
            n_choices=n_choices_of(sample),
            parser=self.parser,
        )
        values = {"accuracy": sc.value, "unparsed": 0.0 if sc.parsed else 1.0}
        qtype = ((getattr(sample, "fields", None) or {}).get("question_type") or "").strip()
        if qtype:  # ElaipBench SA/MA: a per-type mean beside the overall one (aggregate averages each key)
            values[f"accuracy:{qtype}"] = sc.value
        return Scored(
            values=values, details={"gold": sc.gold, "choice": sc.choice, "parser": sc.parser, "rule": sc.rule}
        )


class AccuracyOptions(Options):
    parser: Literal["strict", "lenient"] = "strict"  # how <answer> is read (scores.mcq)


def _build(opts: MetricOptions) -> AccuracyMetric:
    return AccuracyMetric(parser=opts.of(METRIC).parser)


register(
    Metric(
        METRIC,
        build=_build,
        needs=Needs(reference=True),
        summary="multiple choice: 1 when the last <answer>…</answer> names the gold option (unparsed = wrong, counted)",
        options=AccuracyOptions,
    )
)
