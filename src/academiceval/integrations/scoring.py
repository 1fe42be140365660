"""One answer from another harness scored exactly as `academiceval score` scores it (shared by the inspect_ai and
lm-evaluation-harness integrations; imports neither harness).

Why here and not in each integration: both must give, per sample, the value `score_runs` writes for the same
output. So both build the record the runner would have written (`answer_record`: the raw answer and the answer
cleaned by `models.postprocess`) and run it through the registry metric's own scorer and the one scoring loop
(`scores.scorer.score_job`) — not a re-implementation of ROUGE, BERTScore, multiple-choice accuracy or L-Eval's
metric. `headline` picks the value the summaries rank by (`scores.aggregate.primary_value_key`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from academiceval import __version__
from academiceval.models.postprocess import postprocess
from academiceval.scores import registry
from academiceval.scores.aggregate import primary_value_key
from academiceval.scores.config import ScoreConfig
from academiceval.scores.registry import MetricOptions
from academiceval.scores.scorer import RunJob, score_job
from academiceval.store.artifacts import new_record
from academiceval.store.models import RunRecord, RunSpec, Sample, ScoreRecord

EMPTY_ANSWER = "empty_answer"  # the runner's error code for a blank answer (models.errors.EmptyAnswerError)


def clean_output(task: str, completion: str) -> str:
    """The answer as the runner stores it in `RunRecord.output` (models.postprocess)."""
    return postprocess(task, completion)


def answer_record(
    sample: Sample,
    completion: str,
    *,
    prompt_sha256: str | None = None,
    error: str | None = None,
    error_code: str | None = None,
    empty_is_error: bool = False,
    **extra: object,
) -> RunRecord:
    """The `RunRecord` the runner would write for this answer. With `empty_is_error`, a blank answer is the
    runner's `empty_answer` error (not scored, not counted in a mean), as `academiceval run` records it."""
    if error is None and empty_is_error and not completion.strip():
        error, error_code = "empty answer (the harness returned no text)", EMPTY_ANSWER
    return new_record(
        sample_id=sample.sample_id,
        task=sample.task,
        setting=sample.setting,
        split=sample.split,
        arxiv_id=sample.arxiv_id,
        published=sample.published,
        date_precision=sample.date_precision,
        prompt_sha256=sample.prompt_sha256 if prompt_sha256 is None else prompt_sha256,
        output_raw=completion,
        output="" if error else clean_output(sample.task, completion),
        error=error,
        error_code=error_code,
        **extra,
    )


class MetricScorer:
    """A registry metric (e.g. rouge-l) applied to one answer at a time, through the same scorer class and
    RunJob path `score_runs` uses, so the values are those `academiceval score` writes."""

    def __init__(self, metric: str, config: ScoreConfig | None = None) -> None:
        self.metric = registry.get(metric)
        self.scorer = self.metric.build(MetricOptions(config=config or ScoreConfig(metrics=[metric])))

    @property
    def name(self) -> str:
        return self.metric.name

    def score(self, sample: Sample, completion: str, *, model: str = "inspect") -> ScoreRecord:
        """Score a raw completion (an empty one is scored, as inspect's log converts it)."""
        return self.score_record(sample, answer_record(sample, completion), model=model, backend="inspect")

    def score_record(self, sample: Sample, rec: RunRecord, *, model: str, backend: str) -> ScoreRecord:
        """Score one run record against its sample; an error record gets the loop's error ScoreRecord."""
        spec = RunSpec(
            round=sample.round,
            round_manifest_sha256="",
            model=model,
            backend=backend,
            package_version=__version__,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        written: list[ScoreRecord] = []
        job = RunJob(
            spec=spec,
            run_dir=Path("."),
            samples={sample.sample_id: sample},
            recs=[rec],
            done=set(),
            emit=written.extend,
            read_run=lambda p: {},
            needs=self.metric.needs,
        )
        score_job(self.scorer, job)
        return written[-1]


def headline(record: ScoreRecord) -> float | None:
    """The value the summaries rank by (F1 for ROUGE and BERTScore, accuracy, L-Eval's exact match / F1 /
    ROUGE-L); None for an error record."""
    if record.error or not record.values:
        return None
    return record.values[primary_value_key(record.values)]
