"""Write/read an imported L-Eval round and build its prompts (running it: `runs.leval`).

Round layout (the project's one round format): `jsonl/<task>/test.jsonl` and `data/<task>/test.parquet` per
L-Eval task (a config per task id), and `manifest.json` (a `RoundManifest` with the sha256 of every file and
`build_options` recording the source, the family, the templates' sha256 and the length-instruction wording).

A run (`runs.leval.run_items`) writes `<out>/<task>.pred.jsonl` in L-Eval's own prediction format (`query`, `gt`,
`<model>_pred`, `evaluation`, `prompt`) plus our provenance fields (`sample_id`, `length_instruction`,
`length_words`, `words_cut`, `error`), so `academiceval score-predictions --format leval` — or L-Eval's own
`auto_eval.py` — scores it directly."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval.rounds.leval import (
    FAMILY,
    LIE_WORDING,
    MAX_NEW_TOKENS,
    TEMPLATES_SHA256,
    LEvalItem,
    fit_document,
    kind_of,
    render,
)

MANIFEST = "manifest.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_round(items: Sequence[LEvalItem], round_dir: str | Path, *, source: str = "") -> Path:
    """Write items as a round: JSONL + parquet per L-Eval task (one config each), then the manifest with the
    sha256 of every file (`store.artifacts.write_manifest`, the project's one manifest writer)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from academiceval import __version__
    from academiceval.store.artifacts import write_manifest
    from academiceval.store.models import ConfigInfo, RoundManifest, SplitWindows

    round_dir = Path(round_dir)
    round_dir.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[LEvalItem]] = defaultdict(list)
    for it in items:
        by_task[it.task].append(it)
    configs: dict[str, ConfigInfo] = {}
    for task, rows in sorted(by_task.items()):
        js = round_dir / "jsonl" / task / "test.jsonl"
        pqf = round_dir / "data" / task / "test.parquet"
        js.parent.mkdir(parents=True, exist_ok=True)
        pqf.parent.mkdir(parents=True, exist_ok=True)
        js.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
        pq.write_table(pa.Table.from_pylist([r.model_dump() for r in rows]), pqf, compression="zstd")
        configs[task] = ConfigInfo(  # the family is the task; the L-Eval task id is its setting
            task=FAMILY,
            setting=task,
            setting_name=task,
            counts={"test": len(rows)},
            files=[js.relative_to(round_dir).as_posix(), pqf.relative_to(round_dir).as_posix()],
        )
    manifest = RoundManifest(
        round=items[0].round if items else round_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(),
        configs=configs,
        counts={t: {"test": len(r)} for t, r in by_task.items()},
        build_options={
            "family": FAMILY,
            "source": source,
            "templates_sha256": TEMPLATES_SHA256,
            "length_instruction_wording": LIE_WORDING,
            "max_new_tokens": MAX_NEW_TOKENS,
        },
    )
    write_manifest(round_dir, manifest)
    return round_dir


def load_round(round_dir: str | Path, *, verify: bool = True, tasks: Sequence[str] | None = None) -> list[LEvalItem]:
    from academiceval.store.models import RoundManifest

    round_dir = Path(round_dir)
    manifest = RoundManifest.model_validate_json((round_dir / MANIFEST).read_bytes())
    if manifest.build_options.get("family") != FAMILY:
        raise ValueError(f"{round_dir} is not an L-Eval round")
    items: list[LEvalItem] = []
    for rel, digest in sorted(manifest.files.items()):
        if not rel.startswith("jsonl/") or (tasks and rel.split("/")[1] not in tasks):
            continue
        path = round_dir / rel
        if verify and _sha256(path) != digest:
            raise ValueError(f"{path}: sha256 differs from the manifest")
        items += [LEvalItem.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return items


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
