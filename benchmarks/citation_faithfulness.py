"""Citation faithfulness on real Related Work samples (issue 15): baselines that copy / invent citation marks.

Builds a round of real Related Work samples from the unarXive sample (`testing.related_work`), runs the
baselines through the ordinary runner (`runs.runner.run_round`), scores them with `citation-precision`,
`citation-recall`, `citation-unlisted` and ROUGE-L (`scores.rescore.score_runs`) and prints one table.

    python benchmarks/citation_faithfulness.py [--corpus ../shared/corpus] [--home /tmp/cite-bench]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.scores.config import ScoreConfig
from academiceval.scores.rescore import score_runs
from academiceval.store.artifacts import Layout
from academiceval.testing.related_work import ROUND, write_related_work_round

BASELINES = ("cite-copy", "cite-invent", "lead", "extractive")
METRICS = ["citation-precision", "citation-recall", "citation-unlisted", "rouge-l"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--home", type=Path, default=None)
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="cite-bench-"))
    layout = Layout.of(home)
    rdir = layout.round_dir(ROUND)
    if rdir.exists():
        shutil.rmtree(rdir)
    write_related_work_round(args.corpus, rdir)
    print(f"round: {rdir}")
    rows = []
    for b in BASELINES:
        summary = run_round(layout.runs_dir, rdir, RunConfig(model=f"baseline/{b}"))
        run_dir = summary.run_dir
        (res,) = score_runs([run_dir], ScoreConfig(metrics=METRICS), home=home)
        vals = {s.metric: s for s in res.summary}
        cells = []
        for m in METRICS:
            s = vals.get(m)
            e = s.main if s else None
            cells.append(
                "—" if e is None or e.mean is None else f"{e.mean:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}] n={e.n}"
            )
        rows.append((b, *cells))
    width = max(len(c) for r in rows for c in r[1:]) + 2
    print(f"{'baseline':<14}" + "".join(f"{m:<{width}}" for m in METRICS))
    for r in rows:
        print(f"{r[0]:<14}" + "".join(f"{c:<{width}}" for c in r[1:]))


if __name__ == "__main__":
    main()
