#!/usr/bin/env python3
"""Compare two demo workspaces: the round's samples and the leaderboard's numbers.

    python scripts/compare_demo.py BEFORE_HOME AFTER_HOME [--round demo]

Reads only the files (no academiceval import), so it compares the output of any two versions of the package:

- round samples, from `rounds/ROUND/jsonl/*/*.jsonl`: per sample id its split, config, label (sha256) and
  prompt_sha256;
- leaderboard numbers: every number of `reports/ROUND/results.json` rows (metrics and counts), keyed by
  (model, task, setting, path), and every cell of the tables in `reports/ROUND/leaderboard.md`.

Prints equal/different/missing counts per part and the first differences; a number that was null before and
has a value after, or a field only the after side has, is counted as added (a newer results schema), not as a
difference. Exits 1 when any value changed or vanished.
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


def compare(what: str, a: dict[str, object], b: dict[str, object]) -> tuple[bool, bool]:
    """Print the counts; return (no value changed or vanished, nothing was added either)."""
    equal = sum(1 for k in a if k in b and a[k] == b[k])
    filled = [k for k in a if k in b and a[k] is None and b[k] is not None]  # a value where there was none
    diff = [k for k in a if k in b and a[k] != b[k] and k not in filled]
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    print(
        f"{what}: {equal} equal, {len(diff)} different, {len(only_a)} only before"
        f" | added after: {len(filled)} filled (none before), {len(only_b)} new"
    )
    for k in diff[:5]:
        print(f"  different {k}: {a[k]!r} -> {b[k]!r}")
    for k in only_a[:3]:
        print(f"  only before: {k}")
    for kind, keys in (("filled", filled), ("new", only_b)):
        names = sorted({k.rsplit(".", 1)[-1] for k in keys})
        if names:
            print(f"  {kind} fields: {', '.join(names[:8])} (e.g. {keys[0]})")
    return not diff and not only_a, not filled and not only_b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--round", default="demo")
    args = ap.parse_args()
    parts = [
        compare("round samples", round_samples(args.before, args.round), round_samples(args.after, args.round)),
        compare(
            "results.json numbers", results_numbers(args.before, args.round), results_numbers(args.after, args.round)
        ),
        compare(
            "leaderboard.md cells",
            leaderboard_cells(args.before, args.round),
            leaderboard_cells(args.after, args.round),
        ),
    ]
    same = all(s for s, _ in parts)
    if same and all(n for _, n in parts):
        print("identical")
    elif same:
        print("same values; the after side only adds fields")
    else:
        print("DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
