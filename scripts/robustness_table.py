"""The robustness catalogue as a table: every probe of `tests/robustness/catalogue` run (the whole importer ×
damage matrix, not the test's rotated sample), with `--kills` kill -9 trials per interrupted command, and the
outcome counted per surface × class.

    PYTHONPATH=src python scripts/robustness_table.py [--kills 20] [--seed 26] [--only SURFACE ...] [--details]

Outcomes (`catalogue/probes.py`): handled, crash, unclear, stopped, damaged, differs. Exit status 1 if any probe
was not handled. Workspaces go to a temporary folder removed at exit. The machine load is printed with the
figures (the kill trials' timing depends on it; the outcomes must not).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the catalogue lives with the tests

from tests.robustness.catalogue import probes  # noqa: E402
from tests.robustness.catalogue.inputs import IMPORTERS, elaip_rows  # noqa: E402
from tests.robustness.catalogue.rows import jsonl  # noqa: E402

CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", "/work/shared/corpus"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20, help="kill trials per interrupted command (2 kills each)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--only", nargs="*", help="surfaces to probe (default: all)")
    ap.add_argument("--details", action="store_true", help="print every probe that was not handled")
    args = ap.parse_args()
    wanted = set(args.only or [])
    found: list[probes.Probe] = []
    t_start = time.perf_counter()
    print(f"load at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="robust-table-") as t:
        tmp = Path(t)
        n = 0

        def case_dir() -> Path:
            nonlocal n
            n += 1
            return tmp / f"case{n}"

        for imp in IMPORTERS:
            if wanted and imp.command not in wanted:
                continue
            valid = probes.probe_importer(imp, None, case_dir(), CORPUS)
            if valid.outcome == "handled" and not valid.detail.startswith(f"exit {imp.valid_exit}"):
                valid.outcome = "stopped"  # the valid input alone did not import
            found.append(valid)
            for damage in imp.damages:
                got = probes.probe_importer(imp, damage, case_dir(), CORPUS)
                found.append(probes.rest_goes_on(imp, damage, imp.valid_exit, got))
        print(f"importers: {len(found)} probes, {time.perf_counter() - t_start:.0f} s", flush=True)

        master = probes.destination_home(CORPUS, tmp / "dest" / "parent" / "ws")
        rows = tmp / "dest" / "elabench.jsonl"
        rows.write_bytes(jsonl(elaip_rows(CORPUS)))
        for case, (surface, _argv) in probes.destinations(CORPUS, master, rows).items():
            if wanted and surface not in wanted:
                continue
            d = case_dir()
            home = d / "parent" / "ws"
            shutil.copytree(master, home)
            (d / "parent" / "sibling.txt").write_text("beside the workspace\n")
            argv = probes.destinations(CORPUS, home, rows)[case][1]
            found.append(probes.probe_destination(case, surface, argv, home))
        for surface in probes.home_file_argv(CORPUS, tmp):
            if wanted and surface not in wanted:
                continue
            d = case_dir()
            d.mkdir()
            found.append(probes.probe_home_is_a_file(surface, probes.home_file_argv(CORPUS, d)[surface], d))
        print(f"+ destinations, --home a file: {len(found)} probes, {time.perf_counter() - t_start:.0f} s", flush=True)

        if args.kills:
            for ks in probes.kill_surfaces(CORPUS, tmp / "kill-masters"):
                if wanted and ks.surface not in wanted:
                    continue
                reference, duration = probes.uninterrupted(ks, tmp)
                rng = random.Random(f"{args.seed}-{ks.surface}")
                landed = 0
                for _ in range(args.kills):
                    p = probes.kill_trial(ks, tmp, reference, duration, rng, kills=2)
                    landed += int(p.detail.split("/")[0]) if p.outcome == "handled" else 0
                    found.append(p)
                print(
                    f"kill -9: {ks.surface}: {args.kills} trials × 2 kills in [0, {duration:.1f} s), {landed} kills "
                    f"landed before the end, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    table: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for p in found:
        table[(p.surface, p.cls)][p.outcome] += 1
    print()
    print(f"{'surface':<20} {'class':<44} {'probes':>6}  outcome")
    for (surface, cls), c in sorted(table.items()):
        shown = ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (kv[0] != "handled", kv[0])))
        print(f"{surface:<20} {cls:<44} {sum(c.values()):>6}  {shown}")
    total = Counter(p.outcome for p in found)
    print(f"\n{len(found)} probes: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    print(f"{time.perf_counter() - t_start:.0f} s, load at end: {os.getloadavg()}")
    bad = [p for p in found if p.outcome != "handled"]
    if args.details:
        for p in bad:
            print(f"  {p.outcome}: {p.surface} / {p.cls} / {p.case}: {p.detail[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
