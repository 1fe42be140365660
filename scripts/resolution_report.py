#!/usr/bin/env python3
"""How the works a round's Related-Work targets cite were parsed and resolved, per source kind.

    python scripts/resolution_report.py HOME [HOME ...] [--round demo]

For each workspace (a demo home, e.g. the one `academiceval demo --home H` made), reads the round's manifest and
the workspace's stored papers and prints, per kind of citing paper (PDF, unarXive, SCALAR object) and overall:

- cited: references cited inside the related-work sections of the papers the build considered;
- parsed: how many of them carry an arXiv id, a DOI, a title, or none of the three;
- resolved by method (`sources.resolve` methods; a workspace built before issue 25 shows its old method names),
  with and without an abstract;
- unresolved, split into "title-only" (a parsed title, kept as title-only works by the Related-Work task) and
  "nothing to show" (no title);
- Related-Work samples per split.

The workspace database is copied to a temporary directory first, so the script never writes into a home
(safe on a pristine one).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from academiceval.rounds.citations import cited_in_related_work
from academiceval.sources.resolve import resolutions_of
from academiceval.store.workspace import DB_NAME, Workspace

KINDS = {"pdf": "PDF", "unarxive": "unarXive", "scalar": "SCALAR"}


def _copy_db(home: Path, into: Path) -> Workspace:
    for suffix in ("", "-wal", "-shm"):
        src = home / f"{DB_NAME}{suffix}"
        if src.exists():
            shutil.copy2(src, into / src.name)
    return Workspace(into)


def report(home: Path, round_name: str) -> None:
    manifest = json.loads((home / "rounds" / round_name / "manifest.json").read_text(encoding="utf-8"))
    bo = manifest.get("build_options") or {}
    per_sample = (bo.get("validity") or {}).get("citation_resolution") or {}
    with tempfile.TemporaryDirectory(prefix="resolution-report-") as tmp:
        ws = _copy_db(home, Path(tmp))
        rows: dict[str, Counter[str]] = defaultdict(Counter)
        for aid, (_resolved, _cited) in per_sample.items():
            paper = ws.get_paper_by_arxiv(aid)
            if paper is None:
                continue
            kind = KINDS.get(paper.source, paper.source)
            refs = cited_in_related_work(paper)
            links = resolutions_of(ws, paper.paper_id)
            for c in (rows[kind], rows["all"]):
                c["papers"] += 1
                c["cited"] += len(refs)
                c["resolved (manifest)"] += _resolved
            for r in refs:
                has = [bool(r.arxiv_id), bool(getattr(r, "doi", None)), bool(r.title)]
                for c in (rows[kind], rows["all"]):
                    c["arXiv id"] += has[0]
                    c["DOI"] += has[1]
                    c["title"] += has[2]
                    c["none of the three"] += not any(has)
                    link = links.get(r.index)
                    if link is not None:
                        c["recorded"] += 1
                        if link.method:
                            c[f"resolved: {link.method}"] += 1
                            c[
                                "resolved with abstract" if link.work and link.work.abstract else "resolved, title only"
                            ] += 1
                        else:
                            c["unresolved, title-only" if r.title else "unresolved, nothing to show"] += 1
        ws.close()
    print(f"== {home} · round {round_name}")
    cit = bo.get("citations") or {}
    print(f"manifest: cited {cit.get('cited', 0)}, " + ", ".join(f"{k} {v}" for k, v in cit.items() if k != "cited"))
    kinds = [k for k in ("PDF", "unarXive", "SCALAR", "all") if k in rows]
    keys = ["papers", "cited", "arXiv id", "DOI", "title", "none of the three", "resolved (manifest)"]
    keys += sorted(k for k in rows["all"] if k.startswith("resolved: "))
    keys += [
        k
        for k in (
            "resolved with abstract",
            "resolved, title only",
            "unresolved, title-only",
            "unresolved, nothing to show",
        )
        if k in rows["all"]
    ]
    print(f"{'':34}" + "".join(f"{k:>10}" for k in kinds))
    for key in keys:
        print(f"{key:34}" + "".join(f"{rows[k][key]:>10}" for k in kinds))
    splits: Counter[str] = Counter()
    for f in sorted((home / "rounds" / round_name / "jsonl").glob("related_work-*/*.jsonl")):
        if "zero-shot" in f.parent.name:
            splits[f.stem] += sum(1 for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    print(
        "Related-Work zero-shot samples per split: "
        + (", ".join(f"{k} {v}" for k, v in sorted(splits.items())) or "none")
    )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("homes", nargs="+", type=Path)
    ap.add_argument("--round", default="demo")
    args = ap.parse_args()
    for home in args.homes:
        report(home, args.round)


if __name__ == "__main__":
    main()
