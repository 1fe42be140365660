"""lm-evaluation-harness output (`--log_samples --output_path OUT`) → academiceval run directories, so
`academiceval score`, `report` and `compare` read what lm-eval generated (`academiceval lm-eval import OUT`).

lm-eval writes, per invocation, `results_<date>.json` and one `samples_<task>_<date>.jsonl` per task (under
`OUT/<model>/`). The tasks an academiceval export made carry their round in the task metadata and each doc
carries its sample, so every answer becomes the `RunRecord` the runner would have written (raw answer, answer
cleaned by `models.postprocess`, a blank answer as the `empty_answer` error), one run per round:
`runs/ROUND/lm-eval__<lm-eval model>__<model name>[+lie]/`.

What lm-eval actually sent is checked against the doc: the chat messages (`--apply_chat_template` with an API
model) must be exactly one user message holding the doc's prompt; a prompt a local chat template wrapped must
contain it. Anything else (a `--system_instruction`, `--num_fewshot`, an edited doc) is recorded, not hidden:
the record gets the sha256 of what was sent and the warning `prompt_not_the_rounds`, and the import counts them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.integrations.scoring import answer_record
from academiceval.store.artifacts import Layout, RecordWriter, locate_round, safe_name, write_run_spec
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import RunRecord, RunSpec, Sample
from academiceval.store.secrets import scrub
from academiceval.store.user_rows import read_json_rows
from academiceval.store.workspace import resolve_home

BACKEND = "lm-eval"
PROMPT_CHANGED = "prompt_not_the_rounds"  # RunRecord.warnings: lm-eval sent something else than the doc's prompt
ROUND_KEY = "academiceval_round"  # the task metadata key an export writes (integrations.lmeval.export)


@dataclass
class ImportedRun:
    round: str
    run_dir: Path
    model: str
    tasks: list[str] = field(default_factory=list)
    records: int = 0
    errors: int = 0  # blank answers (the runner's empty_answer)
    prompts_equal: int = 0  # what lm-eval sent is the doc's prompt (as a user message, or inside a chat template)
    prompts_changed: int = 0
    round_found: bool = True  # the round is in the workspace (else `score --round-dir` is needed)


@dataclass
class ImportReport:
    runs: list[ImportedRun] = field(default_factory=list)
    results_files: list[Path] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # why lines or tasks were not imported → count


def results_files(path: Path) -> list[Path]:
    """lm-eval results files under `path` (a results file itself, or a folder searched recursively): the newest
    per folder, since each lm-eval invocation writes its own and a folder holds one model's runs."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ConfigError(f"{path} does not exist", hint="pass lm-eval's --output_path folder or a results_*.json")
    newest: dict[Path, Path] = {}
    for f in sorted(path.rglob("results_*.json")):
        if f.parent not in newest or f.name > newest[f.parent].name:  # names end in lm-eval's ISO date
            newest[f.parent] = f
    if not newest:
        raise ConfigError(
            f"no lm-eval results_*.json under {path}", hint="run lm_eval with --log_samples --output_path DIR"
        )
    return sorted(newest.values())


def sent_prompt(arguments: Any, doc_prompt: str) -> tuple[str, bool]:
    """(sha256 of the prompt lm-eval sent, whether it is the doc's prompt). The first request argument is the
    chat messages as JSON (API models), a string a local chat template made, or the plain prompt."""
    first = arguments.get("gen_args_0", {}).get("arg_0") if isinstance(arguments, dict) else None
    if isinstance(first, list) and len(first) == 1:  # lm-eval's JsonChatStr, logged as a 1-tuple
        first = first[0]
    if not isinstance(first, str):
        return "", False
    try:
        messages = json.loads(first) if first.lstrip().startswith("[") else None
    except ValueError:
        messages = None
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        if messages == [{"role": "user", "content": doc_prompt}]:
            return sha256_hex(doc_prompt), True
        return sha256_hex("\n".join(str(m.get("content", "")) for m in messages)), False
    if first == doc_prompt or doc_prompt in first:  # plain, or wrapped by a local model's chat template
        return sha256_hex(doc_prompt), True
    return sha256_hex(first), False


def _read_lines(path: Path, skipped: Counter[str]) -> list[dict[str, Any]]:
    rows = []
    good, bad = read_json_rows(path)
    for b in bad:
        skipped[f"unreadable line ({Path(b.where).name}): {b.reason}"] += 1
    for row, _where in good:
        if not isinstance(row.get("doc"), dict) or "sample" not in row["doc"]:
            skipped["not an academiceval doc"] += 1
            continue
        rows.append(row)
    return rows


def _record(row: dict[str, Any], finished_at: str, imported: ImportedRun) -> RunRecord:
    doc = row["doc"]
    sample = Sample.model_validate_json(doc["sample"])
    filtered = row.get("filtered_resps") or [""]
    answer = filtered[0] if isinstance(filtered[0], str) else str(filtered[0])
    sha, same = sent_prompt(row.get("arguments"), doc["prompt"])
    imported.prompts_equal += same
    imported.prompts_changed += not same
    rec = answer_record(
        sample,
        answer,
        prompt_sha256=sha or doc.get("prompt_sha256", ""),
        empty_is_error=True,
        finished_at=finished_at,
        warnings=[] if same else [PROMPT_CHANGED],
        prompt_info={"lm_eval": {"doc_id": row.get("doc_id"), "doc_hash": row.get("doc_hash")}},
    )
    imported.errors += rec.error is not None
    return rec


def import_output(
    path: str | Path,
    *,
    home: str | Path | None = None,
    run_name: str | None = None,
    force: bool = False,
) -> ImportReport:
    """Import lm-eval's output under `path` into the workspace `home`: one run per (results file, round)."""
    layout = Layout.of(resolve_home(home))
    report = ImportReport()
    for rpath in results_files(Path(path)):
        rows, bad = read_json_rows(rpath)
        if bad or len(rows) != 1:  # not one JSON object (unreadable, deep, not text, a list)
            why = bad[0].reason if bad else "not one JSON object"
            report.skipped[f"unreadable results file {rpath.name}: {why}"] += 1
            continue
        results = rows[0][0]
        report.results_files.append(rpath)
        report.runs += _import_results(rpath, results, layout, run_name, force, report.skipped)
    if not report.runs:
        raise ConfigError(
            f"no academiceval task in the lm-eval output under {path}",
            hint="run lm_eval on a folder written by `academiceval export --format lm-eval`, with --log_samples",
        )
    return report


def _import_results(
    rpath: Path, results: dict[str, Any], layout: Layout, run_name: str | None, force: bool, skipped: Counter[str]
) -> list[ImportedRun]:
    date_id = rpath.stem.removeprefix("results_")
    cfg = results.get("config") if isinstance(results.get("config"), dict) else {}
    lm_model = str(cfg.get("model") or "model")
    model_name = str(results.get("model_name") or lm_model)
    by_round: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    for task, tcfg in configs.items():
        meta = tcfg.get("metadata") if isinstance(tcfg, dict) else None
        if not isinstance(meta, dict) or ROUND_KEY not in meta:
            skipped["task not written by academiceval"] += 1
            continue
        by_round.setdefault(str(meta[ROUND_KEY]), []).append((task, tcfg))
    finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    out = []
    for round_name, tasks in sorted(by_round.items()):
        meta = tasks[0][1].get("metadata") or {}
        lie = "+lie" if meta.get("academiceval_length_instruction") else ""  # as `academiceval run` names it
        name = run_name or safe_name(f"{BACKEND}/{lm_model}/{model_name}") + lie
        imported = ImportedRun(round=round_name, run_dir=layout.run_dir(round_name, name), model=model_name)
        records: list[RunRecord] = []
        for task, _tcfg in sorted(tasks):
            spath = rpath.parent / f"samples_{task}_{date_id}.jsonl"
            if not spath.is_file():
                skipped[f"no samples file for {task} (run lm_eval with --log_samples)"] += 1
                continue
            imported.tasks.append(task)
            for row in _read_lines(spath, skipped):
                try:
                    records.append(_record(row, finished_at, imported))
                except (ValidationError, KeyError, TypeError, ValueError) as e:  # one bad doc; the rest goes on
                    skipped[f"unreadable doc in {spath.name}: {type(e).__name__}"] += 1
        if not records:
            continue
        spec = RunSpec(
            round=round_name,
            round_manifest_sha256=str(meta.get("academiceval_round_manifest_sha256", "")),
            model=f"{BACKEND}/{lm_model}/{model_name}",
            backend=BACKEND,
            base_url=_base_url(cfg.get("model_args")),
            options=_options(tasks),
            package_version=__version__,
            created_at=_date(results.get("date")) or finished_at,
            prompt_preparation="academiceval export --format lm-eval (runs.prepare.PromptPreparer), sent by lm-eval",
            task_max_tokens={
                str((t.get("metadata") or {}).get("academiceval_task", n)): int(
                    (t.get("generation_kwargs") or {}).get("max_gen_toks", 0)
                )
                for n, t in tasks
            },
            updated_at=finished_at,
            config=scrub(
                {
                    "lm_eval_version": results.get("lm_eval_version"),
                    "lm_eval_model": lm_model,
                    "model_args": cfg.get("model_args"),
                    "tasks": [t for t, _ in tasks],
                    "results_file": str(rpath),
                    "system_instruction": results.get("system_instruction"),
                    "chat_template_sha": results.get("chat_template_sha"),
                }
            ),
        )
        _write_run(imported.run_dir, spec, records, force)
        imported.records = len(records)
        imported.round_found = locate_round(round_name, home=layout.home) is not None
        out.append(imported)
    return out


def _options(tasks: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The generation options lm-eval used (the tasks' generation_kwargs; the length per task is kept apart)."""
    kwargs = dict((tasks[0][1].get("generation_kwargs") or {}) if tasks else {})
    kwargs.pop("max_gen_toks", None)
    return kwargs


def _base_url(model_args: Any) -> str | None:
    """The server lm-eval asked (its model_args are a dict in the results file, or the `k=v,...` string)."""
    if isinstance(model_args, str):
        model_args = dict(kv.split("=", 1) for kv in model_args.split(",") if "=" in kv)
    url = model_args.get("base_url") if isinstance(model_args, dict) else None
    return scrub(str(url)) if url else None


def _date(value: Any) -> str | None:
    try:
        return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError):
        return None


def _write_run(run_dir: Path, spec: RunSpec, records: list[RunRecord], force: bool) -> None:
    """The run written beside its final place and renamed into it: an existing run is refused unless `force`,
    which replaces it whole (its old records and scores go with it)."""
    if run_dir.exists() and any(run_dir.iterdir()) and not force:
        raise ConfigError(
            f"run {run_dir} already exists", hint="pass --force to replace it, or --run-name NAME for another"
        )
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.", dir=run_dir.parent))
    tmp.chmod(0o755)
    try:
        write_run_spec(tmp, spec)
        writer = RecordWriter(tmp)
        try:
            writer.append_many(records)
        finally:
            writer.close()
        if run_dir.exists():
            shutil.rmtree(run_dir)
        tmp.rename(run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
