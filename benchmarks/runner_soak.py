"""Soak test of the runner: many requests against a fault-injecting server, two runs at once, one kill -9.

Two `academiceval run` processes (two models of one local OpenAI-compatible server) run the same round at the
same time. The server injects faults on a share of prompts: 429 with Retry-After, 500, hangs past the client's
timeout, cut JSON bodies, `content` that is a number, bodies trickled out slowly (all transient: the first
attempt fails, a retry succeeds), plus a few permanent non-text answers. Run A is killed with SIGKILL part-way
and started again (it resumes); at the end each run is started once more, which must send nothing but the
permanent failures again.

Printed: requests the server saw, retries and 429s the runs counted, records, duplicates (a sample answered
twice: target 0), losses (a sample with no record: target 0), peak memory of each run process, and its memory
against the number of finished samples (it must not grow with them).

    python benchmarks/runner_soak.py            # 2 x 10,000 samples (about 20,000 requests)
    python benchmarks/runner_soak.py --quick    # 2 x 1,000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus"))
MODELS = ("soak-a", "soak-b")
TRANSIENT = {"429": 0.03, "500": 0.03, "timeout": 0.004, "malformed": 0.02, "nonstring": 0.02, "slow": 0.02}
PERMANENT = {"nonstring": 0.002}
CLIENT_TIMEOUT_S = 2.0
HANG_S = 4.0


def build_round(out: Path, n: int, window: int = 700, step: int = 173) -> Path:
    """`n` abstract-task samples, each a distinct window of real paper text (unarXive sample)."""
    from academiceval.store.models import Sample
    from academiceval.testing.sample_round import load_unarxive_papers, write_round

    papers = load_unarxive_papers(CORPUS, body_chars=2_000_000)
    rows: list[Sample] = []
    k = 0
    while len(rows) < n:
        grew = False
        for p in papers:
            text = p["body"][k * step : k * step + window]
            if len(text) < window // 2:
                continue
            grew = True
            rows.append(
                Sample(
                    sample_id=f"abstract/zero-shot/{p['arxiv_id']}#w{k}",
                    round="soak",
                    task="abstract",
                    setting="zero-shot",
                    split="test",
                    arxiv_id=p["arxiv_id"],
                    paper_id=f"unarxive:{p['arxiv_id']}",
                    published=p["published"] or date(2022, 12, 1),
                    fields={"title": p["title"], "body": text},
                    label=p["abstract"],
                )
            )
            if len(rows) >= n:
                break
        if not grew:
            raise SystemExit(f"the corpus yields only {len(rows)} windows; lower the sample count")
        k += 1
    return write_round(out, "soak", {"abstract-zs": rows})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env() -> dict[str, str]:
    src = str(REPO / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1"}


class Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        cmd = [sys.executable, "-m", "academiceval.testing.fake_server", "--port", str(self.port)]
        for m in MODELS:
            cmd += ["--model", m]
        for k, v in TRANSIENT.items():
            cmd += ["--fault", f"{k}={v}"]
        for k, v in PERMANENT.items():
            cmd += ["--permanent", f"{k}={v}"]
        cmd += ["--retry-after", "0.05", "--hang", str(HANG_S), "--slow-body", "0.4", "--latency", "0.002"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("fake server did not start")

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=10).read())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class RunProc:
    model: str
    home: Path
    round_dir: Path
    url: str
    conc: int
    proc: subprocess.Popen | None = None
    log: Path | None = None
    peak_kb: int = 0
    curve: list[tuple[int, int]] = field(default_factory=list)  # (records written, RSS kB)
    retries: int = 0
    rate_limited: int = 0
    starts: int = 0

    @property
    def run_dir(self) -> Path:
        return self.home / "runs" / "soak" / f"openai__{self.model}"

    def start(self) -> None:
        self.starts += 1
        self.log = self.home / f"{self.model}.{self.starts}.log"
        cmd = [sys.executable, "-m", "academiceval.cli.main", "run", str(self.round_dir), "--model",
               f"openai/{self.model}", "--base-url", self.url, "--max-connections", str(self.conc),
               "--timeout", str(CLIENT_TIMEOUT_S), "--home", str(self.home)]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=self.log.open("w"), stderr=subprocess.STDOUT, env=env())

    def lines(self) -> int:
        f = self.run_dir / "abstract-zero-shot.jsonl"
        try:
            with f.open("rb") as fh:
                return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        except OSError:
            return 0

    def sample(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            kb = rss_kb(self.proc.pid)
            if kb:
                self.peak_kb = max(self.peak_kb, kb)
                self.curve.append((self.lines(), kb))

    def finish(self) -> int:
        assert self.proc is not None
        code = self.proc.wait()
        text = self.log.read_text(errors="replace") if self.log else ""
        m = re.search(r"requests (\d+) \(retries (\d+), 429s (\d+)\)", text)
        if m:
            self.retries += int(m.group(2))
            self.rate_limited += int(m.group(3))
        return code


def audit(run: RunProc, n: int) -> dict:
    """Duplicates (a sample answered more than once), losses (a sample with no record), error codes."""
    answered: Counter[str] = Counter()
    seen: set[str] = set()
    last: dict[str, dict] = {}
    lines = 0
    for raw in (run.run_dir / "abstract-zero-shot.jsonl").read_bytes().splitlines():
        try:
            r = json.loads(raw)
        except ValueError:
            continue
        lines += 1
        seen.add(r["sample_id"])
        last[r["sample_id"]] = r
        if r.get("error") is None:
            answered[r["sample_id"]] += 1
    return {
        "lines": lines,
        "samples": len(seen),
        "duplicates": sum(c - 1 for c in answered.values() if c > 1),
        "losses": n - len(seen),
        "errors": Counter(r.get("error_code") for r in last.values() if r.get("error")),
    }


def growth(curve: list[tuple[int, int]], n: int) -> str:
    """RSS at each quarter of the samples written (MB), and the last quarter's RSS over the first's."""
    marks = []
    for q in (0.25, 0.5, 0.75, 1.0):
        pts = [kb for done, kb in curve if done <= q * n]
        marks.append(pts[-1] if pts else 0)
    first = next((m for m in marks if m), 0)
    ratio = marks[-1] / first if first else float("nan")
    return " / ".join(f"{m / 1024:.0f}" for m in marks) + f" MB (last/first {ratio:.2f}x)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 x 1,000 samples instead of 2 x 10,000")
    ap.add_argument("--samples", type=int, default=None, help="samples per model (overrides --quick)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--kill-at", type=float, default=0.4, help="kill run A after this share of its samples")
    a = ap.parse_args()
    n = a.samples or (1_000 if a.quick else 10_000)
    tmp = Path(tempfile.mkdtemp(prefix="soak-"))
    t0 = time.monotonic()
    try:
        home = tmp / "ws"
        round_dir = build_round(home / "rounds" / "soak", n)
        server = Server()
        runs = [RunProc(m, home, round_dir, server.url, a.concurrency) for m in MODELS]
        for r in runs:
            r.start()
        killed = False
        while any(r.proc is not None and r.proc.poll() is None for r in runs):
            for r in runs:
                r.sample()
            if not killed and runs[0].lines() >= a.kill_at * n:
                os.kill(runs[0].proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
                runs[0].proc.wait()  # type: ignore[union-attr]
                killed_at = runs[0].lines()
                runs[0].start()  # resume
                killed = True
            time.sleep(0.25)
        codes = [r.finish() for r in runs]
        busy = server.stats()
        for r in runs:  # a rerun of a finished run: only the permanent failures are asked again
            r.start()
            r.finish()
        after = server.stats()
        server.stop()
        wall = time.monotonic() - t0
        print(f"# runner soak: 2 runs x {n:,} samples, concurrency {a.concurrency}, client timeout "
              f"{CLIENT_TIMEOUT_S:g} s; faults {TRANSIENT} (transient), {PERMANENT} (permanent); "
              f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"server: {busy['total']:,} requests for {busy['distinct_prompts']:,} prompts "
              f"(statuses {busy['by_status']}; faults {busy['faults']})")  # fmt: skip
        if killed:
            print(f"kill -9 of run A after {killed_at:,} records, then resumed; exit codes {codes}")
        for r in runs:
            au = audit(r, n)
            print(
                f"{r.model}: records {au['lines']:,} for {au['samples']:,}/{n:,} samples; duplicates "
                f"{au['duplicates']} (target 0); losses {au['losses']} (target 0); retries {r.retries:,} "
                f"(429s {r.rate_limited:,}); errors left {dict(au['errors'])}; peak RSS {r.peak_kb / 1024:.0f} MB; "
                f"RSS at 25/50/75/100% of records {growth(r.curve, n)}"
            )
        extra = after["total"] - busy["total"]
        print(f"rerun of both finished runs: {extra} requests (the permanent failures only, asked again)")
        print(f"wall time {wall:.0f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
