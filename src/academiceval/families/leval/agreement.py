"""L-Eval prediction files as metric rows for `scores.agreement` (metric–human agreement, as L-Eval reports it):
per-answer F1, ROUGE-1/2/L without stemming and the answer's length in words; the setting (with or without the
length instruction) is read off the prompt's wording.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from academiceval.families.leval.scoring import prediction_key, read_prediction_file, task_id
from academiceval.scores.agreement import ALL, MetricScore
from academiceval.scores.leval_text import token_f1
from academiceval.scores.rouge import FastRouge

_LIE = re.compile(
    r"suggested output length is around \d+ words|Answer this question with \d+ words|We need a \d+", re.I
)


def leval_task_index(data_dir: str | Path) -> dict[tuple[str, str], str]:
    """(instruction, reference) → task id over L-Eval's task files, to put a task on human-eval predictions."""
    index: dict[tuple[str, str], str] = {}
    for path in sorted(Path(data_dir).glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                for q, a in zip(doc["instructions"], doc["outputs"], strict=False):
                    index.setdefault((q.strip(), a.strip()), path.stem)
    return index


def metric_rows_from_leval_file(
    path: str | Path, *, model: str | None = None, setting: str | None = None, task_index: dict | None = None
) -> list[MetricScore]:
    rows, _ = read_prediction_file(path)
    if not rows:
        return []
    key = prediction_key(rows[0])
    model = model or task_id(path)
    scorer = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)
    out = []
    for row in rows:
        pred, gold, query = str(row.get(key) or ""), str(row.get("gt", "")), str(row.get("query", ""))
        task = (task_index or {}).get((query.strip(), gold.strip()), "unmatched") if task_index is not None else ALL
        prompt = row.get("prompt")
        row_setting = setting or (("lie" if _LIE.search(prompt) else "no-lie") if prompt else "unknown")
        r = scorer.score(gold, pred)
        values = {
            "f1": token_f1(pred, gold),
            "rouge-1": r["rouge1"].fmeasure,
            "rouge-2": r["rouge2"].fmeasure,
            "rouge-l": r["rougeL"].fmeasure,
            "words": float(len(pred.split())),
        }
        out += [MetricScore(model, m, v, task, row_setting, query) for m, v in values.items()]
    return out
