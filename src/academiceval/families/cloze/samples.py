"""A cloze item as a round `Sample` and back, so cloze rounds use the one round format and its one reader.

The sample's `fields` hold the texts a prompt is made of — `paper` (masked) and `candidate_0` … `candidate_k` —
plus `item`: the rest of the `ClozeItem` as JSON (candidate metadata, citation, type decisions, options,
published prompt). `label` is the gold slot; `setting` the level (preset); `setting_name` the config
(`citation_cloze-<level>`). Any reader of rounds streams cloze samples like writing samples;
`sample_to_item` restores the full item.
"""

from __future__ import annotations

import json
from datetime import date

from academiceval.families.cloze import SPEC
from academiceval.families.cloze.models import TASK, ClozeItem
from academiceval.store.models import Sample

TEXT_FIELDS = SPEC.input_fields


def candidate_field(slot: int) -> str:
    return f"candidate_{slot}"


def item_date(item: ClozeItem) -> date | None:
    """The item's v1 date, else the upper bound its arXiv id gives (imported items carry no date)."""
    if item.published is not None:
        return item.published
    # imported here: sources.mirror brings PyMuPDF (~1 s), and the registry loads this module for every lookup
    from academiceval.sources.mirror.stamped import id_month_end

    return id_month_end(item.arxiv_id) if item.arxiv_id else None


def item_to_sample(item: ClozeItem, config: str) -> Sample:
    published = item_date(item)
    if published is None:
        raise ValueError(f"cloze item {item.sample_id} has no date and no arXiv id to date it")
    rest = item.model_dump(mode="json", exclude={"paper"})
    for c in rest["candidates"]:
        c.pop("text", None)
    fields = {"paper": item.paper, "item": json.dumps(rest, sort_keys=True)}
    for c in item.candidates:
        fields[candidate_field(c.slot)] = c.text
    return Sample(
        sample_id=item.sample_id,
        round=item.round,
        task=TASK,
        setting=item.preset,
        setting_name=config,
        split=item.split,
        arxiv_id=item.arxiv_id or "",
        paper_id=item.paper_id,
        published=published,
        fields=fields,
        label=item.label,
        prompt_sha256=item.prompt_sha256,
        seed=item.seed,
        input_tokens=item.input_tokens,
        label_tokens=1,
    )


def sample_to_item(sample: Sample) -> ClozeItem:
    rest = json.loads(sample.fields["item"])
    for c in rest["candidates"]:
        c["text"] = sample.fields.get(candidate_field(int(c["slot"])), "")
    rest["paper"] = sample.fields.get("paper", "")
    return ClozeItem.model_validate(rest)
