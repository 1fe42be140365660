"""The results schema: one pydantic document (`results.json`) behind the leaderboard, the HTML page and the API.

One row per (round, run, task, setting). A *run* is one run directory: a model spec with its backend,
generation options and input variant (RAG, probe, context length), so two runs of the same model with
different options are two rows rather than a silent mix. Metrics are keyed by their ScoreRecord name, which
carries the configuration that matters (e.g. ``bertscore-all-MiniLM-L6-v2-L6``); when one name was scored with
several configurations, the key gets ``@<config hash prefix>`` so they are never averaged together.

Everything here is recomputed from saved RunRecord/ScoreRecord lines: a knowledge-cutoff window (`after`)
only filters records by the target paper's v1 date, it never re-runs or re-scores anything.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from academiceval import __version__
from academiceval.report.models import ContaminationGap, DateSeries, Ladder
from academiceval.report.rounddata import expected_samples, round_notes
from academiceval.scores.aggregate import LEVEL, N_BOOT, aggregate
from academiceval.scores.models import MetricSummary
from academiceval.scores.paired import PairedDiff
from academiceval.scores.windows import Window, in_window
from academiceval.store.artifacts import RESULTS, RunData, find_run_dirs, load_run
from academiceval.store.models import ScoreRecord
from academiceval.store.tasks import find_spec, task_order
from academiceval.store.workspace import now_iso

SCHEMA_VERSION = 1
RESULTS_FILE = RESULTS

DEFAULT_SEED = 20240601  # seeds the report's own estimates (paired few-shot differences)


class BootstrapConfig(BaseModel):
    """How intervals were computed. Metric intervals come from `scores.aggregate` (percentile bootstrap at 95%,
    seeded from metric, configuration, task, setting, value and window); `seed` seeds the report's own
    estimates (the paired few-shot differences)."""

    resamples: int = N_BOOT
    level: float = LEVEL
    seed: int = DEFAULT_SEED
    method: str = "percentile bootstrap over samples (scores.aggregate)"


class Counts(BaseModel):
    """How many samples a row rests on, and what happened to them."""

    samples: int = 0  # run records inside the window (one per sample; resumed duplicates merged)
    scored: int = 0  # samples with at least one valid score
    errors: int = 0  # samples whose generation failed (RunRecord.error, not skipped)
    truncated: int = 0  # samples whose input was cut (tokens_cut > 0)
    truncated_pct: float = 0.0  # truncated / samples * 100
    skipped: int = 0  # samples the runner did not send (RunRecord.skipped: too long under --on-overflow skip)
    not_run: int | None = None  # round samples of this task/setting/split with no run record (None: round unknown)
    outside_window: int = 0  # run records excluded by the window
    by_split: dict[str, int] = Field(default_factory=dict)
    # a repeated run (`run --epochs N`): the epochs it has records for; `errors` then counts (sample, epoch) pairs
    # without an answer, the other counts distinct samples. Left out of the JSON for one epoch.
    epochs: int = Field(default=1, exclude_if=lambda n: n == 1)


class ResultRow(BaseModel):
    round: str
    round_manifest_sha256: str
    model: str  # model spec as given to `academiceval run`
    label: str  # model plus input variant, as shown in tables
    backend: str
    base_url: str | None = None
    options: dict[str, object] = Field(default_factory=dict)
    context_length: int | None = None
    rag: dict[str, object] | None = None
    probe: str | None = None
    package_version: str = ""
    run_dir: str
    task: str
    setting: str
    counts: Counts = Field(default_factory=Counts)
    mean_input_tokens: float | None = None
    mean_output_tokens: float | None = None
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)  # results key (see metric_key_map) -> summary


class Results(BaseModel):
    """The whole report as data. Written as `results.json`; `Results.read` loads it back unchanged."""

    schema_version: Literal[1] = SCHEMA_VERSION
    generated_at: str = Field(default_factory=now_iso)
    package_version: str = __version__
    window: Window = Field(default_factory=Window)
    split: str | None = None  # only samples of this split (None: all splits present in the runs)
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    runs: list[str] = Field(default_factory=list)
    rows: list[ResultRow] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # unreadable lines, unknown rounds, ... (never fatal)
    notes: list[str] = Field(default_factory=list)  # what a reader should know: uneven splits, low-n cells
    paired: list[PairedDiff] = Field(default_factory=list)  # adjacent models per table (report.paired, issue 15)
    contamination: list[ContaminationGap] = Field(default_factory=list)  # report.contamination (issue 15)
    ladders: list[Ladder] = Field(default_factory=list)  # context ladders, every rung (report.ladder, issue 15)
    effective_length: dict[str, dict[str, int]] = Field(default_factory=dict)  # model -> task -> tokens
    by_date: list[DateSeries] = Field(default_factory=list)  # multiple-choice scores by paper date (report.by_date)

    # ---- files ----------------------------------------------------------------------------------
    def write(self, path: str | Path) -> Path:
        p = Path(path)
        if p.is_dir() or p.suffix != ".json":
            p = p / RESULTS_FILE
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(p)
        return p

    @classmethod
    def read(cls, path: str | Path) -> Results:
        p = Path(path)
        if p.is_dir():
            p = p / RESULTS_FILE
        return cls.model_validate_json(p.read_text(encoding="utf-8"))

    # ---- views ----------------------------------------------------------------------------------
    def tasks(self) -> list[str]:
        return sorted({r.task for r in self.rows}, key=lambda t: (task_order(t), t))

    def settings(self, task: str | None = None) -> list[str]:
        return sorted({r.setting for r in self.rows if task is None or r.task == task}, key=setting_sort_key)

    def labels(self) -> list[str]:
        return sorted({r.label for r in self.rows})

    def metric_keys(self, task: str | None = None) -> list[str]:
        keys = {k for r in self.rows if task is None or r.task == task for k in r.metrics}
        return sorted(keys, key=metric_sort_key)

    def primary_metric(self, task: str | None = None, prefer: str | None = None) -> str | None:
        """The metric that ranks models: `prefer` (exact key or prefix) if present, else ROUGE-L first."""
        keys = self.metric_keys(task)
        if prefer:
            for k in keys:
                if k == prefer or k.startswith(prefer):
                    return k
        spec = find_spec(task)  # a task's own metric ranks it: multiple choice by accuracy, L-Eval by its metric
        for own in spec.default_metrics if spec is not None else ():
            for k in keys:
                if k == own or k.startswith(f"{own}@"):
                    return k
        return keys[0] if keys else None

    def ranked(self, task: str, setting: str, metric: str) -> list[ResultRow]:
        """Rows of one task and setting, best first on `metric`'s primary value; unscored rows last."""
        rows = [r for r in self.rows if r.task == task and r.setting == setting]

        def key(r: ResultRow) -> tuple[int, float, str]:
            m = r.metrics.get(metric)
            mean = m.main.mean if m else None
            return (0, -mean, r.label) if mean is not None else (1, 0.0, r.label)

        return sorted(rows, key=key)


def metric_sort_key(key: str) -> tuple[int, str]:
    """ROUGE-L first (the paper's headline metric), then other ROUGE, BERTScore, judge, the rest."""
    k = key.lower()
    for i, prefix in enumerate(("rouge-l", "rougel", "rouge", "bertscore", "judge")):
        if k.startswith(prefix):
            return (i, k)
    return (9, k)


def setting_sort_key(setting: str) -> tuple[int, str]:
    """zero-shot, then random, co-author, mixed, then anything else (context budgets...)."""
    s = setting.lower()
    for i, prefix in enumerate(("zero", "random", "coauthor", "co-author", "mixed")):
        if s.startswith(prefix):
            return (i, s)
    return (9, s)


def metric_key_map(runs: Iterable[RunData]) -> dict[tuple[str, str], str]:
    """Map (metric, config_hash) to the key used in results: the name, or name@hash when the same name was
    scored with several configurations anywhere in the report (so keys stay comparable across runs)."""
    by_name: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        for _, metric, h in run.scores:
            by_name[metric].add(h)
    out = {}
    for name, hashes in by_name.items():
        for h in hashes:
            out[(name, h)] = name if len(hashes) == 1 else f"{name}@{h[:8]}"
    return out


def _metric_results(
    records: list[ScoreRecord],
    mkeys: Mapping[tuple[str, str], str],
    *,
    after: date | None,
    split: str | None,
    resamples: int,
    run: str,
) -> dict[str, MetricSummary]:
    """Means and intervals from `scores.aggregate` (the same numbers `academiceval score` prints), keyed for
    the report (name, or name@hash when one name was scored with several configurations)."""
    out = {
        mkeys[(m.metric, m.config_hash)]: m
        for m in aggregate(records, after=after, split=split, resamples=resamples, run=run)
    }
    return dict(sorted(out.items(), key=lambda kv: metric_sort_key(kv[0])))


def summarize_run(
    run: RunData,
    *,
    after: date | None = None,
    split: str | None = None,
    expected: Mapping[tuple[str, str], Sequence[tuple[str, date, str] | tuple[str, date, str, str]]] | None = None,
    bootstrap: BootstrapConfig | None = None,
    metric_keys: Mapping[tuple[str, str], str] | None = None,
) -> list[ResultRow]:
    """One ResultRow per task/setting of a run. `expected` lists the round's (sample_id, published, split)
    per (task, setting) so samples never run are counted as not run; `metric_keys` comes from
    `metric_key_map` over every run of the report."""
    bs = bootstrap or BootstrapConfig()
    spec = run.spec
    mkeys = metric_keys if metric_keys is not None else metric_key_map([run])
    groups: dict[tuple[str, str], list] = defaultdict(list)
    outside: dict[tuple[str, str], int] = defaultdict(int)
    outside_ids: dict[tuple[str, str], set[str]] = defaultdict(set)
    for rec in run.epoch_records.values():  # every epoch of a repeated run (one record per sample otherwise)
        if split and rec.split != split:
            continue
        if in_window(rec.published, after, rec.date_precision):
            groups[(rec.task, rec.setting)].append(rec)
        else:
            outside_ids[(rec.task, rec.setting)].add(rec.sample_id)
    for ts, ids_out in outside_ids.items():
        outside[ts] = len(ids_out)
    scores_by_sample: dict[str, list] = defaultdict(list)
    for (sid, _, _, _), sr in run.epoch_scores.items():
        scores_by_sample[sid].append(sr)

    have_ids = {sid for sid, _ in run.epoch_records}
    rows = []
    for ts in sorted(set(groups) | set(outside)):
        task, setting = ts
        recs = groups.get(ts, [])
        first = list({r.sample_id: r for r in recs}.values())  # one record per sample (its first epoch seen)
        n = len(first)
        truncated = len({r.sample_id for r in recs if r.tokens_cut > 0})
        by_split: dict[str, int] = defaultdict(int)
        for r in first:
            by_split[r.split] += 1
        not_run = None
        if expected is not None:
            # only the splits this run was asked for (the runner defaults to test): train/val samples a
            # test-only run never meant to answer are not missing
            run_splits = {split} if split else {r.split for r in run.records.values()}
            # (sample_id, published, split[, date_precision]): a year/month date counts as in the window only
            # if all of it lies after the cutoff, exactly as the run's own records are counted above
            not_run = sum(
                1
                for sid, pub, sp, *prec in expected.get(ts, ())
                if sid not in have_ids and in_window(pub, after, *prec[:1]) and sp in run_splits
            )
        ids = {r.sample_id for r in recs}
        # a fixed order (by sample, metric, config): the bootstrap resamples positions, so the same records must
        # always arrive in the same order for the same interval (set order varies between processes)
        mine = sorted(
            (sr for sid in ids for sr in scores_by_sample.get(sid, ())),
            key=lambda sr: (sr.sample_id, sr.metric, sr.config_hash, sr.epoch),
        )
        scored_ids = {sr.sample_id for sr in mine if not sr.error and sr.values}
        metrics = _metric_results(mine, mkeys, after=after, split=split, resamples=bs.resamples, run=run.label)
        ok = [r for r in recs if not r.error and not r.skipped]
        skipped = len({r.sample_id for r in recs if r.skipped})
        errors = sum(1 for r in recs if r.error and not r.skipped)  # (sample, epoch) pairs without an answer
        rows.append(
            ResultRow(
                round=spec.round,
                round_manifest_sha256=spec.round_manifest_sha256,
                model=spec.model,
                label=run.label,
                backend=spec.backend,
                base_url=spec.base_url,
                options=dict(spec.options),
                context_length=spec.context_length,
                rag=spec.rag,
                probe=spec.probe,
                package_version=spec.package_version,
                run_dir=str(run.path),
                task=task,
                setting=setting,
                counts=Counts(
                    samples=n,
                    scored=len(scored_ids),
                    errors=errors,
                    truncated=truncated,
                    truncated_pct=round(100.0 * truncated / n, 2) if n else 0.0,
                    skipped=skipped,
                    not_run=not_run,
                    outside_window=outside.get(ts, 0),
                    by_split=dict(sorted(by_split.items())),
                    epochs=len({r.epoch for r in recs}) or 1,
                ),
                # backends that do not count tokens record 0: report "unknown" rather than a mean of zeros
                mean_input_tokens=(sum(r.input_tokens for r in ok) / len(ok))
                if any(r.input_tokens for r in ok)
                else None,
                mean_output_tokens=(sum(r.output_tokens for r in ok) / len(ok)) if ok else None,
                metrics=metrics,
            )
        )
    return rows


def build_results(
    runs: str | Path | Iterable[str | Path] | Iterable[RunData],
    *,
    after: date | None = None,
    after_reason: str | None = None,
    split: str | None = None,
    round_name: str | None = None,
    rounds_dir: str | Path | None = None,
    bootstrap: BootstrapConfig | None = None,
) -> Results:
    """Summarize saved runs into a `Results` document.

    `runs` is a runs directory (searched for run directories), a list of run directories, or already
    loaded `RunData`. `round_name` keeps only runs of that round. `rounds_dir` (default: the `rounds/`
    sibling of a `<home>/runs` tree, when it exists) lets the report count round samples that were never run.
    """
    bs = bootstrap or BootstrapConfig()
    if isinstance(runs, (str, Path)):
        runs = [runs]
    items = list(runs)
    loaded: list[RunData] = [r for r in items if isinstance(r, RunData)]
    paths = [p for p in items if not isinstance(p, RunData)]
    for d in find_run_dirs(paths):
        loaded.append(load_run(d))
    if round_name:
        loaded = [r for r in loaded if r.spec.round == round_name]
    res = Results(window=Window(after=after, reason=after_reason), split=split, bootstrap=bs)
    cache: dict[str, Mapping | None] = {}
    mkeys = metric_key_map(loaded)
    for run in sorted(loaded, key=lambda r: (r.spec.round, r.label, str(r.path))):
        res.runs.append(str(run.path))
        res.problems.extend(f"{run.path}: {b}" for b in run.bad_lines)
        rname = run.spec.round
        if rname not in cache:
            cache[rname] = expected_samples(rname, rounds_dir=rounds_dir, run_dir=run.path, problems=res.problems)
            res.notes.extend(round_notes(rname, rounds_dir=rounds_dir, run_dir=run.path))
        res.rows.extend(
            summarize_run(run, after=after, split=split, expected=cache[rname], bootstrap=bs, metric_keys=mkeys)
        )
    return res
