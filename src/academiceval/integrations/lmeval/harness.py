"""What lm-evaluation-harness calls inside an exported task folder (through its `utils.py`): the docs loader and
the per-doc scorer. lm-eval itself is not imported.

- `load_docs(folder, config=, split=)`: lm-eval's `custom_dataset` hook (called with the YAML's `dataset_kwargs`
  plus its `metadata`): the config's JSONL, sha256-checked against the folder's manifest, as a `datasets`
  DatasetDict with one split.
- `process_results(doc, results)`: the answer lm-eval got (after its filters) scored by each of the doc's
  registry metrics through `integrations.scoring`, the path `academiceval score` takes: the answer is cleaned by
  `models.postprocess`, a blank answer is the runner's `empty_answer` error. A metric that cannot score the answer
  (blank answer, an L-Eval item L-Eval scores with a judge) leaves its key out, so lm-eval's `mean` runs over the
  scored answers only — as `academiceval score`'s mean does. A doc without a label (withheld) reports nothing.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import datasets

from academiceval.errors import ConfigError
from academiceval.integrations.lmeval.folder import read_manifest
from academiceval.integrations.scoring import MetricScorer, answer_record, headline
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample

BACKEND = "lm-eval"


def load_docs(folder: str | Path, *, config: str, split: str, **_metadata: Any) -> datasets.DatasetDict:
    """The docs of one exported config (lm-eval passes the task's metadata too; it is not needed here)."""
    folder = Path(folder)
    entry = read_manifest(folder).entry(config)
    path = folder / entry.data_file
    raw = path.read_bytes()
    if sha256_hex(raw) != entry.data_sha256:
        raise ConfigError(
            f"{path} changed after the export (sha256 differs from the manifest)",
            hint="export the round again with `academiceval export --format lm-eval --force`",
        )
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    return datasets.DatasetDict({split: datasets.Dataset.from_list(rows)})


@functools.cache
def scorer(metric: str) -> MetricScorer:
    """One built scorer per metric and process (BERTScore loads its model once)."""
    return MetricScorer(metric)


@functools.lru_cache(maxsize=4096)
def _sample(blob: str) -> Sample:
    return Sample.model_validate_json(blob)


def score_doc(doc: dict[str, Any], completion: str, *, model: str = BACKEND) -> dict[str, Any]:
    """Every metric's ScoreRecord for one answer: {metric: ScoreRecord}."""
    sample = _sample(doc["sample"])
    rec = answer_record(sample, completion, prompt_sha256=doc["prompt_sha256"], empty_is_error=True)
    return {m: scorer(m).score_record(sample, rec, model=model, backend=BACKEND) for m in doc["metrics"]}


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """lm-eval's hook: {metric: headline value} for the metrics that scored this answer."""
    if not doc.get("label"):
        return {}  # withheld: nothing to score against
    completion = results[0] if results else ""
    out: dict[str, float] = {}
    for metric, record in score_doc(doc, completion if isinstance(completion, str) else str(completion)).items():
        value = headline(record)
        if value is not None:
            out[metric] = value
    return out
