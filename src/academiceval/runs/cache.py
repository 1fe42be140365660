"""The response cache: a model's answer to a rendered prompt, kept so a rerun never pays for it twice.

Key = sha256 over the backend's `cache_identity()` (backend, model, base URL, revision; never secrets), the
generation options and the rendered prompt's sha256 — the same inputs inspect_ai's cache uses. Only
completions are cached; errors are not (a transient error must be retried, a permanent one is in the record).
Storage is one SQLite file in the workspace (`cache/responses.sqlite`, WAL), separate from the main database so
a fast run's writes do not contend with other stages. Kill -9 safe: a row is committed or absent.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from academiceval.models.base import Completion, GenerationOptions
from academiceval.runs.summary import now_iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS response (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    completion TEXT NOT NULL,       -- Completion as JSON
    created_at TEXT NOT NULL
);
"""


def cache_key(identity: dict[str, Any], options: GenerationOptions | dict[str, Any], prompt_sha256: str) -> str:
    opts = options.model_dump() if isinstance(options, GenerationOptions) else dict(options)
    blob = json.dumps(
        {"identity": identity, "options": opts, "prompt": prompt_sha256}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def safe_child(root: Path, *parts: str) -> Path:
    """`root/parts...`, refusing anything that would land outside `root` (../, absolute parts, symlinks)."""
    root = root.resolve()
    path = root.joinpath(*parts).resolve()
    if path != root and root not in path.parents:
        raise ValueError(f"path {'/'.join(parts)!r} escapes {root}")
    return path


class ResponseCache:
    """Thread-confined (one connection); the runner uses it from its event-loop thread only."""

    def __init__(self, path: Path, *, enabled: bool = True) -> None:
        self.path = Path(path)
        self.enabled = enabled
        self.hits = 0
        self.writes = 0
        self._conn: sqlite3.Connection | None = None

    @classmethod
    def in_workspace(cls, home: Path, *, enabled: bool = True) -> ResponseCache:
        return cls(safe_child(home, "cache", "responses.sqlite"), enabled=enabled)

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            conn.executescript(SCHEMA)
            self._conn = conn
        return self._conn

    def get(self, key: str) -> Completion | None:
        if not self.enabled:
            return None
        row = self.conn.execute("SELECT completion FROM response WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        self.hits += 1
        return Completion.model_validate_json(row[0])

    def put(self, key: str, identity: dict[str, Any], prompt_sha256: str, completion: Completion) -> None:
        if not self.enabled:
            return
        self.conn.execute(
            "INSERT OR REPLACE INTO response VALUES (?,?,?,?,?,?)",
            (
                key,
                str(identity.get("backend", "")),
                str(identity.get("model", "")),
                prompt_sha256,
                completion.model_dump_json(),
                now_iso(),
            ),
        )
        self.writes += 1

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM response").fetchone()[0])

    def clear(self, *, model: str | None = None) -> int:
        sql, args = ("DELETE FROM response", ()) if model is None else ("DELETE FROM response WHERE model=?", (model,))
        return self.conn.execute(sql, args).rowcount

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
