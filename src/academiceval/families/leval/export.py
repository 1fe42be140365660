"""L-Eval's prediction files from a run of an L-Eval round: `export RUN_DIR --format leval --out DIR`.

One `<task>.pred.jsonl` per L-Eval task id, one row per answered item, in L-Eval's own format — `query`, `gt`,
`<model>_pred`, `evaluation` (the tag that picks the metric), `prompt` — plus our provenance (`sample_id`,
`length_instruction`, `length_words`, `words_cut`, `error`, and `epoch` beyond the first): the rows `leval run` has
always written, so `academiceval score-predictions --format leval`, `judge-predictions` and L-Eval's own
`Evaluation/auto_eval.py` read them. The prediction is the model's text as generated (`output_raw`; L-Eval's
scorers extract answers themselves). `error` is always null: `runs.export` writes answers only.

Registered with `runs.export` when its formats are first looked up (`Family.extensions["export_formats"]`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from academiceval.families.leval.items import FAMILY, render
from academiceval.families.leval.samples import sample_to_item
from academiceval.models.registry import names_local_checkpoint
from academiceval.runs.export import ExportItem, register_format
from academiceval.store.models import RunSpec, Sample


def model_name(spec: RunSpec) -> str:
    """`<model>` of the `<model>_pred` key: the name after the provider (`openai/gpt-4o` → `gpt-4o`; a local
    checkpoint by its folder), as `leval run` named it."""
    name = spec.model.partition("/")[2] or spec.model
    return Path(name).name if names_local_checkpoint(spec.model) else name


def row(item: ExportItem, pred_key: str, *, length_instruction: bool) -> dict[str, Any]:
    it = sample_to_item(item.sample)
    _, _, meta = render(it, length_instruction=length_instruction)
    out: dict[str, Any] = {
        "query": it.instruction,
        "gt": it.label,
        pred_key: item.record.output_raw,
        "evaluation": it.evaluation,
        "prompt": item.prompt,
        "sample_id": it.sample_id,
        "length_instruction": meta["length_instruction"],
        "length_words": meta["length_words"],
        "words_cut": int(item.record.prompt_info.get("words_cut", 0)),
        "error": None,
    }
    if item.record.epoch != 1:
        out["epoch"] = item.record.epoch
    return out


class LEvalFormat:
    name = "leval"
    summary = "L-Eval prediction files, <task>.pred.jsonl (score-predictions --format leval, auto_eval.py)"

    def accepts(self, sample: Sample) -> bool:
        return sample.task == FAMILY

    def files(self, items: Sequence[ExportItem], spec: RunSpec) -> dict[str, str]:
        pred_key = f"{model_name(spec)}_pred"
        by_task: dict[str, list[str]] = defaultdict(list)
        for item in items:  # in the round's order
            line = json.dumps(row(item, pred_key, length_instruction=spec.length_instruction), ensure_ascii=False)
            by_task[item.sample.setting].append(line + "\n")
        return {f"{task}.pred.jsonl": "".join(lines) for task, lines in by_task.items()}


register_format(LEvalFormat())
