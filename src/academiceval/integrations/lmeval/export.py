"""A round → an lm-evaluation-harness task folder (`academiceval export --format lm-eval ROUND OUT`).

Why each choice:
- **the prompt is the runner's.** Each doc's `prompt` is what `academiceval run ROUND` sends for the sample: the
  runner's own `runs.prepare.PromptPreparer` with the run's protocol default for the length instruction (on for
  L-Eval's open-ended items), no budget. Its sha256 must equal the round's `prompt_sha256` (the hash the build
  recorded); a mismatch (templates edited since the build) refuses the export. lm-eval sends `doc_to_text`
  unchanged as the one user message under `--apply_chat_template` (no description, no system text, zero-shot:
  the round's demonstrations are already in the prompt).
- **the generation options are the runner's.** `max_gen_toks` = the runner's per-task output length
  (`store.tasks.max_new_tokens`), greedy, and `until: []` (lm-eval's default stop, a blank line, would cut
  every abstract after its first paragraph).
- **the data is local and relocatable.** Docs are JSONL beside the YAMLs, loaded by `custom_dataset` relative to
  `utils.py` (no Hub, no `datasets` cache, the folder can be moved or shared), sha256-checked at load.
- **the scorer is ours.** `process_results` scores through the registry metric (`harness`), so lm-eval's mean is
  `academiceval score`'s mean on the same answers: ROUGE-L (and BERTScore when asked) for the writing tasks,
  strict multiple-choice accuracy for citation cloze and ElaipBench, L-Eval's own metric for L-Eval items.
- **only the test split by default; withheld labels stay withheld.** A release without the split's labels is
  exported without references and without metrics (lm-eval records the answers; score them later).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.integrations.lmeval.folder import (
    FORMAT,
    README,
    UTILS,
    ExportedConfig,
    ExportManifest,
    data_file,
    lm_name,
    write_manifest,
)
from academiceval.runs.prepare import PromptPreparer, length_instruction_for
from academiceval.scores import registry
from academiceval.store.artifacts import Layout, LoadedRound, load_round
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample
from academiceval.store.tasks import max_new_tokens
from academiceval.store.workspace import resolve_home

WRITING_METRICS = ("rouge-l",)  # the default for the writing tasks; `--metrics rouge-l,bertscore` adds BERTScore
FUNCTION = "!function "  # lm-eval's YAML tag for a Python hook in utils.py
UTILS_TEXT = '''"""lm-evaluation-harness hooks of these tasks (written by `academiceval export --format lm-eval`).

The docs are loaded from ./data (sha256-checked) and each answer is scored by academiceval's own metric, exactly
as `academiceval score` scores it: academiceval must be importable where lm_eval runs (pip install academiceval).
"""

from pathlib import Path

from academiceval.integrations.lmeval import harness

FOLDER = Path(__file__).resolve().parent


def load_docs(**kwargs):
    return harness.load_docs(FOLDER, **kwargs)


def process_results(doc, results):
    return harness.process_results(doc, results)
'''


def max_tokens_for(task: str) -> int:
    """The output length `academiceval run` asks for when none is given (per task; the one place this module
    reads it)."""
    return max_new_tokens(task)


def metrics_for(task: str, writing_metrics: tuple[str, ...]) -> list[str]:
    """A family's own metric (multiple choice: accuracy; L-Eval: leval), as `academiceval score` picks it for a
    run of that task, else the writing metrics asked for."""
    return registry.default_metrics([task]) or list(writing_metrics)


@dataclass
class ExportResult:
    out: Path
    manifest: ExportManifest
    skipped_configs: dict[str, str] = field(default_factory=dict)  # config → why it has no task


def _doc(sample: Sample, config: str, prompt: str, sha: str, metrics: list[str], max_tokens: int) -> dict[str, Any]:
    return {
        "sample_id": sample.sample_id,
        "round": sample.round,
        "config": config,
        "task": sample.task,
        "setting": sample.setting,
        "split": sample.split,
        "arxiv_id": sample.arxiv_id,
        "published": sample.published.isoformat(),
        "prompt": prompt,
        "prompt_sha256": sha,
        "label": sample.label,
        "max_gen_toks": max_tokens,
        "metrics": metrics,
        "sample": sample.model_dump_json(),  # what the scorer needs besides the label (fields, candidates, item)
    }


def _task_yaml(manifest: ExportManifest, entry: ExportedConfig) -> str:
    labelled = not manifest.labels_withheld
    doc: dict[str, Any] = {
        "task": entry.task_name,
        "task_alias": entry.config,
        "tag": [manifest.tags[0], lm_name(manifest.round, entry.task)],
        "custom_dataset": FUNCTION + "utils.load_docs",
        "dataset_kwargs": {"config": entry.config, "split": entry.split},
        "test_split": entry.split,
        "output_type": "generate_until",
        "doc_to_text": "prompt",
        "doc_to_target": "label",
        "process_results": FUNCTION + "utils.process_results",
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in entry.metrics]
        if labelled
        else [],
        "generation_kwargs": {"until": [], "max_gen_toks": entry.max_gen_toks, "do_sample": False, "temperature": 0.0},
        "num_fewshot": 0,
        "metadata": {
            "version": 1.0,
            "academiceval_round": manifest.round,
            "academiceval_round_manifest_sha256": manifest.round_manifest_sha256,
            "academiceval_config": entry.config,
            "academiceval_task": entry.task,
            "academiceval_length_instruction": manifest.length_instruction,
            "academiceval_version": manifest.package_version,
        },
    }
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
    for hook in ("utils.load_docs", "utils.process_results"):  # the tag lm-eval's loader resolves, unquoted
        text = text.replace(f"'{FUNCTION}{hook}'", f"{FUNCTION}{hook}")
    head = f"# round {manifest.round}, config {entry.config}: written by academiceval {__version__}"
    return head + (" (labels withheld: no metrics)" if not labelled else "") + "\n" + text


def _readme(m: ExportManifest) -> str:
    tag = m.tags[0]
    lines = [
        f"# academiceval round `{m.round}` as lm-evaluation-harness tasks",
        "",
        f"Written by `academiceval export --format lm-eval` ({m.package_version}, {m.created_at}) from the round's",
        f"`{m.split}` split (round manifest sha256 `{m.round_manifest_sha256}`). One task per config:",
        "",
        "| task | config | docs | max new tokens | metrics |",
        "|---|---|---|---|---|",
        *(
            f"| `{c.task_name}` | {c.config} | {c.docs} | {c.max_gen_toks} | "
            f"{', '.join(c.metrics) if not m.labels_withheld else '-'} |"
            for c in m.configs
        ),
        "",
        "Run every task of the round (tag `" + tag + "`) against an OpenAI-compatible server:",
        "",
        "```bash",
        "lm_eval --model local-chat-completions \\",
        "    --model_args base_url=http://127.0.0.1:8000/v1/chat/completions,model=MODEL \\",
        f"    --include_path THIS_FOLDER --tasks {tag} --apply_chat_template \\",
        "    --log_samples --output_path lm-eval-out",
        "academiceval lm-eval import lm-eval-out      # the answers as an academiceval run; then score / report",
        "```",
        "",
        "Each doc's prompt is what `academiceval run` sends for the sample (its sha256 is the round's",
        "`prompt_sha256`); generation is greedy with the runner's per-task output length. The round's",
        "demonstrations are already inside the prompts: run zero-shot (no `--num_fewshot`), without",
        "`--system_instruction`. `utils.py` scores each answer with academiceval's own metric, so lm-eval's numbers",
        "are `academiceval score`'s on the same answers (academiceval must be installed where lm_eval runs).",
    ]
    if m.labels_withheld:
        lines += [
            "",
            f"**Labels withheld.** This round is a release without the labels of its `{m.split}` split: the docs",
            "carry no reference and the tasks report no metric. Keep the answers (`--log_samples`), import them",
            "with `academiceval lm-eval import`, and score them with `academiceval score RUN --round-dir FULL_ROUND`",
            "once the labels are published.",
        ]
    return "\n".join(lines) + "\n"


def _selected_configs(loaded: LoadedRound, wanted: list[str] | None) -> list[str]:
    if wanted:  # an unknown name is a ConfigError listing the configs; an old, sized name is found too
        return list(dict.fromkeys(loaded.resolve_config(c) for c in wanted))
    return loaded.configs()


def _check_out(out: Path, loaded: LoadedRound, home: Path, force: bool) -> None:
    """OUT must not sit where the workspace looks for rounds or runs (it would be read as one), nor in the round."""
    o = out.resolve()
    layout = Layout.of(home)
    for inside, what in (
        (loaded.path.resolve(), "the round"),
        (layout.rounds_dir, "rounds/"),
        (layout.runs_dir, "runs/"),
    ):
        if o == inside or inside in o.parents:
            raise ConfigError(
                f"{out} is inside {what} ({inside})", hint="write the lm-eval folder somewhere of its own"
            )
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} exists and is not a directory", hint="choose another OUT")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ConfigError(f"{out} already holds files", hint="choose an empty directory, or pass --force to replace it")


def export_round(
    round_ref: str | Path,
    out: str | Path,
    *,
    split: str = "test",
    configs: list[str] | None = None,
    metrics: list[str] | None = None,
    force: bool = False,
    home: str | Path | None = None,
) -> ExportResult:
    """Write round `round_ref` (a name under HOME/rounds or a directory) as lm-eval tasks into `out`.

    `metrics`: registry metrics for the writing tasks (default rouge-l); the other families use their own.
    `out` is replaced as a whole (written beside it, then renamed): refused when it holds files, unless `force`."""
    home_dir = resolve_home(home)
    loaded = load_round(Layout.of(home_dir).find_round(round_ref))  # every file's sha256 checked
    writing = tuple(metrics or WRITING_METRICS)
    for m in writing:
        registry.get(m)  # an unknown name is a ConfigError naming the known ones
        if registry.get(m).needs.judge:
            raise ConfigError(f"metric {m} needs a judge model", hint="lm-eval tasks score without one: drop it")
    out = Path(out)
    _check_out(out, loaded, home_dir, force)
    chosen = _selected_configs(loaded, configs)
    by_config = {c: list(loaded.samples(c, split=split)) for c in chosen}
    skipped = {c: f"no {split} samples" for c, ss in by_config.items() if not ss}
    by_config = {c: ss for c, ss in by_config.items() if ss}
    withheld = bool(loaded.manifest.release) and split in (loaded.manifest.release or {}).get("withheld_splits", [])
    if not by_config and withheld:  # a release withholds the split's papers whole (store.release): nothing to run
        raise ConfigError(
            f"release {loaded.name} withholds its {split} papers: their samples are not in it (withheld/ lists them)",
            hint="export another --split, or export the full round in the workspace that made the release",
        )
    if not by_config:
        raise ConfigError(
            f"round {loaded.name} has no {split} samples in {', '.join(chosen)}",
            hint="pick another --split (train, val, test) or --config",
        )
    tasks = {s.task for ss in by_config.values() for s in ss}
    lie = length_instruction_for(None, tasks)  # what `academiceval run ROUND` gives (on for L-Eval items)
    preparer = PromptPreparer(length_instruction=lie, templates_dir=loaded.templates_dir)
    manifest = ExportManifest(
        round=loaded.name,
        round_manifest_sha256=loaded.manifest_sha256,
        split=split,
        tags=[lm_name(loaded.name)],
        labels_withheld=withheld or not any(s.label for ss in by_config.values() for s in ss),
        prompt_preparation=preparer.name,
        length_instruction=lie,
        package_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp's 0700 would make a folder meant to be shared private
    try:
        for config, samples in by_config.items():
            manifest.configs.append(_write_config(tmp, config, samples, preparer, writing, split))
        for entry in manifest.configs:
            (tmp / f"{entry.task_name}.yaml").write_text(_task_yaml(manifest, entry), encoding="utf-8")
        (tmp / UTILS).write_text(UTILS_TEXT, encoding="utf-8")
        (tmp / README).write_text(_readme(manifest), encoding="utf-8")
        write_manifest(tmp, manifest)
        _replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ExportResult(out=out, manifest=manifest, skipped_configs=skipped)


def _write_config(
    folder: Path, config: str, samples: list[Sample], preparer: PromptPreparer, writing: tuple[str, ...], split: str
) -> ExportedConfig:
    task = samples[0].task
    max_tokens, metrics = max_tokens_for(task), metrics_for(task, writing)
    rel = data_file(config, split)
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    checked = unchecked = 0
    mismatched: list[str] = []
    with path.open("w", encoding="utf-8") as f:
        for s in samples:
            prep = preparer(s, max_tokens)
            if not s.prompt_sha256:
                unchecked += 1
            elif prep.prompt_sha256 == s.prompt_sha256:
                checked += 1
            else:
                mismatched.append(s.sample_id)
            f.write(json.dumps(_doc(s, config, prep.prompt, prep.prompt_sha256, metrics, max_tokens)) + "\n")
    if mismatched:
        raise ConfigError(
            f"{len(mismatched)} of {len(samples)} prompts of config {config} differ from the round's prompt_sha256 "
            f"(first: {mismatched[0]})",
            hint="the templates or the prompt code changed since the round was built: rebuild the round",
        )
    return ExportedConfig(
        config=config,
        task_name=lm_name(samples[0].round, config),
        task=task,
        setting=samples[0].setting,
        split=split,
        docs=len(samples),
        max_gen_toks=max_tokens,
        metrics=metrics,
        data_file=rel,
        data_sha256=sha256_hex(path.read_bytes()),
        prompts_checked=checked,
        prompts_unchecked=unchecked,
    )


def _replace(tmp: Path, out: Path) -> None:
    """`tmp` becomes `out`; an earlier `out` is moved aside first and removed after (no stale files, no half
    folder: a crash leaves either the old folder or the new one, plus a dot-named leftover)."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(old)


__all__ = ["FORMAT", "ExportResult", "export_round", "max_tokens_for", "metrics_for"]
