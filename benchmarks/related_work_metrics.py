"""The Related Work metrics on the four baselines of a built round (issue 25): how they separate them.

Runs `cite-copy`, `cite-invent`, `lead` and `extractive` on a round's Related Work samples (zero-shot, the splits
asked) through the ordinary runner, scores them with ROUGE-L, BERTScore, citation faithfulness (precision, recall,
unlisted, reference coverage) and the judge-role metrics (organisation, nugget coverage, claim support), and
prints each as mean [95% bootstrap CI] n, then one sample's output of each baseline with its scores.

Offline there is no LLM to judge with: the judge is the local fake server answering with the scripted lexical
judge of `testing.related_work_judge` (word overlap and paragraph structure, not an LLM's reading) — the real code
path (prompts, quoting, cache, VERDICT parsing), not a real judge's grades. `--judge openai/MODEL --judge-base-url
URL` uses a real one.

    python benchmarks/related_work_metrics.py HOME [--round demo] [--split test --split val --split train]

HOME is a workspace with the round (e.g. the one `academiceval demo --home HOME` made); runs go to
`HOME/runs/ROUND/baseline__*` (shared with the demo's own runs, which cover the test split only).
"""

from __future__ import annotations

import argparse
import os
import textwrap
import time
from collections import Counter
from pathlib import Path

from academiceval.models.registry import load_backend
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.scores.config import ScoreConfig
from academiceval.scores.rescore import score_runs
from academiceval.store.artifacts import Layout, load_round, load_run, read_scores
from academiceval.testing.fake_server import FakeServerConfig, start_in_thread
from academiceval.testing.related_work_judge import related_work_judge

BASELINES = ("cite-copy", "cite-invent", "lead", "extractive")
STRING = ["rouge-l", "bertscore", "citation-precision", "citation-recall", "citation-unlisted", "reference-coverage"]
JUDGED = ["organisation", "nugget-coverage", "claim-support"]


def _cell(s) -> str:  # type: ignore[no-untyped-def]
    e = s.main if s is not None else None
    if e is None or e.mean is None:
        return "—"
    ci = f" [{e.ci_low:.3f}, {e.ci_high:.3f}]" if e.ci_low is not None and e.ci_high is not None else ""
    return f"{e.mean:.3f}{ci} n={e.n}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--round", default="demo")
    ap.add_argument("--split", action="append", default=None)
    ap.add_argument("--judge", default=None, help="a real judge (openai/MODEL); default: the scripted lexical one")
    ap.add_argument("--judge-base-url", default=None)
    ap.add_argument("--no-bertscore", action="store_true", help="skip BERTScore (the slow one on a loaded CPU)")
    args = ap.parse_args()
    splits = args.split or ["test"]
    string = [m for m in STRING if not (args.no_bertscore and m == "bertscore")]
    layout = Layout.of(args.home)
    rdir = layout.round_dir(args.round)
    rnd = load_round(rdir)
    rw = [s for s in rnd.distinct_samples() if s.task == "related_work" and s.setting == "zero-shot"]
    print(f"round {args.round}: {len(rw)} Related Work zero-shot samples; scored splits: {', '.join(splits)}")
    print(f"load average {os.getloadavg()[0]:.1f} (2 shared cores)")
    runs = {}
    t0 = time.perf_counter()
    for b in BASELINES:
        cfg = RunConfig(model=f"baseline/{b}", tasks=["related_work"], settings=["zero-shot"], splits=splits)
        runs[b] = run_round(layout.runs_dir, rdir, cfg).run_dir
        print(f"  ran {b} ({time.perf_counter() - t0:.0f} s)", flush=True)
    held = Counter(r.split for r in load_run(runs[BASELINES[0]], scores=False).records.values())
    # a run directory keeps the records of earlier calls (other splits too); the summaries cover all of them
    print("records per split in the run directories: " + ", ".join(f"{k} {v}" for k, v in sorted(held.items())))
    server = None
    if args.judge:
        judge = load_backend(args.judge, base_url=args.judge_base_url)
        judge_name = args.judge
    else:
        server = start_in_thread(FakeServerConfig(responder=related_work_judge))
        judge = load_backend("openai/fake-model", base_url=server.url)
        judge_name = "scripted lexical judge (testing.related_work_judge) on the local fake server"
    try:
        table = {}
        for b, rd in runs.items():
            (res,) = score_runs([rd], ScoreConfig(metrics=[*string, *JUDGED], after=None), home=args.home, judge=judge)
            by = {}
            for s in res.summary:
                if s.task == "related_work" and s.setting == "zero-shot":
                    by[next((m for m in [*string, *JUDGED] if s.metric.startswith(m)), s.metric)] = s
            table[b] = by
            print(f"  scored {b} ({time.perf_counter() - t0:.0f} s)", flush=True)
    finally:
        if server is not None:
            server.stop()
    print(f"judge: {judge_name}")
    for group in (string, JUDGED):
        width = 34
        print(f"{'baseline':<13}" + "".join(f"{m:<{width}}" for m in group))
        for b in BASELINES:
            print(f"{b:<13}" + "".join(f"{_cell(table[b].get(m)):<{width}}" for m in group))
        print()
    # one sample, every baseline's output and its scores
    sid = sorted(s.sample_id for s in rw if s.split in splits)[0]
    print(f"example: {sid}")
    for b, rd in runs.items():
        recs = {r.metric: r for r in read_scores(rd) if r.sample_id == sid and not r.error}
        out = next((r.output for r in load_run(rd, scores=False).records.values() if r.sample_id == sid), "")
        vals = []
        for m in [*string, *JUDGED]:
            r = next((v for k, v in recs.items() if k.startswith(m)), None)
            if r is not None and r.values:
                key = "f" if "f" in r.values else "score"
                vals.append(f"{m} {r.values.get(key, 0):.2f}")
        print(f"-- {b}: " + ", ".join(vals))
        print(textwrap.indent(textwrap.shorten(out, 600, placeholder=" […]"), "   "))


if __name__ == "__main__":
    main()
