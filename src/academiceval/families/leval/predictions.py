"""Prediction files made elsewhere (L-Eval's `*.pred.jsonl`) imported as a run, so they are scored, judged,
reported and compared like any run of ours (`score-predictions` = import + `score`; `judge-predictions` = import +
`score --metrics judge --against RUN`).

One file becomes one round and one run directory in a workspace:

    rounds/pred-STEM-SHA/        the file's items as `Sample`s of the L-Eval family: setting = the task id (the file
                                 stem or --task), `instruction` = the query, label = `gt`, the row's evaluation tag
    runs/pred-STEM-SHA/MODEL/    run.json (backend "predictions", model = the `*_pred` key) + one RunRecord per row
                                 (output = output_raw = the prediction)

SHA is the sha256 of the file's bytes, so importing the same file again finds the same round and run (nothing is
written twice; an interrupted import is completed; scores already written are reused), and a changed file is a
new round. A sample id is `pred/` + sha256(query, gt) — what L-Eval's `llm_eval.py` pairs two models' answers
by — so runs imported from different models' files of the same questions pair up for the judge; the n-th repeat
of one (query, gt) in a file gets `-n`.

The file-level L-Eval numbers (`leval_file_summary`) are L-Eval's own aggregation (`scoring.score_rows`:
the rounding, per-part averages, the last row's evaluation tag, unknown task ids) over the imported run's rows
in file order, so they equal what scoring the file directly gave.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.families.leval.items import MAX_NEW_TOKENS, TASKS
from academiceval.families.leval.samples import RELEASED, TEXT_FIELDS
from academiceval.families.leval.scoring import (
    LEvalResult,
    Protocol,
    prediction_key,
    read_prediction_file,
    score_rows,
    task_id,
)
from academiceval.store.artifacts import (
    MANIFEST,
    Layout,
    RecordWriter,
    artifact_name,
    load_round,
    new_record,
    read_run_records,
    read_run_spec,
    safe_name,
    write_manifest,
    write_round_config,
    write_run_spec,
)
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import ConfigInfo, RoundManifest, RunSpec, Sample, SplitWindows

FAMILY = "leval"
BACKEND = "predictions"


@dataclass
class ImportedRun:
    """One prediction file as a run: where it lives and what the file held."""

    source: str  # the path as given
    task: str  # the L-Eval task id used (file stem or --task)
    key: str  # the row field holding the prediction (L-Eval's rule: the first "*_pred" key of the first row)
    rows: int
    bad_lines: int
    round_dir: Path | None = None  # None for a file with no rows (nothing to import)
    run_dir: Path | None = None
    sample_ids: list[str] = field(default_factory=list)  # in file order


def _sample_id(query: str, gt: str, seen: dict[str, int]) -> str:
    base = "pred/" + sha256_hex(f"{query}\x1f{gt}")[:16]
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}-{seen[base]}"


def _samples(rows: list[dict[str, Any]], task: str, round_name: str, source: str) -> list[Sample]:
    """One Sample per row, in file order (the item's `question_index` is the row number)."""
    seen: dict[str, int] = {}
    out = []
    config = artifact_name(FAMILY, task)
    for i, row in enumerate(rows):
        query, gt = str(row.get("query", "")), str(row.get("gt", ""))
        sid = _sample_id(query, gt, seen)
        tag = row.get("evaluation")
        item = {
            "sample_id": sid,
            "family": FAMILY,
            "doc_index": i,
            "question_index": i,
            "split": "test",
            "evaluation": "" if tag is None else str(tag),
            "source": source,
            "length_words": len(gt.split()),
            "max_new_tokens": MAX_NEW_TOKENS,
        }
        out.append(
            Sample(
                sample_id=sid,
                round=round_name,
                task=FAMILY,
                setting=task,
                setting_name=config,
                split="test",
                arxiv_id="",
                paper_id=f"{FAMILY}/{task}/{i}",
                published=RELEASED,
                fields={"document": "", "instruction": query, "item": json.dumps(item, sort_keys=True)},
                label=gt,
            )
        )
    return out


def _write_round(round_dir: Path, samples: list[Sample], task: str, source: str, sha: str) -> None:
    """The round, staged in a temp sibling and renamed into place (a crash leaves no half round)."""
    tmp = round_dir.with_name(f".{round_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    config = artifact_name(FAMILY, task)
    info = ConfigInfo(task=FAMILY, setting=task, setting_name=config, counts={"test": len(samples)})
    write_round_config(tmp, info, iter(samples), TEXT_FIELDS)
    manifest = RoundManifest(
        round=round_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(),
        configs={config: info},
        counts={config: dict(info.counts)},
        build_options={"family": FAMILY, "source": source, "imported": "prediction file", "sha256": sha},
    )
    write_manifest(tmp, manifest)
    try:
        os.replace(tmp, round_dir)
    except OSError:  # another import of the same file won the race: its round is the same
        shutil.rmtree(tmp, ignore_errors=True)
        if not (round_dir / MANIFEST).exists():
            raise


def import_prediction_file(path: str | Path, home: str | Path, *, task: str | None = None) -> ImportedRun:
    """Import one prediction file into the workspace at `home` as a round + run (see the module doc). Raises
    OSError for an unreadable file and ValueError for rows without a `*_pred` field, as scoring it did."""
    source = str(path)
    raw = Path(path).read_bytes()
    rows, bad = read_prediction_file(path)
    rows = [r for r in rows if isinstance(r, dict)]
    tid = task or task_id(path)
    key = prediction_key(rows[0], path) if rows else ""
    imported = ImportedRun(source=source, task=tid, key=key, rows=len(rows), bad_lines=bad)
    if not rows:
        return imported
    sha = sha256_hex(raw)
    layout = Layout.of(home)
    name = safe_name(f"pred-{task_id(path)}-{tid}-{sha[:12]}" if task else f"pred-{tid}-{sha[:12]}")
    round_dir = layout.round_dir(name)
    samples = _samples(rows, tid, name, Path(path).name)
    if not (round_dir / MANIFEST).exists():
        layout.ensure(layout.rounds_dir)
        _write_round(round_dir, samples, tid, source, sha)
    run_dir = layout.run_dir(name, safe_name(key.removesuffix("_pred") or "predictions"))
    if read_run_spec(run_dir) is None:
        write_run_spec(
            run_dir,
            RunSpec(
                round=name,
                round_manifest_sha256=sha256_hex((round_dir / MANIFEST).read_bytes()),
                model=f"{BACKEND}/{key.removesuffix('_pred') or 'predictions'}",
                backend=BACKEND,
                package_version=__version__,
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                prompt_preparation=f"imported from {Path(path).name}",
            ),
        )
    have = read_run_records(run_dir)
    missing = [(s, r) for s, r in zip(samples, rows, strict=True) if s.sample_id not in have]
    if missing:  # a first import, or one that was interrupted: the rows not yet written
        writer = RecordWriter(run_dir)
        try:
            writer.append_many(
                [
                    new_record(
                        sample_id=s.sample_id,
                        task=s.task,
                        setting=s.setting,
                        split=s.split,
                        arxiv_id="",
                        published=s.published,
                        prompt_sha256="",
                        output_raw=str(r.get(key) or ""),
                        output=str(r.get(key) or ""),
                        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
                    )
                    for s, r in missing
                ]
            )
        finally:
            writer.close()
    imported.round_dir, imported.run_dir = round_dir, run_dir
    imported.sample_ids = [s.sample_id for s in samples]
    return imported


def task_known(task: str) -> bool:
    return task in TASKS


def leval_file_summary(imported: ImportedRun, protocol: Protocol = "leval-compatible") -> LEvalResult:
    """L-Eval's numbers for an imported file: `score_rows` over the run's rows in file order (query, gt, the
    prediction, the evaluation tag), as scoring the file itself gave."""
    rows: list[dict[str, Any]] = []
    if imported.run_dir is not None and imported.round_dir is not None:
        samples = load_round(imported.round_dir).samples_by_id()
        records = read_run_records(imported.run_dir)
        for sid in imported.sample_ids:
            s, rec = samples[sid], records.get(sid)
            tag = json.loads(s.fields["item"]).get("evaluation") or None
            row = {"query": s.fields.get("instruction", ""), "gt": s.label, "evaluation": tag}
            row[imported.key] = rec.output_raw if rec is not None else ""
            rows.append(row)
    result = score_rows(rows, imported.task, protocol)
    result.bad_lines = imported.bad_lines
    return result
