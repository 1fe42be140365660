"""`academiceval mirror serve` as a real process: binds 127.0.0.1, answers the protocol, stops cleanly on SIGTERM.

SIGTERM, not SIGINT: a shell starts background jobs with SIGINT ignored, so a suite run in the background could
never stop a server that only listened for Ctrl-C (and leaked it)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from academiceval.sources.atom import parse_feed


def test_mirror_serve_process(corpus: Path, tmp_path: Path) -> None:
    d = tmp_path / "atom_only"
    d.mkdir()
    (d / "fixtures").symlink_to(corpus / "arxiv_api/arxiv.py_fixtures", target_is_directory=True)
    cmd = [sys.executable, "-m", "academiceval.cli.main", "mirror", "serve", str(d), "--port", "0", "--fault", "seed=3"]
    # SIGINT ignored, as in a background job: the server must still stop on SIGTERM
    ignore_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ignore_sigint)
    try:
        line = ""
        for _ in range(50):
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if "serving" in line or not line:
                break
        m = re.search(r"http://127\.0\.0\.1:(\d+)/api/query", line)
        assert m, line + (proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
        url = m.group(0)
        page = parse_feed(httpx.get(url, params={"search_query": "au:del_maestro", "max_results": 5}).content)
        assert page.total_results >= 10 and len(page.items) == 5
        assert httpx.get(url.replace("/api/query", "/_stats")).json()["api_requests"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:  # never leak the server, whatever failed above
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0 and "served:" in out
