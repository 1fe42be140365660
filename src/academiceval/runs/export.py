"""A finished run in a peer's file format: `academiceval export RUN_DIR --format leval --out DIR`.

The run path is one (`runs.runner`: cache, lock, resume, records); what a peer's own tools read is a view of its
records, written here. `export_run` reads the run (`store.artifacts.load_run`) and its round (the sha256 the run
was made on: a round changed since is refused), re-renders each prompt with the run's own preparation
(`runs.runner.preparer_for`) and checks it against the record's `prompt_sha256` — so an exported prompt is the
text that was sent — then hands (sample, record, prompt) items to the format, which writes its files.

Only answers are exported. A sample whose request failed (an outage, a rate limit that outlived the retries), that
the model left empty or refused, that was skipped or never run has no prediction: an empty one would be scored
as a wrong answer by the peer's scorer. Such samples make the export refuse (nothing is written; a rerun of the
same `run` asks the failed ones again) unless `partial=True`, which writes the answered ones and counts the rest.

Formats register themselves (`register_format`); each is a small module owned by the task family whose peer
reads it (`families.leval.export`: L-Eval's `<task>.pred.jsonl` rows), listed under the family's
`extensions["export_formats"]` and imported on the first lookup (`store.tasks.load_extensions`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import preparer_for, select_samples
from academiceval.runs.summary import failed_requests
from academiceval.store.artifacts import ArtifactError, load_round, load_run, locate_round
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import RunRecord, RunSpec, Sample
from academiceval.store.tasks import load_extensions, max_new_tokens


@dataclass(frozen=True)
class ExportItem:
    """One answered sample: the round's sample, its run record, the prompt that was sent."""

    sample: Sample
    record: RunRecord
    prompt: str


class ExportFormat(Protocol):
    name: str
    summary: str

    def accepts(self, sample: Sample) -> bool:
        """Whether the format has a row for this kind of sample (the rest of a mixed run is not exported)."""
        ...

    def files(self, items: Sequence[ExportItem], spec: RunSpec) -> dict[str, str]:
        """The files to write: file name (inside the output directory) → text."""
        ...


class ExportError(AcademicEvalError):
    """A run that cannot be exported as asked: samples without an answer (exit 1; a destination that is taken or
    lies inside the run is an `ArtifactError`, exit 2)."""

    code = "export"


@dataclass
class ExportResult:
    run_dir: Path
    format: str
    epoch: int
    files: dict[str, Path] = field(default_factory=dict)
    exported: int = 0
    missing: dict[str, int] = field(default_factory=dict)  # why a sample has no row -> count


_FORMATS: dict[str, ExportFormat] = {}
_loaded = False


def register_format(fmt: ExportFormat) -> ExportFormat:
    if fmt.name in _FORMATS and _FORMATS[fmt.name] is not fmt:
        raise ConfigError(f"export format {fmt.name!r} is already registered")
    _FORMATS[fmt.name] = fmt
    return fmt


def formats() -> dict[str, ExportFormat]:
    global _loaded
    if not _loaded:
        _loaded = True
        load_extensions("export_formats")
    return dict(_FORMATS)


def get_format(name: str) -> ExportFormat:
    found = formats().get(name)
    if found is None:
        known = ", ".join(f"{f.name} ({f.summary})" for f in formats().values())
        raise ConfigError(f"unknown export format {name!r}", source="--format", hint=f"one of: {known}")
    return found


def write_text_atomic(path: Path, text: str, *, force: bool = False) -> Path:
    """Write a file through a temp sibling, fsync and rename; an existing file is replaced only with `force`."""
    path = Path(path)
    if path.exists() and not force:
        raise ArtifactError(f"{path} exists", hint="pass --force to replace it, or choose another --out")
    if path.is_dir():
        raise ArtifactError(f"{path} is a directory", hint="choose another --out")
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:  # disk full, read-only, a file where the directory belongs: one line, nothing half-written
        raise ArtifactError(f"cannot write {path}: {e.strerror or e}", hint="choose another --out") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _why_missing(rec: RunRecord | None) -> str | None:
    """None for an answer; else why the sample has no prediction (failed requests named by their code)."""
    if rec is None:
        return "not run"
    if rec.skipped:
        return f"skipped ({rec.error_code or 'skipped'})"
    if rec.error:
        kind = "request failed" if failed_requests([rec]) else "no answer"
        return f"{kind}: {rec.error_code or 'error'}"
    return None


def export_run(
    run_dir: str | Path,
    format_name: str,
    out_dir: str | Path,
    *,
    epoch: int = 1,
    partial: bool = False,
    force: bool = False,
    round_dir: str | Path | None = None,
    home: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExportResult:
    """Export epoch `epoch` of a run in format `format_name` to `out_dir`; see the module docstring."""
    fmt = get_format(format_name)
    run_dir = Path(run_dir)
    run = load_run(run_dir, scores=False)
    spec = run.spec
    found = Path(round_dir) if round_dir else locate_round(spec.round, home=home, run_dir=run_dir)
    if found is None:
        raise ArtifactError(f"cannot find round {spec.round} for {run_dir}", hint="pass --round-dir or --home")
    view = load_round(found)
    if view.manifest_sha256 != spec.round_manifest_sha256:
        raise ExportError(
            f"round {spec.round} at {found} is not the round this run was made on (manifest sha256 differs)",
            hint="pass --round-dir of the round the run used",
        )
    out = Path(out_dir)
    for inside in (run_dir, found):  # prediction files in a run or round directory would be read as its records
        if out.resolve() == inside.resolve() or inside.resolve() in out.resolve().parents:
            raise ArtifactError(f"--out {out} lies inside {inside}", hint="export to a directory of its own")
    config = RunConfig(**spec.config) if spec.config else RunConfig(model=spec.model)
    wanted = [s for s in select_samples(view.distinct_samples(), config) if fmt.accepts(s)]
    if not wanted:
        raise ExportError(f"{run_dir} has no samples the {fmt.name} format applies to")
    preparer = preparer_for(
        config, spec.context_length, length_instruction=spec.length_instruction, templates_dir=view.templates_dir
    )
    result = ExportResult(run_dir=run_dir, format=fmt.name, epoch=epoch)
    missing: Counter[str] = Counter()
    items: list[ExportItem] = []
    for k, sample in enumerate(wanted, 1):
        rec = run.epoch_records.get((sample.sample_id, epoch))
        why = _why_missing(rec)
        if why is None and rec is not None:
            max_tokens = spec.options.get("max_tokens") or max_new_tokens(sample.task)
            prompt = preparer(sample, int(max_tokens)).prompt
            if sha256_hex(prompt) == rec.prompt_sha256:
                items.append(ExportItem(sample, rec, prompt))
            else:
                why = "prompt differs from the one sent (templates or code changed since the run)"
        if why is not None:
            missing[why] += 1
        if progress is not None:
            progress(k, len(wanted))
    result.missing = dict(missing.most_common())
    if missing and not partial:
        n = sum(missing.values())
        raise ExportError(
            f"{n} of {len(wanted)} samples of epoch {epoch} have no answer to export "
            f"({'; '.join(f'{why} ×{c}' for why, c in missing.most_common())}): nothing written",
            source=str(run_dir),
            hint="rerun the same `academiceval run` command to ask failed requests again, or pass --partial to export "
            "the answered samples only (the files then hold fewer rows than the round)",
        )
    texts = fmt.files(items, spec) if items else {}
    taken = [name for name in texts if (out / name).exists()]
    if taken and not force:  # checked for every file before any is written
        raise ArtifactError(
            f"{out} already holds {', '.join(sorted(taken))}", hint="pass --force to replace them, or another --out"
        )
    result.files = {name: write_text_atomic(out / name, text, force=force) for name, text in sorted(texts.items())}
    result.exported = len(items)
    return result


__all__ = [
    "ExportError",
    "ExportFormat",
    "ExportItem",
    "ExportResult",
    "export_run",
    "formats",
    "get_format",
    "register_format",
    "write_text_atomic",
]
