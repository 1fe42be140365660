"""The lm-eval task folder `academiceval export --format lm-eval` writes: its file names, its manifest, and the
names lm-eval sees. The one place these names are spelled (the folder lives outside the workspace, so not in
`store.artifacts`; `export` writes it, `harness` and `samples` read it).

    OUT/
      README.md                       what this is, how to run it, whether labels were withheld
      academiceval_lmeval.json        ExportManifest: round, its manifest sha256, every config → task, docs, sha256
      utils.py                        lm-eval's `!function` hooks → academiceval.integrations.lmeval.harness
      academiceval_<round>_<config>.yaml   one task per config of the round
      data/<config>.<split>.jsonl     the docs (one per sample: the prompt to send, the label, the sample)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from academiceval.errors import ConfigError

FORMAT = "lm-eval"
MANIFEST = "academiceval_lmeval.json"
README = "README.md"
UTILS = "utils.py"
DATA = "data"
PREFIX = "academiceval"


def lm_name(*parts: str) -> str:
    """A task or tag name lm-eval accepts and no built-in task uses: `academiceval_<parts>`, every run of other
    characters as one `_` (`demo`, `title-zero-shot-14K` → `academiceval_demo_title_zero_shot_14K`)."""
    return "_".join([PREFIX, *(re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_") for p in parts)])


def data_file(config: str, split: str) -> str:
    return f"{DATA}/{config}.{split}.jsonl"


class ExportedConfig(BaseModel):
    """One round config as one lm-eval task."""

    config: str  # the round's config name (its `datasets` config)
    task_name: str  # the lm-eval task
    task: str  # the round's task (title, abstract, …, citation_cloze, leval, elaipbench)
    setting: str
    split: str
    docs: int
    max_gen_toks: int  # the runner's per-task output length
    metrics: list[str]  # registry metrics process_results reports (their headline value)
    data_file: str  # relative to the folder
    data_sha256: str
    prompts_checked: int  # prompts whose sha256 equals the round's prompt_sha256
    prompts_unchecked: int  # samples the round gives no prompt_sha256 for (the hash is recorded, not compared)


class ExportManifest(BaseModel):
    format: str = FORMAT
    round: str
    round_manifest_sha256: str
    split: str
    tags: list[str]
    labels_withheld: bool  # a release without the split's labels: docs carry no reference, nothing is scored
    prompt_preparation: str  # which code rendered the prompts (as `academiceval run` records it)
    length_instruction: bool
    package_version: str
    created_at: str
    configs: list[ExportedConfig] = Field(default_factory=list)

    def entry(self, config: str) -> ExportedConfig:
        for c in self.configs:
            if c.config == config:
                return c
        raise ConfigError(
            f"the lm-eval export of round {self.round} has no config {config!r}",
            hint="one of: " + ", ".join(c.config for c in self.configs),
        )


def read_manifest(folder: str | Path) -> ExportManifest:
    path = Path(folder) / MANIFEST
    try:
        return ExportManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(
            f"{folder} has no {MANIFEST}",
            hint="point lm-eval's --include_path at a folder written by `academiceval export --format lm-eval`",
        ) from None
    except (ValidationError, ValueError) as e:
        raise ConfigError(f"{path} is not an academiceval lm-eval export: {str(e).splitlines()[0]}") from None


def write_manifest(folder: Path, manifest: ExportManifest) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
