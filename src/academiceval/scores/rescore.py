"""Score saved runs without regenerating: `score_runs(run_dirs, ScoreConfig(metrics=[...]))`.

Each run directory (`runs/ROUND/MODEL/`, written by the runner) holds `run.json` and per task-setting
RunRecord files; the reference labels live in the round (`rounds/ROUND/`), found from `run.json` unless
`round_dir` is given. Every sample × metric becomes one ScoreRecord line appended to `<run_dir>/scores.jsonl`,
tagged with the metric's configuration hash. A sample already scored with the same configuration hash and
the same output is skipped, so an interrupted scoring resumes and a changed output (re-run sample) is
re-scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from academiceval.models.registry import load_backend
from academiceval.runs.lock import RunLock
from academiceval.scores import registry
from academiceval.scores.aggregate import aggregate
from academiceval.scores.config import ScoreConfig
from academiceval.scores.labels import Rounds, RunLabels, ScoreError, run_labels
from academiceval.scores.models import MetricSummary
from academiceval.scores.registry import MetricOptions, Scorer
from academiceval.scores.scorer import RunJob, done_key, score_job
from academiceval.store.artifacts import (
    SCORES_LOCK,
    ArtifactError,
    RunData,
    append_scores,
    home_of_run,
    load_run,
    read_scores,
)
from academiceval.store.models import RunRecord, RunSpec, ScoreRecord

Progress = Callable[[str, int, int], None]  # (description, done, total)


# the metrics `score` computes when none are named (plus the judge when one is given, and what a run's tasks add:
# `registry.added_defaults`, e.g. citation faithfulness on Related Work)
GENERAL_DEFAULT = ("rouge-l", "bertscore")

LABEL_WITHHELD = "label withheld"  # how RunJob.unusable starts the error of a sample a release withholds


@dataclass
class RunScoreResult:
    run_dir: Path
    model: str
    label: str = ""  # model plus input variant (probe, RAG, context length), as tables show a run
    written: dict[str, int] = field(default_factory=dict)  # metric -> new records
    skipped: dict[str, int] = field(default_factory=dict)  # metric -> already scored
    errors: dict[str, int] = field(default_factory=dict)  # metric -> records with an error
    summary: list[MetricSummary] = field(default_factory=list)  # aggregate() over this run's scores
    scored_against: dict[str, int] = field(default_factory=dict)  # what the new records were scored against -> n
    notes: list[str] = field(default_factory=list)  # e.g. the run was made on another manifest


def read_run_dir(run_dir: Path) -> tuple[RunSpec, dict[str, RunRecord]]:
    """The spec and the epoch-1 record per sample (what a pairwise metric reads of the other run)."""
    spec, records = read_run_epochs(run_dir)
    return spec, {sid: r for (sid, epoch), r in records.items() if epoch == 1}


def read_run_epochs(run_dir: Path) -> tuple[RunSpec, dict[tuple[str, int], RunRecord]]:
    """The spec and every record, keyed (sample id, epoch): all epochs of a repeated run are scored."""
    try:
        run = load_run(run_dir, scores=False)
    except ArtifactError as e:
        raise ScoreError(e.message, source=e.source, hint=e.hint) from None
    return run.spec, run.epoch_records


def score_runs(
    run_dirs: Sequence[str | Path],
    config: ScoreConfig | None = None,
    *,
    round_dir: str | Path | None = None,
    home: str | Path | None = None,
    judge: Any = None,
    cache: Any = None,
    progress: Progress | None = None,
    batch_size: int = 64,
    wait_s: float = 0.0,
) -> list[RunScoreResult]:
    """Score every run directory as `config` says; returns per run the counts and `aggregate()` of its scores in
    the window `config.after`. `config` is stored verbatim in every score record written.

    `judge`: a Backend for the "judge" metric (default: `config.judge` loaded with `config.judge_base_url`).
    `config.options["judge"]["against"]`: "reference" (the round's label) or another run directory (pairwise).
    `cache`: a response cache for judge calls; default the runner's cache in the workspace when `home` is known.
    `config.metrics`: default rouge-l and bertscore, plus judge when a judge is given.
    `wait_s`: how long to wait for another process scoring the same run (`scores_lock`) before refusing.
    """
    config = config or ScoreConfig()
    if judge is None and config.judge:
        judge = load_backend(config.judge, base_url=config.judge_base_url, api_key_env=config.judge_api_key_env)
    metrics = config.metrics
    if metrics is None:
        metrics = [*GENERAL_DEFAULT, *(["judge"] if judge is not None else [])]
    chosen = registry.resolve(metrics, judge=judge)
    registry.check_options(config)  # a misspelled --metric-arg fails here, before any run is read
    opts = MetricOptions(
        config=config,
        judge=judge,
        cache=cache,
        home=Path(home) if home else None,
        batch_size=batch_size,
    )
    scorers: dict[str, Scorer] = {}  # built on first use, kept across runs (a loaded model is loaded once)
    results: list[RunScoreResult] = []
    rounds = Rounds()  # each round read once for all the runs
    for rd in map(Path, run_dirs):
        spec, records = read_run_epochs(rd)
        # the round (or release, or release key) the run was made on, and what each sample is scored against
        where = Path(round_dir) if round_dir else None
        labels = run_labels(rd, spec, where, Path(home) if home else None, rounds, records.values())
        with scores_lock(rd, wait_s):  # one writer of scores.jsonl: what is done is read under the lock
            results.append(_score_one(rd, spec, records, labels, chosen, config, opts, scorers, progress))
    return results


def scores_lock(run_dir: Path, wait_s: float) -> RunLock:
    """The writer lock of a run's scores.jsonl: a second `score` of the same run waits `wait_s` seconds for it,
    then refuses (naming the holder), so no sample is scored — and no judge call paid — twice."""
    return RunLock(
        run_dir,
        wait_s=wait_s,
        name=SCORES_LOCK,
        what="another `academiceval score` is writing this run's scores",
        hint="wait for it to finish (or pass --wait SECONDS)",
    )


def _score_one(
    rd: Path,
    spec: RunSpec,
    records: dict[tuple[str, int], RunRecord],
    labels: RunLabels,
    chosen: list[registry.Metric],
    config: ScoreConfig,
    opts: MetricOptions,
    scorers: dict[str, Scorer],
    progress: Progress | None,
) -> RunScoreResult:
    """Score one run directory (the caller holds its scores lock)."""
    stored = config.stored()

    res = RunScoreResult(run_dir=rd, model=spec.model, label=RunData(path=rd, spec=spec).label, notes=labels.notes)

    def write(batch: Sequence[ScoreRecord]) -> None:
        for r in batch:
            r.config = stored
            r.details["scored_against"] = against = labels.against(r.sample_id)  # issue 28.2: say which labels
            res.scored_against[against] = res.scored_against.get(against, 0) + 1
        append_scores(rd, batch)

    job = RunJob(
        spec=spec,
        run_dir=rd,
        samples=labels.samples,
        recs=sorted(records.values(), key=lambda r: (r.sample_id, r.epoch)),  # every epoch of a repeated run
        # a sample whose label a release withheld is scored again once the labels are there
        done={
            done_key(s.sample_id, s.metric, s.config_hash, s.details.get("output_sha256"), s.epoch)
            for s in read_scores(rd)
            if not (s.error or "").startswith(LABEL_WITHHELD)
        },
        emit=write,
        read_run=lambda p: read_run_dir(p)[1],
        progress=progress,
        skipped=res.skipped,
    )
    run_metrics = chosen
    # a multiple-choice or L-Eval run: its family's metric is the default (registry.TASK_DEFAULT_METRICS)
    family = registry.default_metrics(r.task for r in records.values()) if config.metrics is None else None
    if family:
        run_metrics = registry.resolve(family)
    elif config.metrics is None:  # the general default, plus what this run's tasks add (Related Work: citations)
        extra = registry.added_defaults((r.task for r in records.values()), judge=opts.judge is not None)
        run_metrics = [
            *chosen,
            *registry.resolve([m for m in extra if m not in {c.name for c in chosen}], judge=opts.judge),
        ]
    for metric in run_metrics:
        scorer = scorers.get(metric.name)
        if scorer is None:
            home_now = opts.home or home_of_run(rd)
            scorer = scorers[metric.name] = metric.build(replace(opts, home=home_now))
        job.needs = metric.needs
        new = score_job(scorer, job)
        res.written[scorer.metric_name] = len(new)
        res.errors[scorer.metric_name] = sum(1 for r in new if r.error)
    res.summary = aggregate(read_scores(rd), after=config.after, run=spec.model)
    return res
