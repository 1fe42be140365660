#!/usr/bin/env python3
"""What a cheaper BERTScore window geometry does to a workspace's scores and rankings (issue 27 item 1).

    academiceval score RUN_DIR... --metrics bertscore --metric-arg bertscore.window_stride=446
    python scripts/bertscore_geometry.py RUN_DIR...

Reads the runs' score records (`store.artifacts.read_scores`) and compares, sample by sample, the default
geometry's metric (`bertscore-<model>-L<layer>-window`, windows every half window) with every other geometry scored
beside it (`...-window-strideN`, from `bertscore.window_stride=N`). Prints per geometry: max / mean |P|, |R|, |F|
differences, how many samples moved by more than 1e-4 and 0.01, the mean F per (task, setting) and run before and
after, and whether the order of the runs within each (task, setting) changed (what a leaderboard shows).
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from pathlib import Path

from academiceval.store.artifacts import read_scores

DEFAULT = re.compile(r"^bertscore-.*-window$")
OTHER = re.compile(r"^(bertscore-.*-window)-stride(\d+)$")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    args = ap.parse_args()
    # values[geometry][run][(task, setting, sample_id)] = (p, r, f); geometry "default" or the stride
    values: dict[str, dict[str, dict[tuple[str, str, str], tuple[float, float, float]]]] = defaultdict(dict)
    for rd in args.runs:
        for rec in read_scores(rd):  # later lines win
            if rec.error or not rec.values:
                continue
            m = OTHER.match(rec.metric)
            geometry = f"stride {m.group(2)}" if m else ("default" if DEFAULT.match(rec.metric) else None)
            if geometry is None:
                continue
            key = (rec.task, rec.setting, rec.sample_id)
            values[geometry].setdefault(rd.name, {})[key] = (rec.values["p"], rec.values["r"], rec.values["f"])
    base = values.pop("default", {})
    if not base or not values:
        raise SystemExit("need the default windows and at least one bertscore.window_stride=N in the same runs")
    for geometry, runs in sorted(values.items()):
        diffs: list[tuple[float, float, float]] = []
        means: dict[tuple[str, str], dict[str, tuple[list[float], list[float]]]] = defaultdict(dict)
        for run, scored in runs.items():
            for key, new in scored.items():
                old = base.get(run, {}).get(key)
                if old is None:
                    continue
                diffs.append((abs(new[0] - old[0]), abs(new[1] - old[1]), abs(new[2] - old[2])))
                cell = means[key[:2]].setdefault(run, ([], []))
                cell[0].append(old[2])
                cell[1].append(new[2])
        print(f"\n{geometry} vs the default windows: {len(diffs)} samples in {len(runs)} runs")
        for i, name in enumerate("PRF"):
            col = [d[i] for d in diffs]
            print(
                f"  |{name} diff| max {max(col):.4f} mean {statistics.mean(col):.4f}; > 1e-4: "
                f"{sum(x > 1e-4 for x in col)}, > 0.01: {sum(x > 0.01 for x in col)}"
            )
        changed = 0
        print(f"  {'task / setting':<34} {'run':<24} {'mean F default':>14} {'mean F new':>10} {'diff':>8}")
        for (task, setting), cells in sorted(means.items()):
            for run, (old, new) in sorted(cells.items()):
                mo, mn = statistics.mean(old), statistics.mean(new)
                print(f"  {task + ' / ' + setting:<34} {run:<24} {mo:14.4f} {mn:10.4f} {mn - mo:+8.4f}")
            order_old = sorted(cells, key=lambda r: -statistics.mean(cells[r][0]))
            order_new = sorted(cells, key=lambda r: -statistics.mean(cells[r][1]))
            if order_old != order_new:
                changed += 1
                print(f"  ORDER CHANGED in {task} / {setting}: {order_old} -> {order_new}")
        print(f"  run order changed in {changed} of {len(means)} (task, setting) cells")


if __name__ == "__main__":
    main()
