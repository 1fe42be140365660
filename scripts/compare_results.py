"""Compare two results.json files (before / after a change): every value of OLD must be identical in NEW.

    python scripts/compare_results.py OLD/results.json NEW/results.json

Prints how many estimates were compared, every differing value (exit status 1 if any), and the fields NEW adds
(additions are allowed: e.g. `std` filled where OLD had null). `generated_at` is ignored.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _walk(old: Any, new: Any, path: str, diffs: list[tuple[str, Any, Any]], added: set[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for k, v in old.items():
            if path == "" and k == "generated_at":
                continue
            if k not in new:
                diffs.append((f"{path}/{k}", v, "<missing>"))
            else:
                _walk(v, new[k], f"{path}/{k}", diffs, added)
        shape = "/".join(p for p in path.split("/") if p and not p.isdigit())
        added.update(f"/{shape}/{k}" for k in new if k not in old)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _walk(a, b, f"{path}/{i}", diffs, added)
    elif old is None and new is not None and path.endswith("/std"):
        added.add("…/std (was null)")
    elif old != new or type(old) is not type(new):
        diffs.append((path, old, new))


def main(argv: list[str]) -> int:
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[1:3])
    diffs: list[tuple[str, Any, Any]] = []
    added: set[str] = set()
    _walk(old, new, "", diffs, added)
    n = sum(len(m["values"]) for r in old["rows"] for m in r["metrics"].values())
    print(f"{argv[1]} vs {argv[2]}: {len(old['rows'])} rows, {n} estimates; differing values: {len(diffs)}")
    for d in diffs[:50]:
        print("  DIFF", *d)
    for f in sorted(added):
        print("  added:", f)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
