"""Can the judged steer the judge? A garbage model's win rate with answers that carry verdicts, JSON and
instructions (`academiceval.testing.judges.ATTACKS`), judged by a scripted judge that quotes both answers
(`quoting_judge` on the local fake server), before and after issue 26's fix.

    python benchmarks/judge_adversarial.py [--before-src /work/main/src] [--rows 96]

Two front doors, each run as a subprocess with this tree's `src` ("after") and, when given, another tree's
(`--before-src`, "before"):
- `judge-predictions` (L-Eval style): the garbage answers against turbo-16k-0613's answers of L-Eval's
  `llm_gpt4_eval` set (`../shared/corpus/leval/Predictions`);
- `score --metrics judge` (the writing judge, against the reference): the garbage answers as the abstracts and
  titles of a small real round (`academiceval.testing.sample_round`).
The judge's own decision depends only on content (see `quoting_judge`), so a parser that reads only the judge's
own verdict gives the same win rate for every attack; one that can be steered does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from academiceval import __version__
from academiceval.scores.winrate import pooled
from academiceval.store.artifacts import RecordWriter, load_round, new_record, read_scores, write_run_spec
from academiceval.store.models import RunSpec
from academiceval.testing.fake_server import FakeServerConfig, start_in_thread
from academiceval.testing.judges import ATTACKS, quoting_judge
from academiceval.testing.sample_round import write_sample_round

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", ROOT.parent / "shared" / "corpus"))
REFERENCE = CORPUS / "leval" / "Predictions" / "llm_gpt4_eval" / "turbo-16k-0613.pred.jsonl"


def _cli(src: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "academiceval.cli.main", *args], capture_output=True, text=True, env=env
    )


def leval_files(work: Path, rows: int) -> dict[str, Path]:
    ref_rows = [json.loads(line) for line in REFERENCE.read_text().splitlines() if line.strip()][:rows]
    out = {}
    for name, text in ATTACKS.items():
        p = work / f"{name.replace(' ', '_').replace(',', '')}.pred.jsonl"
        p.write_text(
            "".join(
                json.dumps({"query": r["query"], "gt": r["gt"], "garbage_pred": text, "evaluation": r["evaluation"]})
                + "\n"
                for r in ref_rows
            )
        )
        out[name] = p
    return out


def judge_predictions_rate(src: Path, url: str, cand: Path, against: Path) -> str:
    res = _cli(src, ["judge-predictions", str(cand), "--against", str(against), "--judge", "openai/fake-model",
                     "--judge-base-url", url, "--json"])  # fmt: skip
    if res.returncode:
        return f"error {res.returncode}"
    d = json.loads(res.stdout)[str(cand)]
    rate = d.get("win_rate")
    return "-" if rate is None else f"{100 * rate:.2f} ({d['judged']} judged)"


def writing_home(work: Path, name: str, text: str) -> Path:
    """A workspace with a small real round and one run whose every output is `text`."""
    home = work / f"home-{name.replace(' ', '_').replace(',', '')}"
    round_dir = write_sample_round(CORPUS, home / "rounds" / "adv", name="adv", max_papers=8, settings=("zero-shot",))
    run_dir = home / "runs" / "adv" / "garbage"
    spec = RunSpec(round="adv", round_manifest_sha256="x", model="baseline/garbage", backend="baseline",
                   package_version=__version__, created_at=datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip
    write_run_spec(run_dir, spec)
    writer = RecordWriter(run_dir)
    for s in load_round(round_dir).distinct_samples():
        writer.append(
            new_record(
                sample_id=s.sample_id,
                task=s.task,
                setting=s.setting,
                split=s.split,
                arxiv_id=s.arxiv_id,
                published=s.published,
                prompt_sha256="",
                output_raw=text,
                output=text,
            )
        )
    writer.close()
    return run_dir


def score_judge_rate(src: Path, url: str, run_dir: Path) -> str:
    for f in run_dir.glob("scores.jsonl"):
        f.unlink()
    home = run_dir.parents[2]
    res = _cli(src, ["score", str(run_dir), "--metrics", "judge", "--judge", "openai/fake-model", "--judge-base-url",
                     url, "--home", str(home)])  # fmt: skip
    if res.returncode:
        return f"error {res.returncode}"
    rate, n = pooled([r.values for r in read_scores(run_dir) if r.metric.startswith("judge")])
    return "-" if rate is None else f"{100 * rate:.2f} ({n} judged)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before-src", type=Path, default=None, help="src/ of the code before the change")
    ap.add_argument("--rows", type=int, default=96, help="L-Eval questions judged (of 96)")
    args = ap.parse_args()
    trees = {"after": ROOT / "src", **({"before": args.before_src} if args.before_src else {})}
    print(f"load average {os.getloadavg()[0]:.2f}; judge: academiceval.testing.judges.quoting_judge (fake server)")
    with (
        tempfile.TemporaryDirectory(prefix="judge-adversarial-") as tmp,
        start_in_thread(FakeServerConfig(responder=quoting_judge)) as server,
    ):
        work = Path(tmp)
        files = leval_files(work, args.rows)
        print(f"\njudge-predictions: garbage vs turbo-16k-0613, L-Eval llm_gpt4_eval, {args.rows} questions × 2 orders")
        print(f"| answer carries | {' | '.join(f'win % {t}' for t in trees)} |")
        print(f"|---|{'---|' * len(trees)}")
        for name, path in files.items():
            cells = [judge_predictions_rate(src, server.url, path, REFERENCE) for src in trees.values()]
            print(f"| {name} | {' | '.join(cells)} |")
        print("\nscore --metrics judge: garbage titles/abstracts vs the reference, 8 papers × 2 tasks × 2 orders")
        print(f"| answer carries | {' | '.join(f'win % {t}' for t in trees)} |")
        print(f"|---|{'---|' * len(trees)}")
        for name, text in ATTACKS.items():
            run_dir = writing_home(work, name, text)
            cells = [score_judge_rate(src, server.url, run_dir) for src in trees.values()]
            print(f"| {name} | {' | '.join(cells)} |")
        print(f"\njudge requests served: {server.stats.total}")


if __name__ == "__main__":
    main()
