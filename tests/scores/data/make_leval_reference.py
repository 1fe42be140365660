"""Regenerate `leval_reference.json`: L-Eval's own `Evaluation/auto_eval.py` run on every prediction file.

Nothing of L-Eval is copied into this repository. The script materialises L-Eval's evaluation scripts from a
local git snapshot of `OpenLMLab/LEval` into a temporary directory, runs them unchanged (one subprocess per
prediction file, exactly as L-Eval's README says: `python Evaluation/auto_eval.py --pred_file FILE`), and parses
what they print. `tests/scores/test_leval_parity.py` compares our scorer with the recorded numbers.

The reference environment needs what L-Eval's scripts import, which our venv does not have:
`datasets<3` (L-Eval subclasses `datasets.Metric`, removed in datasets 3), `rouge_score`, `nltk`. Command used:

    python3 -m venv /work/scratch-leval/refvenv
    /work/scratch-leval/refvenv/bin/pip install "datasets<3" rouge_score nltk
    python tests/scores/data/make_leval_reference.py \
        --leval-git /work/.mirror/OpenLMLab+LEval/repo \
        --python /work/scratch-leval/refvenv/bin/python \
        --predictions ../shared/corpus/leval/Predictions

nltk's English punkt model cannot be downloaded here (no network beyond package registries), so `nltk.sent_tokenize`
runs on an *untrained* punkt model (empty parameter files in a temporary NLTK_DATA). L-Eval only uses the sentence
split to put newlines between sentences before ROUGE; rouge-score's tokenizer treats newlines like spaces, so
rouge1/rouge2/rougeL do not depend on where the breaks fall (only rougeLsum does, which L-Eval computes but never
displays). To show that on this data, every ROUGE file is scored a second time with `nltk.sent_tokenize` replaced
by "no split at all" (`reference_nosplit`); the test asserts both runs agree on rouge1/rouge2/rougeL.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "leval_reference.json"
GROUPS = ("exam_eval", "ngram_eval")
_NOSPLIT_RUNNER = (
    "import os, sys, runpy, nltk\n"
    "sys.path.insert(0, os.path.abspath('Evaluation'))\n"
    "nltk.sent_tokenize = lambda text, *a, **k: [text]\n"
    "sys.argv = ['auto_eval.py', '--pred_file', sys.argv[1]]\n"
    "runpy.run_path('Evaluation/auto_eval.py', run_name='__main__')\n"
)


def materialise(git_dir: Path, dest: Path) -> str:
    commit = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    paths = ["Evaluation", "Baselines/LEval_config.py", "Tools/jsonl_utils.py"]
    blob = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, *paths], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest, filter="data")
    punkt = dest / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    punkt.mkdir(parents=True)
    for name in ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab"):
        (punkt / name).write_text("")
    return commit


def parse_output(text: str) -> dict[str, float]:
    """L-Eval prints a metrics dict (or three/two per-part dicts plus an average); keep the numbers."""
    out: dict[str, float] = {}
    parts = re.findall(r"^first (\d) sentence retrieval score: (\{.*\})$", text, flags=re.M)
    if parts:
        for pos, blob in parts:
            d = ast.literal_eval(blob)
            out[f"first_{pos}_sentence_retrieval/exact_match"] = d["exact_match"]
        avg = re.search(r"^average score of the 1st/2nd/3rd sentence retrieval: (\S+)$", text, flags=re.M)
        out["average_1st_2nd_3rd/exact_match"] = float(avg.group(1))
        return out
    dicts = [ln for ln in text.splitlines() if ln.startswith("{") and "display_keys" in ln]
    d = ast.literal_eval(dicts[-1])
    for key, value in d.items():
        if isinstance(value, (int, float)):
            out[key] = value
    return out


def run_one(py: str, src: Path, pred: Path, *, nosplit: bool) -> dict[str, float]:
    env = dict(os.environ, NLTK_DATA=str(src / "nltk_data"), HF_DATASETS_OFFLINE="1", PYTHONWARNINGS="ignore")
    pred = pred.resolve()
    if nosplit:
        cmd = [py, "-c", _NOSPLIT_RUNNER, str(pred)]
    else:
        cmd = [py, "Evaluation/auto_eval.py", "--pred_file", str(pred)]
    proc = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{pred}: L-Eval's auto_eval failed:\n{proc.stderr[-2000:]}")
    return parse_output(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--leval-git", type=Path, default=Path("/work/.mirror/OpenLMLab+LEval/repo"))
    ap.add_argument("--python", default=sys.executable, help="interpreter with datasets<3, rouge_score, nltk")
    ap.add_argument("--predictions", type=Path, default=Path("../shared/corpus/leval/Predictions"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    versions = subprocess.run(
        [
            args.python,
            "-c",
            "import datasets, nltk, rouge_score.rouge_scorer as r, importlib.metadata as m; "
            "print(datasets.__version__, nltk.__version__, m.version('rouge_score'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = sorted(p for g in GROUPS for p in (args.predictions / g).glob("*/*.pred.jsonl"))
    result: dict = {"files": {}}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        commit = materialise(args.leval_git, src)
        for pred in files:
            rel = pred.relative_to(args.predictions).as_posix()
            entry = {"reference": run_one(args.python, src, pred, nosplit=False)}
            if "rouge/rougeL" in entry["reference"]:
                entry["reference_nosplit"] = run_one(args.python, src, pred, nosplit=True)
            result["files"][rel] = entry
            print(rel, entry["reference"], flush=True)
    result["provenance"] = {
        "leval_commit": commit,
        "command": "python Evaluation/auto_eval.py --pred_file Predictions/<group>/<model>/<task>.pred.jsonl",
        "datasets": versions[0],
        "nltk": versions[1],
        "rouge_score": versions[2],
        "punkt": "untrained (empty punkt_tab/english); see module docstring",
        "rounding": "L-Eval rounds every metric to 4 decimals (the topic average is the mean of rounded parts)",
    }
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out} ({len(files)} files)")


if __name__ == "__main__":
    main()
