#!/usr/bin/env python3
"""Compare two demo workspaces: the round's samples and the leaderboard's numbers.

    python scripts/compare_demo.py BEFORE_HOME AFTER_HOME [--round demo]

Reads only the files (no academiceval import), so it compares the output of any two versions of the package:

- round samples, from `rounds/ROUND/jsonl/*/*.jsonl`: per sample id its split, config, label (sha256) and
  prompt_sha256;
- leaderboard numbers: every number of `reports/ROUND/results.json` rows (metrics and counts), keyed by
  (model, task, setting, path), and every cell of the tables in `reports/ROUND/leaderboard.md`.

Prints equal/different/missing counts per part and the first differences; exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def round_samples(home: Path, name: str) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for f in sorted((home / "rounds" / name / "jsonl").glob("*/*.jsonl")):
        config = f.parent.name
        for line in f.read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            label = hashlib.sha256(s["label"].encode()).hexdigest()[:16]
            out[f"{config}/{s['sample_id']}"] = (s["split"], label, s["prompt_sha256"], s.get("input_tokens"))
    return out


def _flatten(prefix: str, obj: object, out: dict[str, object]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}", v, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _flatten(f"{prefix}[{i}]", v, out)
    elif (isinstance(obj, int | float) and not isinstance(obj, bool)) or obj is None:
        out[prefix] = obj


def results_numbers(home: Path, name: str) -> dict[str, object]:
    data = json.loads((home / "reports" / name / "results.json").read_text(encoding="utf-8"))
    out: dict[str, object] = {}
    for row in data.get("rows", []):
        key = f"{row.get('model')}|{row.get('task')}|{row.get('setting')}"
        for part in ("metrics", "counts", "mean_output_tokens", "mean_input_tokens"):
            if part in row:
                _flatten(f"{key}|{part}", row[part], out)
    return out


def leaderboard_cells(home: Path, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    table, header = 0, None
    for line in (home / "reports" / name / "leaderboard.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            table += 1
            header = cells
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        for col, cell in zip(header[1:], cells[1:], strict=False):
            out[f"table{table}|{cells[0]}|{col}"] = cell
    return out


def compare(what: str, a: dict[str, object], b: dict[str, object]) -> bool:
    """Every value before must be equal after. Values only after (new fields, or a null before that is now
    filled, e.g. each estimate's `std`) are listed as additions, not differences."""
    equal = sum(1 for k in a if k in b and a[k] == b[k])
    diff = [k for k in a if k in b and a[k] != b[k] and a[k] is not None]
    only_a = sorted(set(a) - set(b))
    only_b = sorted((set(b) - set(a)) | {k for k in a if k in b and a[k] is None and b[k] is not None})
    print(f"{what}: {equal} equal, {len(diff)} different, {len(only_a)} only before, {len(only_b)} added after")
    for k in diff[:5]:
        print(f"  different {k}: {a[k]!r} -> {b[k]!r}")
    for k in only_a[:3]:
        print(f"  only before: {k}")
    for k in only_b[:3]:
        print(f"  added after: {k}")
    return not diff and not only_a


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--round", default="demo")
    args = ap.parse_args()
    ok = compare("round samples", round_samples(args.before, args.round), round_samples(args.after, args.round))
    ok &= compare(
        "results.json numbers", results_numbers(args.before, args.round), results_numbers(args.after, args.round)
    )
    ok &= compare(
        "leaderboard.md cells", leaderboard_cells(args.before, args.round), leaderboard_cells(args.after, args.round)
    )
    print("identical" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
