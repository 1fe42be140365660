"""Per-sample run records: append-only JSONL, one file per task and setting, written as each sample finishes.

A line is written with a single `write` + `flush`, so `kill -9` leaves at worst one torn last line; readers
skip a line that does not parse, and the writer cuts a torn tail before appending. A sample may appear more
than once (a retryable error, then a success on a later run): the *last* line wins.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from academiceval.runs.models import RunRecord, RunSpec

_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")


def safe_name(text: str) -> str:
    """A file-name-safe rendering: `openai/gpt-4o` → `openai__gpt-4o`, `random:2` → `random_2`."""
    name = _UNSAFE.sub("_", text.replace("/", "__")).strip("._")
    return name or "_"


# RunRecord's fields in declaration order with their defaults (required ones hold a placeholder until given);
# mutable defaults (lists, dicts) are made fresh per record
_FIELDS = RunRecord.model_fields
_TEMPLATE: dict[str, Any] = {
    name: (None if f.default is PydanticUndefined else f.default) for name, f in _FIELDS.items()
}
_REQUIRED = frozenset(name for name, f in _FIELDS.items() if f.is_required())
_FACTORIES = {name: f.default_factory for name, f in _FIELDS.items() if f.default_factory is not None}


def new_record(**values: Any) -> RunRecord:
    """A RunRecord from values the runner built itself (already typed), without validation.

    The same object as `RunRecord.model_construct(**values)` (fields in declaration order, so the JSON line is
    byte-identical; a required field not given is absent, as there), at a quarter of its cost: a cache replay
    builds thousands of records a second, and `model_construct` walks every field's metadata each time."""
    data = _TEMPLATE.copy()
    for name, factory in _FACTORIES.items():
        data[name] = factory()
    data.update(values)
    for name in _REQUIRED.difference(values):
        del data[name]
    rec = RunRecord.__new__(RunRecord)
    object.__setattr__(rec, "__dict__", data)
    object.__setattr__(rec, "__pydantic_fields_set__", set(values))
    object.__setattr__(rec, "__pydantic_extra__", None)
    object.__setattr__(rec, "__pydantic_private__", None)
    return rec


def records_file(run_dir: Path, task: str, setting: str) -> Path:
    return run_dir / f"{safe_name(task)}-{safe_name(setting)}.jsonl"


def iter_records(path: Path) -> Iterator[RunRecord]:
    """Every parseable record in file order; a torn or corrupt line is skipped."""
    if not path.exists():
        return
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break  # torn last line from an interrupted write
            try:
                yield RunRecord.model_validate_json(raw)
            except (ValidationError, ValueError):
                continue


def read_records(path: Path) -> dict[str, RunRecord]:
    """sample_id → its latest record."""
    return {r.sample_id: r for r in iter_records(path)}


SCORES_FILE = "scores.jsonl"


def read_run(run_dir: Path) -> dict[str, RunRecord]:
    """All latest records of a run directory (every task-setting file)."""
    out: dict[str, RunRecord] = {}
    for p in sorted(Path(run_dir).glob("*.jsonl")):
        if p.name == SCORES_FILE:  # scores live beside the records; they are not run records
            continue
        out.update(read_records(p))
    return out


def _cut_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        size = f.seek(0, os.SEEK_END)
        pos = size
        block = 4096
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                f.truncate(start + i + 1)
                return
            pos = start
        f.truncate(0)


class RecordWriter:
    """Appends records to per task-setting files; one open handle per file.

    A record that cost a request is flushed at once (`urgent=True`): that is what makes kill -9 lose only the
    requests in flight. Records that cost nothing to redo (cache hits, skips) are flushed in groups, since a
    flush per line would dominate a cache replay."""

    def __init__(self, run_dir: Path, *, lazy_every: int = 256, lazy_delay_s: float = 0.25) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._files: dict[tuple[str, str], IO[bytes]] = {}
        self._dirty: set[IO[bytes]] = set()
        self._lazy = 0
        self._lazy_since = 0.0
        self.lazy_every, self.lazy_delay_s = lazy_every, lazy_delay_s
        self.written = 0

    def _handle(self, task: str, setting: str) -> IO[bytes]:
        f = self._files.get((task, setting))
        if f is None:
            path = records_file(self.run_dir, task, setting)
            _cut_torn_tail(path)
            f = self._files[(task, setting)] = path.open("ab")
        return f

    def append(self, record: RunRecord, *, urgent: bool = True) -> None:
        f = self._handle(record.task, record.setting)
        f.write(record.model_dump_json().encode() + b"\n")
        self.written += 1
        if urgent:
            f.flush()
            self._dirty.discard(f)
            return
        if not self._dirty:
            self._lazy_since = time.monotonic()
        self._dirty.add(f)
        self._lazy += 1
        if self._lazy >= self.lazy_every or time.monotonic() - self._lazy_since >= self.lazy_delay_s:
            self.flush()

    def append_many(self, records: list[RunRecord]) -> None:
        """Append a batch with one `write` + `flush` per task-setting file (a cache replay: thousands of records
        that cost nothing to redo, so a flush per line would be most of their cost). A kill mid-batch leaves
        whole lines and at most one torn last line, like `append`."""
        lines: dict[tuple[str, str], list[bytes]] = {}
        for rec in records:
            key = (rec.task, rec.setting)
            group = lines.get(key)
            if group is None:
                group = lines[key] = []
            group.append(rec.model_dump_json().encode())
        for (task, setting), group in lines.items():
            f = self._handle(task, setting)
            f.write(b"\n".join(group) + b"\n")
            f.flush()
            self._dirty.discard(f)
        self.written += len(records)

    def flush(self) -> None:
        for f in self._dirty:
            f.flush()
        self._dirty.clear()
        self._lazy = 0

    def close(self) -> None:
        self.flush()
        for f in self._files.values():
            f.close()
        self._files.clear()


def write_spec(run_dir: Path, spec: RunSpec) -> None:
    """`run.json`, replaced atomically (write to a temp file, then rename)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(json.dumps(spec.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    os.replace(tmp, run_dir / "run.json")


def read_spec(run_dir: Path) -> RunSpec | None:
    p = Path(run_dir) / "run.json"
    return RunSpec.model_validate_json(p.read_text()) if p.exists() else None
