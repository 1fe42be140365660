#!/usr/bin/env python3
"""The distribution behind the quality gate's upper bounds (issue 23 item 6): body words, top-level body sections
and the most repeated heading over every parsed text of a workspace, with the largest texts and what the gate
excludes as "not a paper".

    PYTHONPATH=src python scripts/gate_bounds.py HOME
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter

from academiceval.rounds.quality import NON_BODY_ROLES, default_gate, paper_reason
from academiceval.rounds.tasks import prepare_paper
from academiceval.store.workspace import Workspace


def quantile(values: list[int], f: float) -> int:
    v = sorted(values)
    return v[min(len(v) - 1, int(f * len(v)))]


def main() -> int:
    ws, gate = Workspace(sys.argv[1]), default_gate()
    rows = []
    for paper in ws.iter_papers():
        p, _ = prepare_paper(paper)
        body = [s for s in p.sections if s.role not in NON_BODY_ROLES]
        tops = [s for s in p.sections if s.level == 1 and s.heading and s.role not in NON_BODY_ROLES]
        heads = Counter(s.heading.strip().lower() for s in body if s.heading and s.heading.strip())
        words = sum(len(s.text.split()) for s in body)
        rows.append((words, len(tops), max(heads.values(), default=0), p.arxiv_id or p.paper_id, paper_reason(p, gate)))
    print(f"texts {len(rows)} ({sys.argv[1]})")
    bounds = (gate.max_body_words, gate.max_sections, gate.max_repeated_heading)
    for i, name in enumerate(("body words", "top-level sections", "most repeated heading")):
        v = [r[i] for r in rows]
        print(f"{name}: median {statistics.median(v)}, p99 {quantile(v, 0.99)}, max {max(v)} (gate bound {bounds[i]})")
        print("   largest:", "; ".join(f"{r[3]} {r[i]}" for r in sorted(rows, key=lambda r: -r[i])[:3]))
    print("not a paper (book or guide):", [(r[3], r[4]) for r in rows if r[4] and "book" in r[4]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
