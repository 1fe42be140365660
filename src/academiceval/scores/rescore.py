"""Score saved runs without regenerating: `score_runs(run_dirs, metrics=[...])`.

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
from datetime import date
from pathlib import Path
from typing import Any

from academiceval.errors import AcademicEvalError
from academiceval.runs.models import RunRecord, RunSpec
from academiceval.scores import registry
from academiceval.scores.aggregate import aggregate
from academiceval.scores.models import MetricSummary, ScoreRecord
from academiceval.scores.registry import MetricOptions, RunJob, Scorer

SCORES_FILE = "scores.jsonl"
Progress = Callable[[str, int, int], None]  # (description, done, total)


class ScoreError(AcademicEvalError):
    """A run directory cannot be scored as asked."""

    code = "score"


@dataclass
class RunScoreResult:
    run_dir: Path
    model: str
    written: dict[str, int] = field(default_factory=dict)  # metric -> new records
    skipped: dict[str, int] = field(default_factory=dict)  # metric -> already scored
    errors: dict[str, int] = field(default_factory=dict)  # metric -> records with an error
    summary: list[MetricSummary] = field(default_factory=list)  # aggregate() over this run's scores


def read_run_dir(run_dir: Path) -> tuple[RunSpec, dict[str, RunRecord]]:
    from academiceval.runs.records import read_run, read_spec

    spec = read_spec(run_dir)
    if spec is None:
        raise ScoreError(f"{run_dir} has no run.json", hint="pass a run directory written by `academiceval run`")
    recs = {sid: r for sid, r in read_run(run_dir).items()}
    return spec, recs


def read_scores(run_dir: Path) -> list[ScoreRecord]:
    path = Path(run_dir) / SCORES_FILE
    if not path.exists():
        return []
    out: list[ScoreRecord] = []
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # torn tail of an interrupted write
            try:
                out.append(ScoreRecord.model_validate_json(raw))
            except ValueError:
                continue
    return out


def find_round_dir(run_dir: Path, spec: RunSpec, round_dir: Path | None, home: Path | None) -> Path:
    if round_dir is not None:
        return Path(round_dir)
    candidates = []
    if home is not None:
        candidates.append(Path(home) / "rounds" / spec.round)
    run_dir = Path(run_dir).resolve()
    if len(run_dir.parents) >= 3:  # <home>/runs/ROUND/MODEL
        candidates.append(run_dir.parents[2] / "rounds" / spec.round)
    for c in candidates:
        if (c / "manifest.json").is_file():
            return c
    raise ScoreError(
        f"cannot find round {spec.round} for {run_dir} (looked in {', '.join(map(str, candidates)) or 'nowhere'})",
        hint="pass --round-dir, or --home of the workspace the run belongs to",
    )


def load_labels(round_dir: Path) -> dict[str, Any]:
    """sample_id → Sample (with its label) for every sample of the round."""
    from academiceval.rounds.io import load_round

    loaded = load_round(round_dir)
    return {s.sample_id: s for s in loaded.samples()}


def _append(path: Path, records: Sequence[ScoreRecord]) -> None:
    if not records:
        return
    with path.open("a", encoding="utf-8") as fh:
        for r in records:
            fh.write(r.model_dump_json() + "\n")
        fh.flush()


def score_runs(
    run_dirs: Sequence[str | Path],
    *,
    metrics: Sequence[str] | None = None,
    round_dir: str | Path | None = None,
    home: str | Path | None = None,
    judge: Any = None,
    against: str | Path = "reference",
    bertscore_model: str = "all-MiniLM-L6-v2",
    layer: int | None = None,
    bertscore_options: dict[str, Any] | None = None,
    after: date | None = None,
    cache: Any = None,
    progress: Progress | None = None,
    batch_size: int = 64,
) -> list[RunScoreResult]:
    """Score every run directory; returns per run the counts and `aggregate()` of its scores in the window.

    `judge`: a Backend or a model spec for `load_backend` (required for the "judge" metric).
    `against`: "reference" (the round's label) or another run directory (pairwise: same sample ids).
    `cache`: a response cache for judge calls; default the runner's cache in the workspace when `home` is known.
    `metrics`: default rouge-l and bertscore, plus judge when a judge is given.
    """
    if metrics is None:
        metrics = ["rouge-l", "bertscore", *(["judge"] if judge is not None else [])]
    chosen = registry.resolve(metrics, judge=judge)
    opts = MetricOptions(
        bertscore_model=bertscore_model,
        layer=layer,
        bertscore_options=dict(bertscore_options or {}),
        judge=judge,
        against=against,
        cache=cache,
        home=Path(home) if home else None,
        batch_size=batch_size,
    )
    scorers: dict[str, Scorer] = {}  # built on first use, kept across runs (a loaded model is loaded once)
    results: list[RunScoreResult] = []
    label_cache: dict[Path, dict[str, Any]] = {}
    for rd in map(Path, run_dirs):
        spec, records = read_run_dir(rd)
        rdir = find_round_dir(rd, spec, Path(round_dir) if round_dir else None, Path(home) if home else None)
        if rdir not in label_cache:
            label_cache[rdir] = load_labels(rdir)
        existing = read_scores(rd)
        res = RunScoreResult(run_dir=rd, model=spec.model)
        out_path = rd / SCORES_FILE
        job = RunJob(
            spec=spec,
            run_dir=rd,
            samples=label_cache[rdir],
            recs=sorted(records.values(), key=lambda r: r.sample_id),
            done={(s.sample_id, s.metric, s.config_hash, s.details.get("output_sha256")) for s in existing},
            emit=lambda recs, _p=out_path: _append(_p, recs),
            read_run=lambda p: read_run_dir(p)[1],
            progress=progress,
            skipped=res.skipped,
        )
        for metric in chosen:
            scorer = scorers.get(metric.name)
            if scorer is None:
                scorer = scorers[metric.name] = metric.build(replace(opts, home=opts.home or _home_of(rd)))
            job.needs = metric.needs
            new = scorer.score_run(job)
            res.written[scorer.metric_name] = len(new)
            res.errors[scorer.metric_name] = sum(1 for r in new if r.error)
        res.summary = aggregate(read_scores(rd), after=after, run=spec.model)
        results.append(res)
    return results


def _home_of(run_dir: Path) -> Path | None:
    """The workspace a run directory lives in (`<home>/runs/ROUND/MODEL`), if it looks like one."""
    parents = Path(run_dir).resolve().parents
    return parents[2] if len(parents) >= 3 and parents[1].name == "runs" else None
