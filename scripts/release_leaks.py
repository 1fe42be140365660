#!/usr/bin/env python3
"""How many withheld samples of a release can be recovered from its files: the leak check `academiceval release`
runs (`rounds.release_check.check_release`), applied to any release directory, old or new.

    python scripts/release_leaks.py RELEASE_DIR FULL_ROUND_DIR [--json FILE]

The withheld samples are the full round's samples of the splits the release says it withholds
(`manifest.release.withheld_splits`), each under the id the release gives it (`store.release.release_sample_id`
for a release that lists them in `withheld/`, the sample's own id for an older release that blanked labels). A
release made before per-paper withholding (it kept the withheld samples with `label` blank) is measured the same
way, which is how the "every withheld label recoverable" finding is reproduced. Prints the report: withheld papers
and samples, files and texts read, recoverable samples by kind, and the first findings (file, row, field).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from academiceval.rounds.release_check import check_release
from academiceval.store.artifacts import load_round
from academiceval.store.release import release_sample_id


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("full_round", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rel = load_round(args.release)
    info = rel.manifest.release or {}
    splits = info.get("withheld_splits", [])
    listing = bool(info.get("withheld_listing"))
    full = load_round(args.full_round)
    withheld = [
        (release_sample_id(s) if listing else s.sample_id, s) for s in full.distinct_samples() if s.split in splits
    ]
    report = check_release(args.release, withheld)
    kind = "per paper (withheld/ listing)" if listing else "label column blanked"
    print(f"release {args.release} of round {full.name}: withholds {', '.join(splits) or 'nothing'} ({kind})")
    print(f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"withheld papers {report.withheld_papers}, withheld samples {report.withheld_samples}; "
        f"files checked {len(report.files)}, distinct texts {report.texts}, parquet cells {report.parquet_cells}"
    )
    print(f"recoverable: {report.recoverable}/{report.withheld_samples}")
    for k, n in report.by_kind.items():
        print(f"  {k}: {n} samples")
    if report.closest is not None:
        c = report.closest
        print(f"closest withheld text: {c.kind} of {c.sample} in {c.file} [{c.where}]: {c.detail}")
    for f in report.findings[:8]:
        print(f"  e.g. {f.kind} of {f.sample}: {f.file} [{f.where}] {f.detail}")
    if args.json:
        args.json.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
