"""An ElaipBench-format item as a round `Sample` and back, so its questions run through `academiceval run`.

Why: the project's runner, scorer and report know rounds of `Sample`s only (the citation-cloze pattern,
`families.cloze.samples`). A Sample of task `elaipbench` has `setting` = the retrieval setting (`full`,
`rag-bm25`, `rag-dense`, `evidence`: what the model reads is decided when the round is written, so a run is
reproducible without the retriever), `label` = the sorted letter set ("A,C"; the `accuracy` metric compares sets),
and `fields`: `question` (the stem with its options), `context` (the passages the setting shows), `question_type`
(SA-MCQ / MA-MCQ: the accuracy metric breaks results down by it) and `item` (the rest of the `ElaipItem` plus
what retrieval chose, as JSON).

Dates: ElaipBench rows carry no date; `published` is the month-end of the row's arXiv id when it has one
(`sources.mirror.stamped.id_month_end`), else 1970-01-01, so any knowledge-cutoff window leaves an undated item out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.families.elaip import SPEC
from academiceval.families.elaip.items import (
    FAMILY,
    PROMPT_SHA256,
    QUESTION_TYPES,
    SETTINGS,
    ElaipItem,
    choice_of,
    flag_counts,
    render,
)
from academiceval.rounds.choice import ChoiceItem
from academiceval.store.artifacts import artifact_name, write_manifest, write_round_config
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import ConfigInfo, RoundManifest, Sample, SplitWindows
from academiceval.store.publisher import publishing

UNDATED = date(1970, 1, 1)
TEXT_FIELDS = SPEC.input_fields
EMPTY_HINT = "no row could be used: see the rejected rows and their reasons"


def gold_label(answer: str) -> str:
    """ "ACD" → "A,C,D": the set form `scores.mcq.gold_kind` reads (one letter stays a letter)."""
    return ",".join(sorted(set(answer)))


def item_to_sample(
    item: ElaipItem, setting: str, context: str, meta: dict[str, Any], *, round_name: str, config: str = ""
) -> Sample:
    rest = item.model_dump(mode="json", exclude={"question", "paper_content", "relevant_passage"})
    rest["retrieval"] = meta
    # imported here: sources.mirror brings PyMuPDF (~1 s), and the registry loads this module for every lookup
    from academiceval.sources.mirror.stamped import id_month_end

    dated = id_month_end(item.paper_id)
    return Sample(
        sample_id=f"{item.sample_id}/{setting}",
        round=round_name,
        task=FAMILY,
        setting=setting,
        setting_name=config,
        split="test",
        arxiv_id=item.paper_id if dated else "",
        paper_id=item.paper_id,
        published=dated or UNDATED,
        date_precision="month" if dated else "year",
        fields={
            "question": item.question,
            "context": context,
            "question_type": item.question_type,
            "item": json.dumps(rest, sort_keys=True),
        },
        label=gold_label(item.answer),
        prompt_sha256=sha256_hex(render(item, context)),
    )


def sample_to_item(sample: Any) -> tuple[ElaipItem, str]:
    """(item, context shown) from a Sample (any object with the Sample's attributes)."""
    if sample.task != FAMILY or "item" not in sample.fields:
        raise ConfigError(f"sample {sample.sample_id} is not an ElaipBench item (task {sample.task!r})")
    rest = json.loads(sample.fields["item"])
    rest.pop("retrieval", None)
    item = ElaipItem.model_validate({**rest, "question": sample.fields.get("question", "")})
    return item, sample.fields.get("context", "")


def choice_item(sample: Sample) -> ChoiceItem:
    """The family's multiple-choice port (`rounds.choice.ChoicePort`): the item on the context the round holds."""
    item, context = sample_to_item(sample)
    return choice_of(item, context, sample.sample_id)


def write_round(
    items: list[ElaipItem],
    round_dir: str | Path,
    *,
    setting: str,
    context: Callable[[ElaipItem], tuple[str, dict[str, Any]]],
    source: str = "",
    rejects: list[dict] | None = None,
    force: bool = False,
    home: str | Path | None = None,
    protect: Iterable[str | Path] = (),
) -> Path:
    """Write items as a round of Samples through the one publisher (`store.publisher.publishing`: an existing round
    refused unless `force`, never over the inputs in `protect` or the workspace `home`): one config
    (`elaipbench-<setting>`) holding what `context(item)` — `families.elaip.items.context_for` bound to the
    setting's retriever — chose for each question, then the manifest. Rejected rows are counted in the manifest
    (`skipped`), never dropped silently; flagged items (an MA row with one letter) are counted in its notes."""
    if setting not in SETTINGS:
        raise ConfigError(f"unknown ElaipBench setting {setting!r}", hint=f"one of {', '.join(SETTINGS)}")
    round_dir = Path(round_dir)
    name = artifact_name(FAMILY, setting)
    info = ConfigInfo(task=FAMILY, setting=setting, setting_name=name, counts={"test": len(items)})
    samples = []
    for it in items:
        text, meta = context(it)
        samples.append(item_to_sample(it, setting, text, meta, round_name=round_dir.name, config=name))
    reasons: dict[str, int] = {}
    for r in rejects or []:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    by_type = {t: sum(1 for it in items if it.question_type == t) for t in QUESTION_TYPES} | flag_counts(items)
    manifest = RoundManifest(
        round=round_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(),
        configs={name: info},
        counts={name: dict(info.counts)},
        skipped={FAMILY: reasons} if reasons else {},
        notes={FAMILY: by_type},
        build_options={"family": FAMILY, "source": source, "setting": setting, "prompt_sha256": PROMPT_SHA256},
    )
    with publishing(round_dir, force=force, home=home, protect=protect, empty_hint=EMPTY_HINT) as tmp:
        write_round_config(tmp, info, samples, TEXT_FIELDS)
        write_manifest(tmp, manifest)
    return round_dir
