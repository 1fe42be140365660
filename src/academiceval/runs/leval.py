"""Run an imported L-Eval round with any backend into L-Eval prediction files (`<out>/<task>.pred.jsonl`).

Rows are L-Eval's own prediction format (`query`, `gt`, `<model>_pred`, `evaluation`, `prompt`) plus our
provenance (`sample_id`, `length_instruction`, `length_words`, `words_cut`, `error`), so
`academiceval score-predictions --format leval`, `judge-predictions` — or L-Eval's own `auto_eval.py` — read them.
`backend` is anything with `async generate(prompt, options)`: a models backend or the one call path
(`models.generate.Generator`, whose `Generated` is unwrapped).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from academiceval.families.leval.items import MAX_NEW_TOKENS, LEvalItem
from academiceval.families.leval.round import build_prompt
from academiceval.models.base import Capabilities
from academiceval.models.baselines import leval_lead


def text_of(result: object) -> str:
    """The answer text of `backend.generate(...)` (a Completion) or of the one call path (a Generated)."""
    unwrap = getattr(result, "unwrap", None)
    completion = unwrap() if callable(unwrap) else result
    return str(getattr(completion, "text", "") or "")


async def run_items(
    items: Sequence[LEvalItem],
    backend: Any,
    out_dir: str | Path,
    *,
    length_instruction: bool = True,
    budget_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
    concurrency: int = 4,
    options: Any = None,
) -> dict[str, Path]:
    """Ask `backend.generate(prompt, options)` for every item; write `<out_dir>/<task>.pred.jsonl` per task.

    A failed call is recorded in the row's `error` with an empty prediction (scored as wrong), never dropped."""
    from academiceval.models.base import GenerationOptions

    opts = options or GenerationOptions(temperature=0.0, max_tokens=MAX_NEW_TOKENS)
    sem = asyncio.Semaphore(concurrency)
    pred_key = f"{getattr(backend, 'model', 'model')}_pred"

    async def one(item: LEvalItem) -> dict[str, Any]:
        prompt, meta = build_prompt(
            item, length_instruction=length_instruction, budget_tokens=budget_tokens, count=count
        )
        async with sem:
            try:
                text, error = text_of(await backend.generate(prompt, opts)), None
            except Exception as e:  # recorded per item, the batch goes on
                text, error = "", f"{type(e).__name__}: {e}"
        return {
            "query": item.instruction,
            "gt": item.label,
            pred_key: text,
            "evaluation": item.evaluation,
            "prompt": prompt,
            "sample_id": item.sample_id,
            "length_instruction": meta["length_instruction"],
            "length_words": meta["length_words"],
            "words_cut": meta["words_cut"],
            "error": error,
        }

    rows = await asyncio.gather(*(one(it) for it in items))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item, row in zip(items, rows, strict=True):
        by_task[item.task].append(row)
    written = {}
    for task, task_rows in by_task.items():
        path = out_dir / f"{task}.pred.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in task_rows), encoding="utf-8")
        written[task] = path
    return written


@dataclass(frozen=True)
class _Answer:
    text: str


class LeadBaseline:
    """A model-free reference point, reading only the prompt (`models.baselines.leval_lead`, the same answer as
    `academiceval run --model baseline/leval-lead`): option "A" for multiple choice, else the first N words of the
    document (N from the length instruction, 60 without one)."""

    name = "baseline"
    model = "leval-lead"
    capabilities = Capabilities()

    def cache_identity(self) -> dict[str, Any]:
        return {"backend": "baseline", "model": self.model, "version": 1}

    async def aclose(self) -> None:
        return None

    async def generate(self, prompt: str, options: Any, sample: Any = None) -> Any:
        return _Answer(leval_lead(prompt))
