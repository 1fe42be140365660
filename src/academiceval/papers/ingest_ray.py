"""Ingest on a Ray cluster (`academiceval ingest --executor ray [--address ADDR]`, extra `[ray]`).

The same parse job as the local process pool (`parse.parse_job`) runs as a Ray task; the parent stays the only
writer of the workspace (it stores each result as it arrives), so resume, progress and the stored rows are the
local pool's. The PDF's bytes travel with the task (a cluster's workers need not see the parent's files); the
worker parses a copy under the same file name (the name can carry the arXiv id) and puts the original path
back into the result, so papers and errors are stored exactly as the local pool stores them.

At most `2 × cluster CPUs` tasks are in flight: the object store holds a bounded number of PDFs whatever the
batch size. A worker that dies (MuPDF crash, node lost) costs that file a recorded `parser_error` after Ray's
retries, never the batch.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from academiceval.errors import ConfigError
from academiceval.papers.parse import Job, parse_job

_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + empty SETTINGS


def _check_reachable(address: str, timeout: float = 3.0) -> None:
    """The address answers like Ray, within `timeout` seconds, before `ray.init` is trusted with it: Ray's GCS and
    Ray Client both speak gRPC, so an HTTP/2 client preface must be answered with a SETTINGS frame. Something else
    listening there (a web server, a port that accepts and stays silent) made `ray.init` hang for minutes."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"invalid Ray address {address!r}", hint="use host:port (GCS), ray://host:port (Ray Client) or 'auto'"
        )
    hint = "start one with `ray start --head` (its address is printed), or omit --address for a local Ray"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                got = s.recv(9 - len(head))
                if not got:
                    break
                head += got
    except TimeoutError:
        raise ConfigError(
            f"{address} does not answer like a Ray cluster (nothing within {timeout:g} s)", hint=hint
        ) from None
    except OSError as e:
        raise ConfigError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}", hint=hint) from e
    if len(head) < 9 or head[3] != 0x04:  # frame type 4 = SETTINGS: a gRPC (HTTP/2) server
        seen = head[:12].decode("latin-1").strip() or "nothing"
        raise ConfigError(f"{address} does not answer like a Ray cluster (it answered {seen!r}, not gRPC)", hint=hint)


def connect(address: str | None = None, *, num_cpus: int | None = None) -> Callable[[], None]:
    """Join (or start) Ray before any work; returns what to call when done (shutdown only if we started it).
    Raises ConfigError with a clear message when Ray is missing or the address cannot be reached."""
    try:
        import ray  # the [ray] extra: heavy and optional, imported only when --executor ray is asked for
    except ImportError as e:
        raise ConfigError("--executor ray needs Ray", hint="pip install 'academiceval[ray]'") from e
    if address and address != "auto":
        _check_reachable(address)
    if ray.is_initialized():  # the caller (a test, a notebook) already joined a cluster: use it
        return lambda: None
    try:
        ray.init(
            address=address,
            num_cpus=None if address else num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
        )
    except Exception as e:  # ConnectionError, RuntimeError, ...: all mean "no cluster to work on"
        raise ConfigError(f"cannot connect to Ray at {address or 'a new local instance'}: {e}") from e
    return ray.shutdown


def parse_remote(path: str, sha: str, data: bytes, max_pages: int) -> Job:
    """Runs on a Ray worker: parse a copy of the PDF named like the original, report it under the original path."""
    with tempfile.TemporaryDirectory(prefix="academiceval-ray-") as d:
        tmp = Path(d) / Path(path).name
        tmp.write_bytes(data)
        _, _, paper, err = parse_job(str(tmp), sha, max_pages)
    if err is not None:
        err = {k: v.replace(str(tmp), path) if isinstance(v, str) else v for k, v in err.items()}
    return path, sha, paper, err


def run_on_ray(todo: list[tuple[str, str]], max_pages: int, *, max_in_flight: int | None = None) -> Iterator[Job]:
    """The parse jobs of `todo` [(path, sha256)] on the connected Ray cluster, yielded as they finish."""
    import ray  # the [ray] extra (see connect)

    task = ray.remote(num_cpus=1, max_retries=2)(parse_remote)
    cap = max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    pending: dict[Any, tuple[str, str]] = {}
    queue = iter(todo)

    def submit() -> bool:
        nxt = next(queue, None)
        if nxt is None:
            return False
        path, sha = nxt
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            pending[ray.put((path, sha, None, {"code": "unreadable", "message": str(e), "hint": None}))] = nxt
            return True
        pending[task.remote(path, sha, data, max_pages)] = nxt
        return True

    while len(pending) < cap and submit():
        pass
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        path, sha = pending.pop(ref)
        try:
            yield ray.get(ref)
        except Exception as e:  # the worker died or Ray lost the task: one failed file, not a failed batch
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            yield path, sha, None, {"code": "parser_error", "message": f"Ray task failed ({msg})", "hint": None}
        submit()
