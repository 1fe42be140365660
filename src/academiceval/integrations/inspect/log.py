"""An inspect_ai eval log → an academiceval run directory, so `academiceval score` and `report` read it.

    from inspect_ai.log import read_eval_log
    run_dir = log_to_run(read_eval_log("logs/....eval"), home="academiceval-data")

The records carry what the runner's records carry (sample identity and date from the task's sample metadata,
the raw answer and the answer cleaned by `models.postprocess`); the spec names the inspect model as
`inspect/<provider>/<model>` with backend `inspect`.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.integrations.inspect.core import clean_output
from academiceval.store.artifacts import Layout, RecordWriter, new_record, safe_name, write_run_spec
from academiceval.store.models import RunSpec
from academiceval.store.workspace import resolve_home


def log_to_run(log: Any, *, home: str | Path | None = None, run_name: str | None = None) -> Path:
    """Write the samples of one inspect EvalLog (read with `inspect_ai.log.read_eval_log`) as a run; returns its
    directory `runs/ROUND/RUN/`."""
    meta = dict(log.eval.metadata or {})
    args = dict(log.eval.task_args or {})
    round_name = meta.get("round") or args.get("round")
    if not round_name or not log.samples:
        raise ConfigError(
            "the inspect log names no academiceval round or holds no samples",
            hint="pass the log of an `inspect eval academiceval/<task>` run",
        )
    model = str(log.eval.model)
    name = run_name or safe_name(f"inspect__{model}")
    run_dir = Layout.of(resolve_home(home)).run_dir(str(round_name), name)
    run_dir.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    spec = RunSpec(
        round=str(round_name),
        round_manifest_sha256=str(meta.get("round_manifest_sha256", "")),
        model=f"inspect/{model}",
        backend="inspect",
        options={k: v for k, v in log.eval.config.model_dump(exclude_none=True).items()} if log.eval.config else {},
        package_version=__version__,
        created_at=str(log.eval.created or now),
        prompt_preparation="rounds.prompts.render_prompt (inspect_ai)",
        updated_at=now,
        config={"inspect_task": log.eval.task, "task_args": args, "eval_id": log.eval.eval_id},
    )
    write_run_spec(run_dir, spec)
    writer = RecordWriter(run_dir)
    try:
        for s in log.samples:
            m = s.metadata or {}
            completion = s.output.completion if s.output else ""
            usage = s.output.usage if s.output else None
            error = s.error.message if s.error else None
            writer.append(
                new_record(
                    sample_id=str(s.id),
                    task=m["task"],
                    setting=m["setting"],
                    split=m["split"],
                    arxiv_id=m["arxiv_id"],
                    published=date.fromisoformat(m["published"]),
                    prompt_sha256=m.get("prompt_sha256", ""),
                    output_raw=completion,
                    output="" if error else clean_output(m["task"], completion),
                    input_tokens=usage.input_tokens if usage else 0,
                    output_tokens=usage.output_tokens if usage else 0,
                    error=error,
                    error_code="inspect_error" if error else None,
                    finished_at=now,
                ),
                urgent=False,
            )
    finally:
        writer.close()
    return run_dir
