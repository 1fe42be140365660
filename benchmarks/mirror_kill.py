"""`academiceval mirror index` killed with kill -9 at random moments (≥ 20) and stopped by a full disk, each time
run again to the end: the workspace and the mirror index equal those of an uninterrupted run (issue 26 item 3).

The mirror is made of symlinks into ../shared/corpus (never copies): Kaggle lines, `.abs` records, PDFs named by
id, PDFs known only by their arXiv stamp and PDFs that are not arXiv's, pre-parsed unarXive papers. One
uninterrupted run gives the reference; then each trial starts the command in a fresh workspace, sends SIGKILL to
its process group (the command and its parse worker) after a random delay within the reference's duration, runs
it again to completion and compares: every workspace table (timestamps of when a row was written left out) and
the mirror index's content (`disk_check.index_content`: rows keyed by arXiv id, so that row ids may differ).
The disk-full trial puts the workspace on a tmpfs too small for it (needs root, as on this machine; skipped
otherwise), expects a one-line error, grows the tmpfs and runs again.

    python benchmarks/mirror_kill.py --kills 20
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()
CMD = [sys.executable, "-m", "academiceval.cli.main", "mirror", "index"]


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def make_mirror(root: Path, n_abs: int, n_pdfs: int) -> None:
    meta = CORPUS / "metadata"
    (root / "abs").mkdir(parents=True)
    (root / "pdf").mkdir()
    (root / "kaggle.jsonl").symlink_to(meta / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    for i, f in enumerate(sorted((meta / "arxiv_browse_abs").rglob("*.abs"))[:n_abs]):
        (root / "abs" / f"{i:04d}_{f.name}").symlink_to(f)
    pdfs = sorted((CORPUS / "pdf").glob("*.pdf"))
    named = [p for p in pdfs if p.name[:1].isdigit()]
    other = [p for p in pdfs if not p.name[:1].isdigit()]
    for p in named[:n_pdfs] + other[:3]:
        (root / "pdf" / p.name).symlink_to(p)
    with (CORPUS / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl").open("rb") as f:
        (root / "unarxive.jsonl").write_bytes(b"".join(f.readline() for _ in range(3)))


def state(home: Path) -> dict[str, list]:
    """Every workspace table (columns naming when a row was written left out) and the mirror index's content."""
    from academiceval.sources.mirror.disk import DiskIndex
    from academiceval.sources.mirror.disk_check import index_content

    out: dict[str, list] = {}
    with closing(sqlite3.connect(home / "academiceval.sqlite")) as c:  # closed: the tmpfs must unmount after
        for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"):
            cols = [
                r[1] for r in c.execute(f'PRAGMA table_info("{name}")') if r[1] != "at" and not r[1].endswith("_at")
            ]
            rows = c.execute(f'SELECT {", ".join(f"[{x}]" for x in cols)} FROM "{name}"').fetchall()
            out[f"ws.{name}"] = sorted(rows, key=repr)
    (index,) = (home / "mirror-index").glob("*.sqlite")
    idx = DiskIndex(index)
    out.update({f"index.{k}": v for k, v in index_content(idx).items()})
    idx.close()
    return out


def diff(a: dict[str, list], b: dict[str, list]) -> list[str]:
    return [
        f"{k}: {len(a.get(k, []))} vs {len(b.get(k, []))} rows" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
    ]


def run(mirror: Path, home: Path, env: dict[str, str], kill_after: float | None = None) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([*CMD, str(mirror), "--home", str(home)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)  # fmt: skip
    if kill_after is not None:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and its parse worker: the group we started
    _, err = proc.communicate()
    return proc.returncode, err, time.perf_counter() - t0


def disk_full_trial(mirror: Path, work: Path, env: dict[str, str], want: dict[str, list], need_mb: float) -> str:
    mnt = work / "full"
    mnt.mkdir()
    size = max(1, int(need_mb * 0.5))
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}m", "tmpfs", str(mnt)], capture_output=True
    ).returncode:
        return "disk full: skipped (cannot mount a tmpfs here; needs root)"
    try:
        home = mnt / "home"
        code, err, _ = run(mirror, home, env)
        lines = [x for x in err.strip().splitlines() if x.strip() and "━" not in x]
        one_line = code == 1 and "Traceback" not in err and any("disk is full" in x for x in lines)
        subprocess.run(["mount", "-o", f"remount,size={int(need_mb * 3) + 64}m", str(mnt)], check=True)
        code2, err2, _ = run(mirror, home, env)
        d = diff(state(home), want) if code2 == 0 else [f"rerun failed: {err2.strip()[-300:]}"]
        err_line = " ".join(" ".join(lines).split())[:260]
        return (f"disk full at {size} MB: exit {code}, one line without traceback: {one_line} ({err_line!r}); "
                f"rerun with room: exit {code2}, equal to uninterrupted: {not d} {d[:3]}")  # fmt: skip
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)  # never leave the mount behind


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--abs", type=int, default=80, help=".abs records in the mirror")
    ap.add_argument("--pdfs", type=int, default=12, help="PDFs named by id (plus 3 that are not)")
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args()
    if args.kills < 20:
        raise SystemExit("--kills must be at least 20")
    env = {**os.environ, "COLUMNS": "200"}
    work = Path(tempfile.mkdtemp(prefix="mirror-kill-"))
    rng = random.Random(args.seed)
    try:
        mirror = work / "mirror"
        make_mirror(mirror, args.abs, args.pdfs)
        code, err, ref_s = run(mirror, work / "ref", env)
        if code:
            raise SystemExit(f"the uninterrupted run failed: {err}")
        want = state(work / "ref")
        size_mb = sum(p.stat().st_size for p in (work / "ref").rglob("*") if p.is_file()) / 1e6
        counts = {k: len(want[k]) for k in ("ws.paper_meta", "ws.mirror_pdf", "index.rec", "index.pdf", "index.paper")}
        print(f"reference: {ref_s:.1f} s, {size_mb:.1f} MB, {counts} ({load()})", flush=True)
        equal = 0
        for k in range(args.kills):
            home = work / f"k{k}"
            at = rng.uniform(0.5, ref_s)
            code, _, _ = run(mirror, home, env, kill_after=at)
            killed = code == -signal.SIGKILL
            code2, err2, _ = run(mirror, home, env)
            d = diff(state(home), want) if code2 == 0 else [f"rerun failed: {err2.strip()[-300:]}"]
            equal += not d
            print(f"kill {k + 1:2d} at {at:5.1f} s ({'killed' if killed else 'had finished'}): rerun exit {code2}, "
                  f"equal: {not d} {d[:3]} ({load()})", flush=True)  # fmt: skip
            shutil.rmtree(home, ignore_errors=True)
        print(disk_full_trial(mirror, work, env, want, size_mb))
        print(f"mirror_kill: kills {args.kills}, equal after rerun {equal}/{args.kills} ({load()})")
        return 0 if equal == args.kills else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
