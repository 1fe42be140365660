"""The workspace's BERTScore embedding cache: a label's token vectors, kept so `score` embeds each label once.

Why: every run of a round is scored against the same labels, and a label (a real Introduction or Related Work
section) is usually the longer text of a pair; re-embedding it for every run and every `score` call was 20–40%
of a call (issue 27). Only labels (references) are stored: model outputs are scored once per configuration.

Key = sha256 over the scorer's embedding identity (model and its weights, layer, model window, long-input mode
and window geometry — everything the vectors depend on, nothing they do not, such as idf or baseline) and the
text's sha256. Value = the text's token ids (int32) and its unit-normalized vectors (float32, the exact bytes
the scorer computed, so a cached label scores bit for bit as a fresh one from the same batch).

Storage: one SQLite file in the workspace (`store.artifacts.Layout.embedding_cache`, WAL). Concurrent writers
(two `score` processes on one workspace) insert with `INSERT OR IGNORE` in one transaction per call; a row is
committed whole or absent (kill -9 safe); a row whose blob sizes do not add up is ignored (treated as a miss).
A damaged file never stops scoring: it is reported on stderr, moved aside as `<name>.corrupt-<UTC time>`, and an
empty cache takes its place.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from academiceval.store.artifacts import Layout
from academiceval.store.secrets import private_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding (
    key TEXT PRIMARY KEY,
    ids BLOB NOT NULL,          -- int32 token ids, special tokens included
    vectors BLOB NOT NULL,      -- float32 [len(ids), dim], unit-normalized rows
    dim INTEGER NOT NULL,
    full_len INTEGER NOT NULL,  -- content tokens before any cut
    cut INTEGER NOT NULL        -- content tokens the model did not see ("truncate" mode)
);
"""
_CHUNK = 500  # keys per IN (...) query
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CachedEmbedding:
    ids: list[int]
    vectors: np.ndarray  # float32 [len(ids), dim]
    full_len: int
    cut: int


def embedding_key(identity: dict[str, Any], text: str) -> str:
    """sha256 over the embedding identity (JSON, sorted keys) and the text's own sha256."""
    head = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    text_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashlib.sha256(f"{head}|{text_sha}".encode()).hexdigest()


class EmbeddingCache:
    """Thread-confined (one connection, opened on first use). `get_many` / `put_many` take the keys made by
    `embedding_key`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.hits = 0
        self.writes = 0
        self.recovered: list[Path] = []  # where damaged files were moved
        self._conn: sqlite3.Connection | None = None

    @classmethod
    def in_workspace(cls, home: str | Path) -> EmbeddingCache:
        return cls(Layout.of(home).embedding_cache)

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError as e:
                if isinstance(e, sqlite3.OperationalError):  # locked, unreadable path: not damage, the caller decides
                    raise
                self._set_aside(e)
                self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        private_file(self.path)  # 0600 like the response cache (texts of the round); -wal/-shm inherit the mode
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(SCHEMA)
            conn.execute("SELECT count(*) FROM embedding WHERE rowid < 0").fetchone()  # reads the table's root page
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, err: Exception) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        dest = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                src.replace(Path(f"{dest}{suffix}"))
        self.recovered.append(dest)
        log.warning("embedding cache %s is damaged (%s): moved to %s, starting an empty one", self.path, err, dest)

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedEmbedding]:
        """The cached entries among `keys` (missing or inconsistent rows are simply absent)."""
        found: dict[str, CachedEmbedding] = {}
        uniq = list(dict.fromkeys(keys))
        for start in range(0, len(uniq), _CHUNK):
            part = uniq[start : start + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT key, ids, vectors, dim, full_len, cut FROM embedding WHERE key IN ({marks})", part
            ).fetchall()
            for key, ids_blob, vec_blob, dim, full_len, cut in rows:
                n = len(ids_blob) // 4
                if len(ids_blob) % 4 or dim <= 0 or len(vec_blob) != n * dim * 4:
                    continue  # not what a put wrote: a miss, recomputed and left for INSERT OR IGNORE
                ids = np.frombuffer(ids_blob, dtype="<i4").tolist()
                vectors = np.frombuffer(bytearray(vec_blob), dtype="<f4").reshape(n, dim)  # writable, for torch
                found[key] = CachedEmbedding(ids=ids, vectors=vectors, full_len=int(full_len), cut=int(cut))
        self.hits += len(found)
        return found

    def put_many(self, items: Iterable[tuple[str, CachedEmbedding]]) -> None:
        """Store entries in one transaction; a key already present (another writer was first) is kept as is."""
        rows = []
        for key, e in items:
            vec = np.ascontiguousarray(e.vectors, dtype="<f4")
            if vec.ndim != 2 or vec.shape[0] != len(e.ids):
                raise ValueError(f"vectors of shape {vec.shape} for {len(e.ids)} token ids")
            ids = np.asarray(e.ids, dtype="<i4").tobytes()
            rows.append((key, ids, vec.tobytes(), int(vec.shape[1]), int(e.full_len), int(e.cut)))
        if not rows:
            return
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO embedding VALUES (?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.writes += len(rows)

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM embedding").fetchone()[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
