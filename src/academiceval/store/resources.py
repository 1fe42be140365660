"""Resource failures are one line (issue 26, item 10): a full disk, a read-only workspace, no permission, a file
where a directory belongs — named with the path and what to do, never a traceback.

`resource_error(e, path, rerun=...)` turns an `OSError` or an `sqlite3` error into the one `AcademicEvalError`
that says so, or returns None for anything else (which the caller re-raises: a bug stays visible). SQLite
reports a full disk as SQLITE_FULL ("database or disk is full") and a read-only file or directory as
SQLITE_READONLY ("attempt to write a readonly database"); the OS as ENOSPC / EDQUOT and EROFS / EACCES / EPERM.

Exit status (errors.py): a full disk is a failure while working (1: free space and rerun); a workspace that
cannot be written is bad input (2: point --home elsewhere or fix the permissions).
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from academiceval.errors import AcademicEvalError, ConfigError

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_NOT_WRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM}
_IN_THE_WAY = {errno.ENOTDIR, errno.EISDIR, errno.EEXIST}


class DiskFullError(AcademicEvalError):
    """The disk (or quota) is full: nothing more could be written."""

    code = "disk_full"
    exit_code = 1


class NotWritableError(ConfigError):
    """The workspace (or an output path) cannot be written: read-only, no permission, or a file in the way."""

    code = "not_writable"


def _sqlite_code(e: BaseException) -> int:
    return (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF


def resource_error(e: BaseException, path: str | Path, *, rerun: str = "") -> AcademicEvalError | None:
    """The one-line error for a resource failure at `path` (an `OSError`'s own file name wins), or None.

    `rerun` says why running the command again is safe (e.g. "it resumes where it stopped")."""
    where = str(getattr(e, "filename", None) or path)
    detail = (getattr(e, "strerror", None) or str(e)).strip()
    again = f" and run the same command again ({rerun})" if rerun else " and run the same command again"
    if isinstance(e, OSError):
        if e.errno in _FULL:
            return DiskFullError(
                f"the disk is full: could not write ({detail})", source=where, hint=f"free space{again}"
            )
        if e.errno in _NOT_WRITABLE:
            return NotWritableError(
                f"cannot write here ({detail})",
                source=where,
                hint="use --home on a writable directory, or make this one writable",
            )
        if e.errno in _IN_THE_WAY:
            return NotWritableError(
                f"cannot write here: a file or directory is in the way ({detail})",
                source=where,
                hint="move it aside, or use --home on another directory",
            )
        return None
    if isinstance(e, sqlite3.Error):
        text = str(e).lower()
        if _sqlite_code(e) == sqlite3.SQLITE_FULL or "disk is full" in text:
            return DiskFullError(f"the disk is full: could not write ({e})", source=where, hint=f"free space{again}")
        if _sqlite_code(e) == sqlite3.SQLITE_READONLY or "readonly database" in text:
            return NotWritableError(
                f"the workspace database cannot be written ({e})",
                source=where,
                hint="use --home on a writable directory, or make this one (and the database file) writable",
            )
    return None


__all__ = ["DiskFullError", "NotWritableError", "resource_error"]
