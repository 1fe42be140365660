"""The per-sample scorer protocol and the one scoring loop every metric runs through.

A metric says only how it scores: one sample (`SampleScorer.score`), a batch of samples (`BatchScorer.score_batch`:
neural metrics, native batch calls) or one sample at a time over the network (`AsyncScorer.score_async`: the
judge, many requests in flight). Everything around that is the same for every metric and lives once, in
`score_job`:

- what is left to do (`RunJob.todo`: not yet scored with this configuration, or the output changed since);
- which records cannot be scored, with their reason (`RunJob.unusable`: no reference, a withheld label, a
  generation error; plus the metric's own `check`, e.g. "not a multiple-choice item");
- error records for items the scorer could not score (`Scored.error`);
- writing as it goes (every `EMIT_EVERY` records, every batch, every judged pair: an interrupted scoring resumes
  after the last write) and progress ticks.

So a new metric is a class with `metric_name`, `config()` and `score(item)`, and one `register` call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from academiceval.store.hashing import sha256_hex, sha256_json
from academiceval.store.models import RunRecord, RunSpec, ScoreRecord

EMIT_EVERY = 200  # per-sample scorers: records written (and one progress tick) per this many samples


def config_hash(config: dict[str, Any]) -> str:
    """16 hex of sha256 over the metric's configuration: records of different configurations never mix."""
    return sha256_json(config)[:16]


def output_sha(text: str) -> str:
    """The skip key of a scored output: a re-generated output is scored again."""
    return sha256_hex(text)[:16]


def done_key(sample_id: str, metric: str, chash: str, out_sha: Any, epoch: int = 1) -> tuple[Any, ...]:
    """What makes a score record "already scored": its sample, metric configuration and output — and its epoch
    beyond the first (epoch 1 keeps the key scores were skipped by before epochs existed)."""
    return (sample_id, metric, chash, out_sha) if epoch == 1 else (sample_id, metric, chash, out_sha, epoch)


NOT_APPLICABLE = "not_applicable"  # RunRecord.error_code of a sample a probe does not apply to

Progress = Callable[[str, int, int], None]  # (description, done, total)


@dataclass(frozen=True)
class Needs:
    """What a metric needs besides the model's output (checked before any run is read)."""

    reference: bool = True  # the round's label (the paper's own text): a sample missing from the round is an error
    judge: bool = False  # a judge model: `score_runs(judge=...)` / `--judge SPEC` (checked before any run is read)
    batched: bool = False  # scores `batch_size` samples per call (a neural model) and writes chunk by chunk


@dataclass
class RunJob:
    """One run directory as a scorer sees it: its records, their round samples, and where results go."""

    spec: RunSpec
    run_dir: Path
    samples: dict[str, Any]  # sample_id -> rounds Sample (label, fields)
    recs: list[RunRecord]  # sorted by (sample id, epoch): every epoch of a repeated run is scored
    done: set[tuple[str, str, str, Any]]  # (sample, metric, config hash, output sha[, epoch > 1]) already scored
    emit: Callable[[Sequence[ScoreRecord]], None]  # append to scores.jsonl (as we go: resumable)
    read_run: Callable[[Path], dict[str, RunRecord]]  # another run's records (pairwise metrics)
    progress: Progress | None = None
    skipped: dict[str, int] = field(default_factory=dict)  # metric name -> already scored
    needs: Needs = field(default_factory=Needs)  # of the metric being scored (set by score_runs before each)

    def todo(self, metric: str, chash: str) -> list[RunRecord]:
        """Records not yet scored with this metric configuration (or whose output changed since)."""
        # a probe that does not apply to a sample (title-only on a title) left nothing to score and is no error
        applicable = [r for r in self.recs if r.error_code != NOT_APPLICABLE]
        pending = [
            r
            for r in applicable
            if done_key(r.sample_id, metric, chash, output_sha(r.output), r.epoch) not in self.done
        ]
        self.skipped[metric] = self.skipped.get(metric, 0) + len(applicable) - len(pending)
        return pending

    def label_of(self, rec: RunRecord) -> str | None:
        s = self.samples.get(rec.sample_id)
        return None if s is None else s.label

    def record(self, rec: RunRecord, metric: str, chash: str, **kw: Any) -> ScoreRecord:
        """A ScoreRecord for `rec` (sample identity and date copied from the run record)."""
        return ScoreRecord(
            sample_id=rec.sample_id,
            task=rec.task,
            setting=rec.setting,
            split=rec.split,
            published=rec.published,
            date_precision=rec.date_precision,
            metric=metric,
            config_hash=chash,
            epoch=rec.epoch,
            **kw,
        )

    def unusable(self, rec: RunRecord, metric: str, chash: str) -> ScoreRecord | None:
        """A record that cannot be scored (no reference when the metric needs one, generation error): recorded with
        its reason."""
        label = self.label_of(rec)
        if self.needs.reference and label is None:
            why = f"sample {rec.sample_id} is not in round {self.spec.round}"
        elif self.needs.reference and not label:
            why = (
                f"label withheld: round {self.spec.round} was released without the labels of {rec.split}; "
                "score again with --round-dir of the round that has them"
            )
        elif rec.error or rec.skipped:
            why = f"no output to score: {rec.error or 'skipped (too long)'}"
        else:
            return None
        return self.record(rec, metric, chash, error=why, details={"output_sha256": output_sha(rec.output)})

    def tick(self, metric: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(f"{self.spec.model} {metric}", done, total)

    def status(self, what: str, *, done: bool) -> None:
        """A one-step status line (`what`, 0/1 while it lasts, 1/1 when done): a bar shows its elapsed time."""
        if self.progress:
            self.progress(what, int(done), 1)


@dataclass(frozen=True)
class ScoreItem:
    """One record to score, with what the loop found for it."""

    rec: RunRecord
    sample: Any  # the round's Sample, or None when the round does not have it (a metric without Needs.reference)
    label: str | None  # the round's label (None: the sample is not in the round)

    @property
    def output(self) -> str:
        return self.rec.output


@dataclass
class Scored:
    """What a scorer says about one item: its values and details, or why it could not score it."""

    values: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class _Base:
    """What every scorer kind shares: its record name, its configuration (hashed into every record), and two
    optional hooks. `metric_name` may spell the configuration (`bertscore-all-MiniLM-L6-v2-L6`)."""

    metric_name: str = ""

    def config(self) -> dict[str, Any]:
        """The configuration that decides the values (hashed: records of different configurations never mix)."""
        raise NotImplementedError

    def begin(self, job: RunJob) -> dict[str, Any]:
        """Called once per run before anything is scored; returns the configuration to hash for this run (a pairwise
        metric adds the other run's outputs). May raise a ConfigError for a run it cannot score at all."""
        return self.config()

    def loading(self) -> str | None:
        """What the scorer still has to load before it can score (a neural model: tens of seconds), named for the
        status line shown meanwhile; None when there is nothing (left) to load."""
        return None

    def load(self) -> None:
        """Load what `loading()` names; called once, before the first item, while the status line is shown."""

    def applies(self, rec: RunRecord) -> bool:
        """Whether this metric scores this record at all (others are left alone: no record, no error)."""
        return True

    def check(self, item: ScoreItem) -> str | None:
        """Why this item cannot be scored by this metric (written as the record's error), or None."""
        return None


class SampleScorer(_Base):
    """Scores one item at a time, synchronously (string metrics, multiple choice, L-Eval's per-task metric)."""

    def score(self, item: ScoreItem) -> Scored:
        raise NotImplementedError


class BatchScorer(_Base):
    """Scores `batch_size` items per call (a neural model on a batch, or a native batch call); each batch is
    written when done."""

    batch_size: int = 64

    def score_batch(self, items: Sequence[ScoreItem], job: RunJob) -> list[Scored]:
        raise NotImplementedError


class AsyncScorer(_Base):
    """Scores items concurrently (a judge model over the network); each record is written as soon as it is done."""

    async def score_async(self, item: ScoreItem) -> Scored:
        raise NotImplementedError

    async def finish(self) -> None:
        """Called after each run's items (close network clients bound to this run's event loop)."""


AnyScorer = SampleScorer | BatchScorer | AsyncScorer


def _record(job: RunJob, item: ScoreItem, metric: str, chash: str, scored: Scored) -> ScoreRecord:
    details = {"output_sha256": output_sha(item.rec.output), **scored.details}
    return job.record(item.rec, metric, chash, values=scored.values, details=details, error=scored.error)


def score_job(scorer: AnyScorer, job: RunJob) -> list[ScoreRecord]:
    """Score one run with one scorer: the loop every metric shares. Returns the records written."""
    metric = scorer.metric_name
    chash = config_hash(scorer.begin(job))
    pending = [r for r in job.todo(metric, chash) if scorer.applies(r)]
    items: list[ScoreItem] = []
    out: list[ScoreRecord] = []
    unusable: list[ScoreRecord] = []
    for rec in pending:
        bad = job.unusable(rec, metric, chash)
        item = ScoreItem(rec, job.samples.get(rec.sample_id), job.label_of(rec))
        if bad is None and (why := scorer.check(item)) is not None:
            bad = _record(job, item, metric, chash, Scored(error=why))
        if bad is None:
            items.append(item)
        else:
            unusable.append(bad)
    if unusable:  # written first: they cost nothing to redo, and a long neural pass may be interrupted
        job.emit(unusable)
        out.extend(unusable)
    total = len(items)
    if items and (what := scorer.loading()):  # a status line while a model loads, not tens of silent seconds
        job.status(f"loading {what}", done=False)
        scorer.load()
        job.status(f"loading {what}", done=True)
    if isinstance(scorer, AsyncScorer):
        out.extend(asyncio.run(_score_async(scorer, job, items, metric, chash)))
    elif isinstance(scorer, BatchScorer):
        for start in range(0, total, scorer.batch_size):
            chunk = items[start : start + scorer.batch_size]
            scored = scorer.score_batch(chunk, job)
            recs = [_record(job, it, metric, chash, s) for it, s in zip(chunk, scored, strict=True)]
            job.emit(recs)
            out.extend(recs)
            job.tick(metric, start + len(chunk), total)
    else:
        for start in range(0, total, EMIT_EVERY):
            chunk = items[start : start + EMIT_EVERY]
            recs = [_record(job, it, metric, chash, scorer.score(it)) for it in chunk]
            job.emit(recs)
            out.extend(recs)
            job.tick(metric, start + len(chunk), total)
    if not total and pending:
        job.tick(metric, len(pending), len(pending))
    return out


async def _score_async(
    scorer: AsyncScorer, job: RunJob, items: list[ScoreItem], metric: str, chash: str
) -> list[ScoreRecord]:
    done = 0

    async def one(item: ScoreItem) -> ScoreRecord:
        nonlocal done
        record = _record(job, item, metric, chash, await scorer.score_async(item))
        job.emit([record])
        done += 1
        job.tick(metric, done, len(items))
        return record

    try:
        return list(await asyncio.gather(*(one(it) for it in items)))
    finally:
        await scorer.finish()
