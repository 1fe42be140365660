"""SQLite errors of the mirror index, as typed one-line errors that name the index file (issue 26 item 10).

Without this, a damaged index or a full disk surfaced as a bare `sqlite3` exception, which the CLI took for the
workspace database's (and told the user to move the healthy workspace aside). The index is derived data: the
hint for damage is to delete it and index again; for a full disk, to free space and run the same command
again (the build resumes from its last committed batch).
"""

from __future__ import annotations

import errno
import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from academiceval.sources.errors import MirrorIndexDamagedError, MirrorIndexError

F = TypeVar("F", bound=Callable[..., Any])

_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_RESUME = "run the same command again: the index resumes from its last committed batch"


def translate(error: BaseException, path: Path) -> MirrorIndexError | None:
    """The typed error for an SQLite or OS error on the index file at `path` (None: not a resource problem)."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return MirrorIndexError(
            f"no space left on the device while writing the mirror index ({error.strerror})",
            source=str(path),
            hint=f"free space there, or set ACADEMICEVAL_MIRROR_INDEX_DIR to a bigger disk; then {_RESUME}",
        )
    if not isinstance(error, sqlite3.DatabaseError) or isinstance(
        error, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError
    ):
        return None
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(error).lower()
    files = f"{path} (and {path.name}-wal, {path.name}-shm)"
    if code in _DAMAGED or "malformed" in text or "not a database" in text:
        return MirrorIndexDamagedError(
            f"the mirror index is unusable ({error})",
            source=str(path),
            hint=f"it only holds what the mirror does: delete {files} and run `academiceval mirror index` again",
        )
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return MirrorIndexError(
            f"the disk is full: the mirror index could not be written ({error})",
            source=str(path),
            hint=f"free space on that disk, or set ACADEMICEVAL_MIRROR_INDEX_DIR to a bigger one; then {_RESUME}",
        )
    if code == sqlite3.SQLITE_READONLY or "readonly" in text:
        return MirrorIndexError(
            f"the mirror index is read-only ({error})",
            source=str(path),
            hint="make the file and its directory writable for this user, or index into another directory",
        )
    if code == sqlite3.SQLITE_CANTOPEN:
        return MirrorIndexError(
            f"the mirror index cannot be opened ({error})",
            source=str(path),
            hint="check that its directory exists, is a directory and is writable",
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return MirrorIndexError(
            f"the mirror index is busy ({error})",
            source=str(path),
            hint="another process is writing it (a second `mirror index`?); wait for it, then run this again",
        )
    if code == sqlite3.SQLITE_IOERR:
        return MirrorIndexError(f"the mirror index could not be read or written ({error})", source=str(path),
                                hint=f"check the disk; then {_RESUME}")  # fmt: skip
    return None


def guarded(fn: F) -> F:
    """Method decorator (generators too): SQLite/disk errors on `self.db_path` → `MirrorIndexError`."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen(self: Any, *a: Any, **kw: Any) -> Iterator[Any]:
            try:
                yield from fn(self, *a, **kw)
            except (sqlite3.Error, OSError) as e:
                typed = translate(e, self.db_path)
                if typed is None:
                    raise
                raise typed from e

        return gen

    @functools.wraps(fn)
    def call(self: Any, *a: Any, **kw: Any) -> Any:
        try:
            return fn(self, *a, **kw)
        except (sqlite3.Error, OSError) as e:
            typed = translate(e, self.db_path)
            if typed is None:
                raise
            raise typed from e

    return call
