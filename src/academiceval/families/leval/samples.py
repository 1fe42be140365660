"""An L-Eval item as a round `Sample` and back, so L-Eval rounds use the one round format and its one reader.

Why: `academiceval run`, `score` and `report` know rounds of `Sample`s only. Following the citation-cloze family
(`families.cloze.samples`), an item travels as a Sample of task `leval` whose `setting` is the L-Eval task id
(`tpo`, `news_summ`, … — the key scoring dispatches on), `label` the reference, and whose `fields` hold the
texts the prompt is made of (`document`, `instruction`) plus `item`: the rest of the `LEvalItem` as JSON
(indices, evaluation tag, source, LIE word count, output length). `sample_to_item` restores the item, so
`leval run` reads the same round.

Dates: L-Eval items have no paper date; `published` is L-Eval's public release (arXiv 2307.11088 v1,
2023-07-20), so a knowledge-cutoff window treats the whole data set as of that day.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from academiceval.errors import ConfigError
from academiceval.families.leval import SPEC
from academiceval.families.leval.items import FAMILY, TASKS, LEvalItem, render
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample

RELEASED = date(2023, 7, 20)  # L-Eval v1 on arXiv (2307.11088)
TEXT_FIELDS = SPEC.input_fields


def check_task(task: str) -> str:
    """Refuse a task id L-Eval does not define: scoring dispatches on it, and a guessed kind would score silently
    wrong (L-Eval issue #7 was a substring dispatch doing exactly that)."""
    if task not in TASKS:
        raise ConfigError(
            f"unknown L-Eval task id {task!r}",
            hint=f"L-Eval's task ids are the file stems of LEval-data: {', '.join(sorted(TASKS))}",
        )
    return task


def item_to_sample(item: LEvalItem, config: str = "") -> Sample:
    check_task(item.task)
    rest = item.model_dump(mode="json", exclude={"document", "instruction", "label"})
    system, user, _ = render(item)  # the default rendering (LIE on, nothing cut) is what prompt_sha256 names
    return Sample(
        sample_id=item.sample_id,
        round=item.round,
        task=FAMILY,
        setting=item.task,
        setting_name=config,
        split=item.split,
        arxiv_id="",
        paper_id=f"{FAMILY}/{item.task}/{item.doc_index}",
        published=RELEASED,
        fields={"document": item.document, "instruction": item.instruction, "item": json.dumps(rest, sort_keys=True)},
        label=item.label,
        prompt_sha256=sha256_hex(f"{system}\n\n{user}"),
        label_tokens=None,
    )


def sample_to_item(sample: Any) -> LEvalItem:
    """The item back from a Sample (any object with the Sample's attributes)."""
    if sample.task != FAMILY or "item" not in sample.fields:
        raise ConfigError(f"sample {sample.sample_id} is not an L-Eval item (task {sample.task!r})")
    check_task(sample.setting)
    rest = json.loads(sample.fields["item"])
    return LEvalItem.model_validate(
        {
            **rest,
            "round": sample.round,
            "task": sample.setting,
            "document": sample.fields.get("document", ""),
            "instruction": sample.fields.get("instruction", ""),
            "label": sample.label,
        }
    )
