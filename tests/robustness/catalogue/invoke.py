"""Running a command the way a user does — the console entry point `academiceval.cli.main.main` — in this
process (fast: nothing to import again), or forked into a child process (to kill it, or to run two at once).

The oracle every case shares (`Outcome.problems`): no traceback and no exception escaping the entry point;
exit status 0, or 1/2 with exactly one `error:` line. A case adds its own checks (the path named, nothing
damaged, the rerun equal to an uninterrupted run)."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.cli.main import command, main


@dataclass
class Outcome:
    argv: list[str]
    code: int | None  # None: killed
    out: str
    err: str
    escaped: str | None = None  # an exception that left the entry point (with its traceback)
    seconds: float = 0.0
    killed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.out + self.err

    def error_lines(self) -> list[str]:
        return [ln for ln in self.text.splitlines() if ln.startswith("error:")]

    def problems(self) -> list[str]:
        """What breaks the shared rule (empty when the command behaved)."""
        if self.killed:
            return []
        found = []
        if self.escaped:
            found.append(f"exception escaped: {self.escaped.strip().splitlines()[-1][:300]}")
        if "Traceback (most recent call last)" in self.text or ("╭─" in self.text and "Traceback" in self.text):
            found.append("traceback printed")
        if self.code not in (0, 1, 2):
            found.append(f"exit status {self.code}")
        elif self.code and len(self.error_lines()) != 1:
            found.append(f"exit {self.code} with {len(self.error_lines())} error: lines")
        return found

    def brief(self) -> str:
        tail = (self.escaped or self.text).strip().splitlines()[-3:]
        return f"exit {self.code}: " + " | ".join(x.strip()[:240] for x in tail)


def takes_home(argv: list[str]) -> bool:
    """Whether the command named at the start of `argv` has a --home option."""
    cmd = command()
    for word in argv:
        subs = getattr(cmd, "commands", None)
        if not subs or word not in subs:
            break
        cmd = subs[word]
    return any("--home" in getattr(p, "opts", ()) for p in cmd.params)


def _normalise(argv: list[str], home: Path | None) -> list[str]:
    return [*argv, "--home", str(home)] if home is not None and takes_home(argv) else list(argv)


def run(argv: list[str], home: Path | None = None, *, env: dict[str, str] | None = None) -> Outcome:
    """The command in this process (its output captured; sys.argv and the environment restored)."""
    argv = _normalise(argv, home)
    out, err = io.StringIO(), io.StringIO()
    old_argv, old_env = sys.argv, dict(os.environ)
    sys.argv = ["academiceval", *argv]
    os.environ.update({"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
    code: int | None = 0
    escaped = None
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        escaped = traceback.format_exc()
        code = None
    finally:
        sys.argv = old_argv
        os.environ.clear()
        os.environ.update(old_env)
    return Outcome(argv, code, out.getvalue(), err.getvalue(), escaped, time.perf_counter() - t0)


@dataclass
class Child:
    """A command forked into its own process group; its output goes to files beside `logs`."""

    pid: int
    argv: list[str]
    logs: Path
    started: float

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)  # the command and any worker it started

    def wait(self, timeout: float | None = None) -> Outcome:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.monotonic() > deadline:
                self.kill()
                _, status = os.waitpid(self.pid, 0)
                break
            time.sleep(0.02)
        killed = os.WIFSIGNALED(status)
        code = None if killed else os.WEXITSTATUS(status)
        # a child killed before it opened its logs wrote nothing
        out = _read(self.logs / "out")
        err = _read(self.logs / "err")
        escaped = err if code == 70 else None  # the child's own marker: an exception left main()
        seconds = time.perf_counter() - self.started
        return Outcome(self.argv, code, out, err, escaped, seconds, killed=killed)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def fork(argv: list[str], home: Path | None, logs: Path, *, env: dict[str, str] | None = None) -> Child:
    """Start the command in a forked child (no new interpreter: the parent's imports are reused)."""
    argv = _normalise(argv, home)
    logs.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the parent's code (pytest's included)
        code = 70
        try:
            os.setpgid(0, 0)
            fd_out = os.open(logs / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            fd_err = os.open(logs / "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
            os.environ.update({"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
            sys.argv = ["academiceval", *argv]
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = 70
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code if isinstance(code, int) else 70)
    return Child(pid, argv, logs, t0)
