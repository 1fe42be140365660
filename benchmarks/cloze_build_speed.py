"""Build speed of the filtered cloze construction: this tree against a baseline source tree, interleaved.

    PYTHONPATH=src python benchmarks/cloze_build_speed.py --baseline-src DIR [--home WS] [--repeats 5]
    PYTHONPATH=src python benchmarks/cloze_build_speed.py --baseline-src DIR --round ROUND_DIR [--repeats 5]

Each build runs in its own process (`python -c`, the tree's `src` first on the path) on a fresh copy of the same
workspace database (default: a workspace holding SCALAR's 6 annotated paper objects and its ICLR-2025
metadata, indexed here), with the default options (filtered construction, no cutoff, seed 0), so both contenders
build the same N questions. Contenders alternate (baseline, this tree, baseline, …), `--repeats` times each; the
machine load is printed with every build. Items are compared build by build (sample id, gold slot, prompt
sha256 of every level): the speed-ups must not change a single item. Ratio = median baseline / median this tree.

`--round`: the guesser table alone (`families.cloze.guess.guesser_accuracy`, every guesser with its bootstrap CI,
the fitted ones cross-validated) on a built round's items, the part of a build that grows with its item count;
the tables must be equal. (A build also skips this refit entirely for levels the level check ended on.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()
BUILD = """
import hashlib, json, sys, time
from academiceval.families.cloze.build import build_cloze_round
from academiceval.store import Workspace
ws = Workspace(sys.argv[1])
t = time.perf_counter()
rep = build_cloze_round(ws, "speed", cutoff=None, overrides={"max_questions": 100}, seed=0, force=True)
secs = time.perf_counter() - t
items = {lv: [(it.sample_id, it.gold, it.prompt_sha256) for it in v] for lv, v in sorted(rep.items.items())}
print(json.dumps({"seconds": secs, "n": {lv: len(v) for lv, v in items.items()},
                  "digest": hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16],
                  "guessers": rep.guessers}))
"""

TABLE = """
import hashlib, json, sys, time
from academiceval.families.cloze.export import load_items
from academiceval.families.cloze.guess import as_json, guesser_accuracy
from academiceval.store.artifacts import load_round
items = list(load_items(load_round(sys.argv[1], verify=False)))
t = time.perf_counter()
table = as_json(guesser_accuracy(items, seed=0))
secs = time.perf_counter() - t
digest = hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps({"seconds": secs, "n": len(items), "digest": digest, "guessers": {}}))
"""


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load {a:.2f} {b:.2f} {c:.2f}"


def table_of(src: Path, round_dir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run(
        [sys.executable, "-c", TABLE, str(round_dir)], env=env, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def one(src: Path, home: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="cloze-speed-"))
    try:
        for f in home.iterdir():
            if f.is_file() and f.name.startswith("academiceval.sqlite"):
                shutil.copy2(f, tmp / f.name)
        env = {**os.environ, "PYTHONPATH": str(src), "TOKENIZERS_PARALLELISM": "false"}
        out = subprocess.run(
            [sys.executable, "-c", BUILD, str(tmp)], env=env, check=True, capture_output=True, text=True
        ).stdout
        return json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-src", required=True, help="the baseline tree's src directory")
    ap.add_argument("--home", default=None, help="workspace to build from (default: SCALAR's 6 annotated objects)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--round", default=None, help="time the guesser table on this built round's items instead")
    args = ap.parse_args()
    home = Path(args.home) if args.home else None
    if home is None and args.round is None:
        sys.path.insert(0, str(REPO / "src"))
        from academiceval.sources.mirror.workspace import index_mirror
        from academiceval.store import Workspace

        home = Path(tempfile.mkdtemp(prefix="cloze-speed-home-"))
        ws = Workspace(home)
        index_mirror(ws, CORPUS / "samples" / "scalar_paper_obj_anno")
        index_mirror(ws, CORPUS / "metadata" / "scalar_iclr2025_metadata.json")
        ws.close()
    contenders = {"baseline": Path(args.baseline_src).resolve(), "this tree": REPO / "src"}
    times: dict[str, list[float]] = {k: [] for k in contenders}
    digests: dict[str, set[str]] = {k: set() for k in contenders}
    guessers: dict[str, str] = {}
    print(f"{'round ' + args.round if args.round else f'workspace {home}'}; {load()}")
    for r in range(args.repeats):
        for name, src in contenders.items():
            got = table_of(src, Path(args.round)) if args.round else one(src, home)
            times[name].append(got["seconds"])
            digests[name].add(got["digest"])
            guessers[name] = json.dumps(got["guessers"], sort_keys=True)
            print(f"repeat {r + 1} {name:9s} {got['seconds']:7.1f}s items {got['n']} digest {got['digest']} {load()}")
    for name, ts in times.items():
        print(f"{name:9s} median {statistics.median(ts):.1f}s min {min(ts):.1f}s max {max(ts):.1f}s n={len(ts)}")
    ratio = statistics.median(times["baseline"]) / statistics.median(times["this tree"])
    print(f"ratio baseline / this tree (medians): {ratio:.2f}x; {load()}")
    same = digests["baseline"] == digests["this tree"] and len(digests["baseline"]) == 1
    print(f"items identical across every build: {same}; guesser tables identical: {len(set(guessers.values())) == 1}")


if __name__ == "__main__":
    main()
