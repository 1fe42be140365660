"""Write/read an imported L-Eval round and build its prompts (running it: `academiceval run`, the one run path).

Round layout (the project's one round format, written by `store.artifacts`): `jsonl/leval-<task>/test.jsonl` and
`data/leval-<task>/test.parquet` per L-Eval task (a config per task id) holding `Sample`s (`families.leval.samples`:
task `leval`, setting = the task id), and `manifest.json` (a `RoundManifest` with the sha256 of every file and
`build_options` recording the source, the family, the templates' sha256 and the length-instruction wording).
So `academiceval run/score/report` read it like any round, and `leval run` reads the same files back as items.

A run's answers become `<out>/<task>.pred.jsonl` in L-Eval's own prediction format through `academiceval export
RUN_DIR --format leval` (`families.leval.export`; `leval run` = `run` + that export), so `academiceval
score-predictions --format leval` — or L-Eval's own `auto_eval.py` — scores them directly."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.families.leval.items import (
    FAMILY,
    LIE_WORDING,
    MAX_NEW_TOKENS,
    TEMPLATES_SHA256,
    LEvalItem,
    fit_document,
    kind_of,
    render,
)
from academiceval.families.leval.samples import TEXT_FIELDS, item_to_sample, sample_to_item
from academiceval.store.artifacts import artifact_name, write_manifest, write_round_config
from academiceval.store.artifacts import load_round as load_any_round
from academiceval.store.models import ConfigInfo, RoundManifest, Sample, SplitWindows
from academiceval.store.publisher import publishing


def config_name(task: str) -> str:
    """The round config of one L-Eval task: `leval-tpo` (the project's naming, `store.artifacts.artifact_name`)."""
    return artifact_name(FAMILY, task)


def write_round(
    items: Sequence[LEvalItem],
    round_dir: str | Path,
    *,
    source: str = "",
    force: bool = False,
    home: str | Path | None = None,
    protect: Iterable[str | Path] = (),
    judge_subset: str | None = None,
) -> Path:
    """Write items as a round of `Sample`s (`families.leval.samples`) through the one publisher
    (`store.publisher.publishing`: an existing round refused unless `force`, never over the inputs in `protect` or
    the workspace `home`): one config per L-Eval task id, written by `store.artifacts.write_round_config` (parquet
    + JSONL), then the manifest with every file's sha256 (and the judge subset the items were chosen by, if any:
    `items.judge_subset`)."""
    round_dir = Path(round_dir)
    with publishing(round_dir, force=force, home=home, protect=protect) as tmp:
        _write(items, tmp, round_dir.name, source, judge_subset)
    return round_dir


def _write(items: Sequence[LEvalItem], round_dir: Path, name: str, source: str, judge_subset: str | None) -> None:
    by_task: dict[str, list[LEvalItem]] = defaultdict(list)
    for it in items:
        by_task[it.task].append(it)
    configs: dict[str, ConfigInfo] = {}
    for task, rows in sorted(by_task.items()):
        name = config_name(task)
        info = ConfigInfo(task=FAMILY, setting=task, setting_name=name, counts={"test": len(rows)})
        write_round_config(round_dir, info, (item_to_sample(r, name) for r in rows), TEXT_FIELDS)
        configs[name] = info
    manifest = RoundManifest(
        round=items[0].round if items else name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(),
        configs=configs,
        counts={name: dict(info.counts) for name, info in configs.items()},
        build_options={
            "family": FAMILY,
            "source": source,
            "templates_sha256": TEMPLATES_SHA256,
            "length_instruction_wording": LIE_WORDING,
            "max_new_tokens": MAX_NEW_TOKENS,
            **({"judge_subset": judge_subset} if judge_subset else {}),
        },
    )
    write_manifest(round_dir, manifest)


def load_round(round_dir: str | Path, *, verify: bool = True, tasks: Sequence[str] | None = None) -> list[LEvalItem]:
    """The items of an L-Eval round, read through `store.artifacts.load_round` (sha256-verified)."""
    loaded = load_any_round(round_dir, verify=verify)
    if loaded.manifest.build_options.get("family") != FAMILY:
        raise ConfigError(f"{round_dir} is not an L-Eval round", hint="write one with `academiceval leval import`")
    names = [
        n
        for n, info in sorted(loaded.manifest.configs.items())
        if info.task == FAMILY and (not tasks or info.setting in tasks)
    ]
    return [sample_to_item(s) for n in names for s in loaded.samples(n)]


def document_prompt(
    sample: Sample,
    *,
    length_instruction: bool,
    budget_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The family's long-document QA port (`rounds.document_qa.DocumentPort`): L-Eval's prompt for a round sample
    (system text, document, question or instruction; LIE when asked), its document cut to `budget_tokens`
    L-Eval's way (`items.fit_document`, policy `document-cut-leval`)."""
    prompt, meta = build_prompt(
        sample_to_item(sample), length_instruction=length_instruction, budget_tokens=budget_tokens, count=count
    )
    return prompt, {**meta, "policy": "document-cut-leval"} if budget_tokens is not None else meta


def build_prompt(
    item: LEvalItem,
    *,
    length_instruction: bool = True,
    budget_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """One prompt string (system text, blank line, user text) and its provenance."""
    doc, cut = item.document, 0
    if budget_tokens is not None:
        doc, cut = fit_document(
            item.document,
            budget_tokens,
            count or (lambda t: len(t.split())),
            keep="tail" if kind_of(item.task) == "code" else "head",
        )
    system, user, meta = render(item, length_instruction=length_instruction, document=doc)
    return f"{system}\n\n{user}", {**meta, "words_cut": cut}
