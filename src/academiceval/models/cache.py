"""The response cache: a model's answer to a rendered prompt, kept so a rerun never pays for it twice.

Read and written by `models.generate.Generator` (the one call path of the runner and the judge); the runner also
uses its bulk reads for replays and its `prompt_memo` side table (opaque JSON blobs keyed by the caller).

Key = sha256 over the backend's `cache_identity()` (backend, model, base URL, revision; never secrets), the
generation options and the rendered prompt's sha256 — the same inputs inspect_ai's cache uses. Only
completions are cached; errors are not (a transient error must be retried, a permanent one is in the record).
Storage is one SQLite file in the workspace (`store.artifacts.Layout.response_cache`, WAL), separate from the
main database so a fast run's writes do not contend with other stages. Kill -9 safe: a row is committed or absent.

A damaged cache file (overwritten header, truncated, garbage pages) never stops a run: it is only a cache. The
damage is reported on stderr, the file is moved aside as `responses.sqlite.corrupt-<UTC time>` (kept for a
post-mortem) and an empty cache takes its place; the answers it held are lost, the run's records are not.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Completion, GenerationOptions
from academiceval.store.artifacts import Layout
from academiceval.store.secrets import private_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS response (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    completion TEXT NOT NULL,       -- Completion as JSON
    created_at TEXT NOT NULL
);
-- how a sample was prepared (prompt hash, token counts, cuts), so a replay need not render or tokenize again;
-- keyed by the preparation fingerprint (options, templates and code digests) and the sample's digest
CREATE TABLE IF NOT EXISTS prompt_memo (
    key TEXT PRIMARY KEY,
    prepared TEXT NOT NULL          -- the caller's JSON (the runner: runs.prepare.Prepared without the prompt)
);
"""
_CHUNK = 500  # keys per IN (...) query
log = logging.getLogger(__name__)
_last_second: tuple[int, str] = (-1, "")


def _now_iso() -> str:
    """UTC now to the second (the row's `created_at`; not part of any key), formatted once per second."""
    global _last_second
    t = int(time.time())
    if t != _last_second[0]:
        _last_second = (t, datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds"))
    return _last_second[1]


def key_prefix(identity: dict[str, Any], options: GenerationOptions | dict[str, Any]) -> bytes:
    """The part of the key fixed for a whole run and task (computed once, not per sample)."""
    opts = options.model_dump() if isinstance(options, GenerationOptions) else dict(options)
    return json.dumps({"identity": identity, "options": opts}, sort_keys=True, separators=(",", ":")).encode()


def cache_key(identity: dict[str, Any], options: GenerationOptions | dict[str, Any], prompt_sha256: str) -> str:
    return key_from_prefix(key_prefix(identity, options), prompt_sha256)


def key_from_prefix(prefix: bytes, prompt_sha256: str) -> str:
    """sha256(prefix | prompt sha256); the prefix is hashed once and the hasher copied per key."""
    h = _prefix_hasher(prefix).copy()
    h.update(prompt_sha256.encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=64)
def _prefix_hasher(prefix: bytes) -> Any:
    return hashlib.sha256(prefix + b"|")


class ResponseCache:
    """Thread-confined (one connection); the runner uses it from its event-loop thread only.

    By default every write commits at once. The runner asks for `batch=64`: writes are then grouped into
    transactions of up to `batch` rows or `max_delay_s` seconds (call `flush`/`close` at the end), since a
    WAL commit per answer costs more CPU than the request itself on a fast local server. The run records are
    the durable log: an answer whose row was lost with the process is in its record, which the runner writes
    back with `restore` on the next run (a sample sharing that prompt then finds it instead of asking again)."""

    def __init__(self, path: Path, *, enabled: bool = True, batch: int = 1, max_delay_s: float = 0.5) -> None:
        self.path = Path(path)
        self.enabled = enabled
        self.hits = 0
        self.writes = 0
        self.batch = batch
        self.max_delay_s = max_delay_s
        # rows written and not yet committed, kept in Python and inserted with one `executemany` per table at the
        # commit: a statement per row from the event loop cost more than the rows themselves (runs.worker's
        # profile); `get` sees them, another connection does not (as with the open transaction they replace)
        self._rows: dict[str, tuple[str, str, str, str, Completion, str]] = {}  # key -> row (completion unserialised)
        # keys a bulk look-up (`get_many(..., remember_misses=True)`) found absent: the next `get` of such a key
        # answers None without a query (the runner looks up a prepared batch's keys at once, then asks each)
        self._misses: set[str] = set()
        self._memos: dict[str, str] = {}  # prompt memo key -> prepared JSON
        self._pending_since = 0.0
        self._conn: sqlite3.Connection | None = None
        self.recovered: list[str] = []  # where damaged cache files were moved (one per recovery)

    @classmethod
    def in_workspace(cls, home: Path, *, enabled: bool = True, batch: int = 1) -> ResponseCache:
        return cls(Layout.of(home).response_cache, enabled=enabled, batch=batch)

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                try:
                    self._conn = self._open()
                except sqlite3.DatabaseError as e:
                    if not _is_damage(e):
                        raise
                    self._set_aside(e)
                    self._conn = self._open()
            except sqlite3.OperationalError as e:  # not damage: the path cannot be opened (a directory, no rights)
                raise ConfigError(
                    f"cannot open the response cache: {e}",
                    source=str(self.path),
                    hint="check that it is a writable file (or remove it), or run with --no-cache",
                ) from None
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        private_file(self.path)  # 0600 (prompts and answers); SQLite gives its -wal/-shm the same mode
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            # 16 KiB pages for a new file (SQLite ignores this on an existing one, which keeps its own): a commit
            # writes fewer, larger WAL frames; the cache work of 2,000 answers + memos into a new file 9.3 -> 8.1 µs
            # each (lookups, rows, commits, close), a bulk read of them back the same (5.6 -> 5.5)
            conn.execute("PRAGMA page_size=16384")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            conn.executescript(SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, error: sqlite3.DatabaseError) -> Path:
        """Move the damaged file (and its WAL/SHM) aside, say so, and let the next use open an empty cache."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        self._rows, self._memos = {}, {}
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                os.replace(src, Path(f"{aside}{suffix}"))
        self.recovered.append(str(aside))
        log.warning(
            "response cache %s is damaged (%s): moved aside to %s; continuing with an empty cache "
            "(answers are re-requested; run records are unaffected)",
            self.path,
            error,
            aside.name,
        )
        return aside

    def _guard(self, fn, *args: Any, default: Any = None) -> Any:
        """Run a cache operation; on damage found mid-run, set the file aside and return `default` (a miss)."""
        try:
            return fn(*args)
        except sqlite3.DatabaseError as e:
            if not _is_damage(e):
                raise
            self._set_aside(e)
            return default

    def get(self, key: str) -> Completion | None:
        if not self.enabled:
            return None
        pending = self._rows.get(key)
        if pending is not None:
            row: Any = (pending[4].model_dump_json(),)  # a fresh copy, as if read back from the table
        elif key in self._misses:
            self._misses.discard(key)
            return None
        else:
            row = self._guard(
                lambda: self.conn.execute("SELECT completion FROM response WHERE key=?", (key,)).fetchone()
            )
        if row is None:
            return None
        try:
            completion = Completion.model_validate_json(row[0])
        except ValueError:  # a row that is not a Completion (written by something else): a miss
            return None
        self.hits += 1
        return completion

    def get_many(self, keys: list[str], *, remember_misses: bool = False) -> dict[str, Completion]:
        """Bulk lookup (a replay of thousands of samples must not pay one query each). With `remember_misses`, the
        keys not found are remembered so that the next `get` of each answers None without a query: for a caller
        about to `get` them one by one right away (another process writing the same key in between is then seen
        one call later, which costs at most a request it would have sent anyway a moment earlier)."""
        out: dict[str, Completion] = {}
        if not self.enabled:
            return out

        def read() -> None:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                sql = f"SELECT key, completion FROM response WHERE key IN ({','.join('?' * len(chunk))})"
                rows = self.conn.execute(sql, chunk).fetchall()
                rows += [(k, self._rows[k][4].model_dump_json()) for k in chunk if k in self._rows]  # not committed
                for k, blob in rows:
                    try:
                        out[k] = Completion.model_validate_json(blob)
                    except ValueError:
                        continue

        self._guard(read)
        self.hits += len(out)
        if remember_misses:
            self._misses.update(k for k in keys if k not in out)
        return out

    def restore(self, rows: dict[str, tuple[str, dict[str, Any], Completion]]) -> int:
        """Insert answers (key → (prompt sha256, identity, completion)) that are missing; returns how many."""
        if not self.enabled or not rows:
            return 0
        self.flush()
        have: set[str] = set()
        keys = list(rows)

        def read() -> None:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                sql = f"SELECT key FROM response WHERE key IN ({','.join('?' * len(chunk))})"
                have.update(k for (k,) in self.conn.execute(sql, chunk).fetchall())

        self._guard(read)
        missing = [k for k in keys if k not in have]
        for k in missing:
            prompt_sha256, identity, completion = rows[k]
            self.put(k, identity, prompt_sha256, completion)
        self.flush()
        return len(missing)

    def get_memos(self, keys: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.enabled:
            return out

        def read() -> None:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                sql = f"SELECT key, prepared FROM prompt_memo WHERE key IN ({','.join('?' * len(chunk))})"
                out.update(self.conn.execute(sql, chunk).fetchall())
                out.update((k, self._memos[k]) for k in chunk if k in self._memos)  # written, not yet committed

        self._guard(read)
        return out

    def put_memo(self, key: str, prepared_json: str) -> None:
        if self.enabled:
            self._memos[key] = prepared_json
            self._written()

    def is_committed(self, key: str) -> bool:
        """False for an answer this cache wrote and has not committed yet (a kill would lose the row)."""
        return key not in self._rows

    def put(self, key: str, identity: dict[str, Any], prompt_sha256: str, completion: Completion) -> None:
        if not self.enabled:
            return
        self._misses.discard(key)
        self._rows[key] = (
            key,
            str(identity.get("backend", "")),
            str(identity.get("model", "")),
            prompt_sha256,
            completion,  # serialised at the commit, with the rest of the batch (callers never change a put answer)
            _now_iso(),
        )
        self.writes += 1
        self._written()

    def _written(self) -> None:
        """Commit when `batch` rows are waiting or the oldest has waited `max_delay_s` (`INSERT OR REPLACE`: a
        key written twice keeps its last row, in the buffer as in the table)."""
        n = len(self._rows) + len(self._memos)
        if n == 1:
            self._pending_since = time.monotonic()
            if self._conn is None:
                self.conn  # noqa: B018 - open (or set aside a damaged file, or fail on a bad path) at the first write

        if n >= self.batch or time.monotonic() - self._pending_since >= self.max_delay_s:
            self.flush()

    def flush(self) -> None:
        """Commit the rows written so far: one transaction, one `executemany` per table. On damage found here the
        file is set aside and the rows go into the fresh cache (nothing of this batch is lost)."""
        if not (self._rows or self._memos):
            return
        rows, memos = self._rows, self._memos
        self._rows, self._memos = {}, {}
        try:
            self._commit(rows, memos)
        except sqlite3.DatabaseError as e:
            if not _is_damage(e):
                raise
            self._set_aside(e)
            self._guard(self._commit, rows, memos)

    def _commit(self, rows: dict[str, tuple[str, ...]], memos: dict[str, str]) -> None:
        conn = self.conn
        conn.execute("BEGIN")
        try:
            if rows:
                conn.executemany(
                    "INSERT OR REPLACE INTO response VALUES (?,?,?,?,?,?)",
                    [(k, b, m, sha, _completion_json(c).decode(), at) for k, b, m, sha, c, at in rows.values()],
                )
            if memos:
                conn.executemany("INSERT OR REPLACE INTO prompt_memo VALUES (?,?)", memos.items())
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    def count(self) -> int:
        self.flush()
        return int(self._guard(lambda: self.conn.execute("SELECT COUNT(*) FROM response").fetchone()[0], default=0))

    def clear(self, *, model: str | None = None) -> int:
        self.flush()
        sql, args = ("DELETE FROM response", ()) if model is None else ("DELETE FROM response WHERE model=?", (model,))
        return self.conn.execute(sql, args).rowcount

    def close(self) -> None:
        self.flush()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# `completion.model_dump_json()` without its Python-level wrapper (the same text: its defaults are these); every
# answer a run caches is serialised once, at the commit
_completion_json = Completion.__pydantic_serializer__.to_json


def _is_damage(error: sqlite3.DatabaseError) -> bool:
    """A damaged file ("file is not a database", "database disk image is malformed"), as opposed to a busy
    database, a constraint or a programming error (those are not the file's fault and are raised)."""
    if isinstance(error, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return False
    if isinstance(error, sqlite3.OperationalError):
        text = str(error).lower()
        return "malformed" in text or "not a database" in text or "corrupt" in text
    return True
