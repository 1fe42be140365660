#!/usr/bin/env python3
"""Compare two workspaces: every round's samples and every report's numbers that both have.

    python scripts/compare_demo.py BEFORE_HOME AFTER_HOME [--round NAME ...]

Reads only the files (no academiceval import), so it compares the output of any two versions of the package. It
compares every round (`rounds/NAME/manifest.json`) and every report (`reports/NAME/results.json`) found in the two
homes and in workspaces nested one level down (the demo's lab workspace, `HOME/lab`); `--round` keeps only the
rounds and reports of those names. Per round and report:

- round samples, from `rounds/NAME/jsonl/*/*.jsonl`: per sample id its split, config, label (sha256) and
  prompt_sha256;
- leaderboard numbers: every number of `reports/NAME/results.json` rows (metrics and counts), keyed by
  (model, task, setting, path), and every cell of the tables in `reports/NAME/leaderboard.md`.

Prints equal/different/missing counts per part and the first differences; a number that was null before and
has a value after, or a field only the after side has, is counted as added (a newer results schema), not as a
difference. A round or report only one home has is listed. Exits 1 when any value changed or vanished.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def found(home: Path, kind: str, marker: str) -> set[str]:
    """`rounds/NAME` / `reports/NAME` (relative to `home`) holding `marker`, in `home` and nested workspaces."""
    out = set()
    for pattern in (f"{kind}/*/{marker}", f"*/{kind}/*/{marker}"):
        out |= {p.parent.relative_to(home).as_posix() for p in home.glob(pattern)}
    return out


def round_samples(home: Path, rel: str) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for f in sorted((home / rel / "jsonl").glob("*/*.jsonl")):
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


def results_numbers(home: Path, rel: str) -> dict[str, object]:
    data = json.loads((home / rel / "results.json").read_text(encoding="utf-8"))
    out: dict[str, object] = {}
    for row in data.get("rows", []):
        key = f"{row.get('model')}|{row.get('task')}|{row.get('setting')}"
        for part in ("metrics", "counts", "mean_output_tokens", "mean_input_tokens"):
            if part in row:
                _flatten(f"{key}|{part}", row[part], out)
    return out


def leaderboard_cells(home: Path, rel: str) -> dict[str, str]:
    out: dict[str, str] = {}
    table, header = 0, None
    for line in (home / rel / "leaderboard.md").read_text(encoding="utf-8").splitlines():
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
    ap.add_argument("--round", action="append", default=[], help="only rounds and reports of this name (repeatable)")
    args = ap.parse_args()
    a, b = args.before, args.after
    parts: list[tuple[bool, bool]] = []
    for kind, marker in (("rounds", "manifest.json"), ("reports", "results.json")):
        have_a, have_b = found(a, kind, marker), found(b, kind, marker)
        if args.round:
            have_a, have_b = ({r for r in s if r.rsplit("/", 1)[-1] in args.round} for s in (have_a, have_b))
        for rel in sorted(have_a ^ have_b):
            print(f"{rel}: only {'before' if rel in have_a else 'after'}")
            parts.append((rel in have_b, rel in have_a))  # a vanished round or report is a difference
        for rel in sorted(have_a & have_b):
            print(f"== {rel}")
            if kind == "rounds":
                parts.append(compare("  round samples", round_samples(a, rel), round_samples(b, rel)))
            else:
                parts.append(compare("  results.json numbers", results_numbers(a, rel), results_numbers(b, rel)))
                parts.append(compare("  leaderboard.md cells", leaderboard_cells(a, rel), leaderboard_cells(b, rel)))
    if not parts:
        print("nothing to compare: no round or report in both homes")
        return 1
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
