"""Reading saved run directories (RunSpec + RunRecord lines + ScoreRecord lines) for reporting.

Run and score files are append-only: a resumed run or a re-scoring appends lines rather than rewriting
them, so the *last* line for a sample (and for a sample × metric configuration) is the current one. A
malformed line is counted and reported, never fatal: one torn write must not hide a whole leaderboard.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pydantic import ValidationError

from academiceval.errors import AcademicEvalError
from academiceval.runs.models import RunRecord, RunSpec
from academiceval.scores.models import ScoreRecord

RUN_SPEC = "run.json"
SCORES = "scores.jsonl"


class ReportError(AcademicEvalError):
    """Saved runs cannot be read or reported as asked."""

    code = "report"


@dataclass
class RunData:
    """One run directory, de-duplicated: the current record per sample and per sample × metric config."""

    path: Path
    spec: RunSpec
    records: dict[str, RunRecord] = field(default_factory=dict)  # sample_id -> record
    scores: dict[tuple[str, str, str], ScoreRecord] = field(default_factory=dict)  # (sample, metric, hash)
    bad_lines: list[str] = field(default_factory=list)  # "file:line: reason"

    @property
    def label(self) -> str:
        """How the run is named in tables: the model spec plus whatever changes its inputs."""
        s = self.spec
        extra = []
        if s.probe:
            extra.append(f"probe={s.probe}")
        if s.rag:
            extra.append("rag")
        if s.context_length:
            extra.append(f"ctx={s.context_length}")
        if s.length_instruction:
            extra.append("len-instr")
        return s.model + (f" [{', '.join(extra)}]" if extra else "")

    def task_settings(self) -> list[tuple[str, str]]:
        return sorted({(r.task, r.setting) for r in self.records.values()})


def _iter_jsonl(path: Path, bad: list[str]) -> Iterator[dict]:
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                bad.append(f"{path.name}:{i}: not JSON ({e.msg})")
                continue
            if isinstance(obj, dict):
                yield obj
            else:
                bad.append(f"{path.name}:{i}: not a JSON object")


def load_run(path: str | Path) -> RunData:
    """Load one run directory (`run.json`, `*.jsonl` run records, `scores.jsonl`)."""
    d = Path(path)
    spec_path = d / RUN_SPEC
    if not spec_path.is_file():
        raise ReportError("no run.json here", source=str(d), hint="pass a run directory written by `academiceval run`")
    try:
        spec = RunSpec.model_validate_json(spec_path.read_text(encoding="utf-8"))
    except ValidationError as e:
        raise ReportError(f"run.json does not match RunSpec: {e.errors()[0]['msg']}", source=str(spec_path)) from e
    run = RunData(path=d, spec=spec)
    for f in sorted(d.glob("*.jsonl")):
        if f.name == SCORES:
            continue
        for i, obj in enumerate(_iter_jsonl(f, run.bad_lines), 1):
            try:
                rec = RunRecord.model_validate(obj)
            except ValidationError as e:
                run.bad_lines.append(f"{f.name}:{i}: not a RunRecord ({e.errors()[0]['msg']})")
                continue
            run.records[rec.sample_id] = rec  # later lines (resume, retry) win
    sf = d / SCORES
    if sf.is_file():
        for i, obj in enumerate(_iter_jsonl(sf, run.bad_lines), 1):
            try:
                sr = ScoreRecord.model_validate(obj)
            except ValidationError as e:
                run.bad_lines.append(f"{SCORES}:{i}: not a ScoreRecord ({e.errors()[0]['msg']})")
                continue
            run.scores[(sr.sample_id, sr.metric, sr.config_hash)] = sr  # re-scoring appends; last wins
    return run


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories at or below each path (a run directory is one holding `run.json`), sorted, unique."""
    found: dict[Path, None] = {}
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise ReportError("path does not exist", source=str(p), hint="check --runs / --home")
        if (p / RUN_SPEC).is_file():
            found[p.resolve()] = None
            continue
        for spec in sorted(p.rglob(RUN_SPEC)):
            found[spec.parent.resolve()] = None
    return sorted(found)


def in_window(published: date, after: date | None) -> bool:
    """Papers first submitted strictly after `after` (a model's knowledge cutoff) are in the window."""
    return after is None or published > after
