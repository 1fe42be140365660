"""Score saved runs without regenerating: `score_runs(run_dirs, metrics=[...])`.

Each run directory (`runs/ROUND/MODEL/`, written by the runner) holds `run.json` and per task-setting
RunRecord files; the reference labels live in the round (`rounds/ROUND/`), found from `run.json` unless
`round_dir` is given. Every sample × metric becomes one ScoreRecord line appended to `<run_dir>/scores.jsonl`,
tagged with the metric's configuration hash. A sample already scored with the same configuration hash and
the same output is skipped, so an interrupted scoring resumes and a changed output (re-run sample) is
re-scored.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.runs.models import RunRecord, RunSpec
from academiceval.scores.aggregate import aggregate
from academiceval.scores.models import ScoreRecord

SCORES_FILE = "scores.jsonl"
METRICS = ("rouge-l", "rouge-1", "rouge-2", "rouge-lsum", "bertscore", "judge")
_ROUGE_TYPES = {"rouge-l": "rougeL", "rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-lsum": "rougeLsum"}
Progress = Callable[[str, int, int], None]  # (description, done, total)


class ScoreError(AcademicEvalError):
    """A run directory cannot be scored as asked."""

    code = "score"


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class RunScoreResult:
    run_dir: Path
    model: str
    written: dict[str, int] = field(default_factory=dict)  # metric -> new records
    skipped: dict[str, int] = field(default_factory=dict)  # metric -> already scored
    errors: dict[str, int] = field(default_factory=dict)  # metric -> records with an error
    summary: dict[str, Any] = field(default_factory=dict)  # aggregate() over this run's scores


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


def _base(rec: RunRecord, metric: str, chash: str, **kw: Any) -> ScoreRecord:
    return ScoreRecord(
        sample_id=rec.sample_id,
        task=rec.task,
        setting=rec.setting,
        split=rec.split,
        published=rec.published,
        metric=metric,
        config_hash=chash,
        **kw,
    )


@dataclass
class _RunContext:
    """What scoring one run directory needs: which samples are done, labels, counters."""

    spec: RunSpec
    samples: dict[str, Any]
    done: set[tuple[str, str, str, Any]]
    res: RunScoreResult
    recs: list[RunRecord]

    def todo(self, metric: str, chash: str) -> list[RunRecord]:
        pending = [r for r in self.recs if (r.sample_id, metric, chash, _sha(r.output)) not in self.done]
        self.res.skipped[metric] = self.res.skipped.get(metric, 0) + len(self.recs) - len(pending)
        return pending

    def label_of(self, rec: RunRecord) -> str | None:
        s = self.samples.get(rec.sample_id)
        return None if s is None else s.label

    def unusable(self, rec: RunRecord, metric: str, chash: str) -> ScoreRecord | None:
        """A record that cannot be scored (no label, generation error): recorded with its reason."""
        if self.label_of(rec) is None:
            why = f"sample {rec.sample_id} is not in round {self.spec.round}"
        elif rec.error or rec.skipped:
            why = f"no output to score: {rec.error or 'skipped (too long)'}"
        else:
            return None
        return _base(rec, metric, chash, error=why, details={"output_sha256": _sha(rec.output)})


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
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}", hint=f"choose from {', '.join(METRICS)}")
    if "judge" in metrics and judge is None:
        raise ConfigError("the judge metric needs a judge model", hint="pass --judge SPEC, e.g. openai/gpt-4o-mini")
    results: list[RunScoreResult] = []
    label_cache: dict[Path, dict[str, Any]] = {}
    bert = None
    judge_obj = None
    for rd in map(Path, run_dirs):
        spec, records = read_run_dir(rd)
        rdir = find_round_dir(rd, spec, Path(round_dir) if round_dir else None, Path(home) if home else None)
        if rdir not in label_cache:
            label_cache[rdir] = load_labels(rdir)
        samples = label_cache[rdir]
        existing = read_scores(rd)
        done = {(s.sample_id, s.metric, s.config_hash, s.details.get("output_sha256")) for s in existing}
        res = RunScoreResult(run_dir=rd, model=spec.model)
        out_path = rd / SCORES_FILE
        recs = sorted(records.values(), key=lambda r: r.sample_id)

        ctx = _RunContext(spec, samples, done, res, recs)
        todo, label_of, unusable = ctx.todo, ctx.label_of, ctx.unusable

        for metric in metrics:
            new: list[ScoreRecord] = []
            if metric in _ROUGE_TYPES:
                from academiceval.scores.rouge import FastRouge

                rtype = _ROUGE_TYPES[metric]
                cfg = {"metric": "rouge", "type": rtype, "use_stemmer": True, "semantics": "rouge-score 0.1.2"}
                chash = config_hash(cfg)
                scorer = FastRouge([rtype], use_stemmer=True)
                pending = todo(metric, chash)
                for k, rec in enumerate(pending):
                    bad = unusable(rec, metric, chash)
                    if bad is None:
                        s = scorer.score(label_of(rec) or "", rec.output)[rtype]
                        bad = _base(rec, metric, chash, values=s.as_dict(), details={"output_sha256": _sha(rec.output)})
                    new.append(bad)
                    if progress and (k % 200 == 0 or k == len(pending) - 1):
                        progress(f"{spec.model} {metric}", k + 1, len(pending))
            elif metric == "bertscore":
                from academiceval.scores.bertscore import BertScorer

                if bert is None:
                    bert = BertScorer(bertscore_model, layer=layer, **(bertscore_options or {}))
                cfg = bert.config()
                pending = todo(bert.metric_name, config_hash(cfg))
                chash = config_hash(cfg)
                ok = [r for r in pending if unusable(r, bert.metric_name, chash) is None]
                new.extend(b for r in pending if (b := unusable(r, bert.metric_name, chash)) is not None)
                _append(out_path, new)  # written as we go: an interrupted scoring resumes after the last chunk
                written = len(new)
                idf_refs = [label_of(r) or "" for r in recs] if bert.idf else None
                for start in range(0, len(ok), batch_size):
                    chunk = ok[start : start + batch_size]
                    scored = bert.score(
                        [r.output for r in chunk], [label_of(r) or "" for r in chunk], idf_refs=idf_refs
                    )
                    for rec, s in zip(chunk, scored, strict=True):
                        details = {
                            "output_sha256": _sha(rec.output),
                            "cand_tokens": s.cand_tokens,
                            "ref_tokens": s.ref_tokens,
                            "cand_tokens_cut": s.cand_cut,
                            "ref_tokens_cut": s.ref_cut,
                        }
                        new.append(_base(rec, bert.metric_name, chash, values=s.values(), details=details))
                    _append(out_path, new[written:])
                    written = len(new)
                    if progress:
                        progress(f"{spec.model} {bert.metric_name}", min(start + batch_size, len(ok)), len(ok))
                metric = bert.metric_name
                res.written[metric] = len(new)
                res.errors[metric] = sum(1 for r in new if r.error)
                continue
            else:  # judge: each pair's record is appended as soon as both orders are judged
                judge_obj = judge_obj or _make_judge(judge, cache, home or _home_of(rd))
                new.extend(
                    _judge_run(
                        judge_obj,
                        spec,
                        recs,
                        samples,
                        against,
                        todo,
                        unusable,
                        progress,
                        lambda r, _p=out_path: _append(_p, [r]),
                    )
                )
                metric = _judge_metric(judge_obj, against)
                res.written[metric] = len(new)
                res.errors[metric] = sum(1 for r in new if r.error)
                continue
            _append(out_path, new)
            res.written[metric] = len(new)
            res.errors[metric] = sum(1 for r in new if r.error)
        res.summary = aggregate(read_scores(rd), after=after)
        results.append(res)
    return results


def _home_of(run_dir: Path) -> Path | None:
    """The workspace a run directory lives in (`<home>/runs/ROUND/MODEL`), if it looks like one."""
    parents = Path(run_dir).resolve().parents
    return parents[2] if len(parents) >= 3 and parents[1].name == "runs" else None


def _make_judge(judge: Any, cache: Any, home: str | Path | None) -> Any:
    from academiceval.scores.judge import Judge

    backend = judge
    if isinstance(judge, str):
        from academiceval.models.registry import load_backend

        backend = load_backend(judge)
    if cache is None and home is not None:
        try:
            from academiceval.models.cache import ResponseCache

            cache = ResponseCache.in_workspace(Path(home))
        except ImportError:  # pragma: no cover - the runner's cache is part of the package
            cache = None
    return Judge(backend, cache=cache)


def _judge_metric(judge: Any, against: str | Path) -> str:
    who = judge.backend.model.replace("/", "_")
    vs = "reference" if str(against) == "reference" else Path(against).name
    return f"judge-{who}-vs-{vs}"


def _judge_run(
    judge: Any,
    spec: RunSpec,
    recs: list[RunRecord],
    samples: dict[str, Any],
    against: str | Path,
    todo: Callable[[str, str], list[RunRecord]],
    unusable: Callable[[RunRecord, str, str], ScoreRecord | None],
    progress: Progress | None,
    emit: Callable[[ScoreRecord], None],
) -> list[ScoreRecord]:
    """Judge every pending sample; `emit` writes each record as soon as it exists (resumable)."""
    metric = _judge_metric(judge, against)
    others: dict[str, RunRecord] | None = None
    cfg = judge.config() | {"against": "reference" if str(against) == "reference" else Path(against).name}
    if str(against) != "reference":
        _, others = read_run_dir(Path(against))
        cfg["against_outputs"] = config_hash({k: _sha(v.output) for k, v in sorted(others.items())})
    chash = config_hash(cfg)
    pending = todo(metric, chash)
    out: list[ScoreRecord] = []
    jobs: list[tuple[RunRecord, str]] = []
    for rec in pending:
        bad = unusable(rec, metric, chash)
        if bad is None and others is not None:
            other = others.get(rec.sample_id)
            if other is None or other.error or not other.output:
                why = f"no output of {Path(against).name} for this sample"
                bad = _base(rec, metric, chash, error=why, details={"output_sha256": _sha(rec.output)})
            else:
                jobs.append((rec, other.output))
                continue
        if bad is not None:
            emit(bad)
            out.append(bad)
            continue
        jobs.append((rec, samples[rec.sample_id].label))

    async def run_all() -> list[ScoreRecord]:
        done = 0

        async def one(rec: RunRecord, other_text: str) -> ScoreRecord:
            nonlocal done
            title = samples[rec.sample_id].fields.get("title", "") if rec.sample_id in samples else ""
            pr = await judge.judge_pair(rec.task, title, rec.output, other_text)
            done += 1
            if progress:
                progress(f"{spec.model} {metric}", done, len(jobs))
            details = {
                "output_sha256": _sha(rec.output),
                "orders": [
                    {"candidate_first": j.candidate_first, "verdicts": j.raw, "repaired": j.repaired, "error": j.error}
                    for j in pr.judgments
                ],
            }
            values = pr.values()
            err = None if pr.judged else "; ".join(j.error or "" for j in pr.judgments)
            record = _base(rec, metric, chash, values=values, details=details, error=err)
            emit(record)
            return record

        try:
            return list(await asyncio.gather(*(one(r, o) for r, o in jobs)))
        finally:
            close = getattr(judge.backend, "aclose", None)
            if close is not None:
                await close()

    if jobs:
        out.extend(asyncio.run(run_all()))
    return out
