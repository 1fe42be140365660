"""Run ElaipBench-format items with any backend, in any setting, N times (ElaipBench averages 3 runs).

Returns the raw responses with what each prompt held; `scores.elaip.score_answer` scores them strictly. Base
setting as in ElaipBench: temperature 0.1 and 32 new tokens; with `cot=True`, the step-by-step suffix and 4096.
Each repetition is a separate request (`options.seed` = the run index when the backend honours seeds), so a
response cache keyed on the options does not collapse the N runs into one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from academiceval.families.elaip.items import ElaipItem, context_for, render
from academiceval.runs.leval import text_of


def retrieval_for(setting: str, *, model: str | None = None) -> tuple[Any, Callable[[str], int]]:
    """(retriever, token counter) for `rag-bm25` / `rag-dense`: bm25s or a sentence model (default the packaged
    all-MiniLM-L6-v2), and the packaged WordPiece counter for the ~512-token passages."""
    from academiceval.models.rag.retrievers import get_retriever
    from academiceval.models.tokenize import load_tokenizer

    return get_retriever(setting.removeprefix("rag-"), model=model), load_tokenizer(None).count


async def run_items(
    items: Sequence[ElaipItem],
    backend: Any,
    *,
    setting: str = "full",
    runs: int = 3,
    cot: bool = False,
    top_k: int = 5,
    concurrency: int = 4,
) -> list[list[dict[str, Any]]]:
    """`runs` lists of {sample_id, response, error, context meta}, one list per repetition."""
    from academiceval.models.base import GenerationOptions

    retriever, count = retrieval_for(setting) if setting.startswith("rag-") else (None, None)
    prompts = []
    for item in items:
        context, meta = context_for(item, setting, top_k=top_k, retriever=retriever, count=count)
        prompts.append((item, render(item, context, cot=cot), meta))
    sem = asyncio.Semaphore(concurrency)

    async def one(run: int, item: ElaipItem, prompt: str, meta: dict) -> dict[str, Any]:
        opts = GenerationOptions(temperature=0.1, max_tokens=4096 if cot else 32, seed=run)
        async with sem:
            try:
                text, error = text_of(await backend.generate(prompt, opts)), None
            except Exception as e:  # recorded; scored as unparsed
                text, error = "", f"{type(e).__name__}: {e}"
        return {"sample_id": item.sample_id, "run": run, "response": text, "error": error, "context": meta}

    return [list(await asyncio.gather(*(one(r, *p) for p in prompts))) for r in range(runs)]
