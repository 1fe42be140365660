"""One writer per run directory: `RunLock` (issue 10, finding 8).

Two `run`s of the same model on the same round used to append every sample twice. The runner now holds
`<run dir>/run.lock` for as long as it writes there. The lock is an OS advisory lock (`fcntl.flock`) on that
file, so a process killed with `kill -9` releases it the moment it dies: a lock left by a dead process is never
an obstacle. The file also names its holder (pid, host, start time, command), which is what a second process
prints when it refuses (or, with `wait_s`, what it waits for).

Where `flock` is unavailable (some network file systems, non-POSIX systems) the lock falls back to the holder
file alone: a holder on this host whose pid no longer runs is stale and is taken over (and that is said);
a holder on another host is trusted, and the message says how to remove it by hand.

The holder record passes `store.secrets.scrub` (the command line by `scrub_argv`: a key in `--base-url
http://user:KEY@…` or in a query string is masked), and the file is created 0600 (an older one is tightened):
it outlives a killed process, so it must not hold what others on the machine may not read (issue 26, item 6).

The file is never deleted (deleting a locked file lets a third process lock a new inode while a second still
waits on the old one); it is emptied when released.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval.errors import AcademicEvalError
from academiceval.store.secrets import private_file, scrub, scrub_argv

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None

LOCK_NAME = "run.lock"
log = logging.getLogger(__name__)


class RunLockedError(AcademicEvalError):
    """Another live process is writing this run directory."""

    code = "run_locked"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def describe_holder(holder: dict[str, Any]) -> str:
    pid, host, since = holder.get("pid", "?"), holder.get("host", "?"), holder.get("started_at", "?")
    return f"pid {pid} on {host}, started {since}"


class RunLock:
    """`with RunLock(run_dir): ...` — or `acquire()` / `release()`. Not re-entrant."""

    def __init__(
        self,
        run_dir: str | Path,
        *,
        wait_s: float = 0.0,
        poll_s: float = 0.5,
        name: str = LOCK_NAME,
        what: str = "another run is writing this run directory",
        hint: str = "wait for it to finish or stop it; use --run-name for a separate run",
    ) -> None:
        """`name`: the lock file in `run_dir` (another writer of the directory, e.g. `score`, holds its own);
        `what` / `hint`: what a refused second writer is told."""
        self.path = Path(run_dir) / name
        self.what, self.hint = what, hint
        self.wait_s = wait_s
        self.poll_s = poll_s
        self._fd: int | None = None
        self.took_over: dict[str, Any] | None = None  # the stale holder replaced, if any

    # ---- holder file ---------------------------------------------------------------------------------
    def read_holder(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if not text:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return {"pid": "?", "host": "?", "started_at": "?", "unreadable": text[:80]}
        return data if isinstance(data, dict) else None

    def _me(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": scrub_argv(sys.argv)[:300],  # scrubbed whole, then cut (a cut could split a key)
        }

    def _write_holder(self, fd: int) -> None:
        data = json.dumps(scrub(self._me())).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)

    # ---- acquire / release ---------------------------------------------------------------------------
    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + max(0.0, self.wait_s)
        while True:
            if self._try_once():
                return self
            holder = self.read_holder() or {}
            if time.monotonic() >= deadline:
                raise RunLockedError(
                    f"{self.what} ({describe_holder(holder)})",
                    source=str(self.path.parent),
                    hint=f"{self.hint}; if that process is gone and the lock remains, delete {self.path}",
                )
            time.sleep(self.poll_s)

    def _try_once(self) -> bool:
        private_file(self.path)  # 0600, also for a lock file an older version left readable by all
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    return False
                except OSError:  # no flock here (some network file systems): the holder file decides
                    if not self._holder_is_gone():
                        os.close(fd)
                        return False
            elif not self._holder_is_gone():
                os.close(fd)
                return False
            previous = self.read_holder()
            if previous and previous.get("pid") != os.getpid():
                self.took_over = previous  # its process died without releasing (kill -9, power loss)
                log.warning("took over a stale lock on %s (%s)", self.path.parent, describe_holder(previous))
            self._write_holder(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        self._fd = fd
        return True

    def _holder_is_gone(self) -> bool:
        holder = self.read_holder()
        if not holder:
            return True
        if holder.get("host") != socket.gethostname():
            return False  # cannot check another host's processes
        pid = holder.get("pid")
        return not (isinstance(pid, int) and _pid_alive(pid))

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
        with contextlib.suppress(OSError):
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
