"""The inspect_ai tasks: one per task of the writing family, parameterised by round, setting, split and home.

    inspect eval academiceval/title -T round=demo --model mockllm/model
    inspect eval academiceval/related_work -T round=2026-11 -T setting=random:1 -T metrics=rouge-l,bertscore

Scores are our registry metrics (`core.MetricScorer`), reported by inspect as mean and stderr of the F1 value;
P/R/F sit in each score's metadata.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from academiceval.integrations.inspect.core import (
    MetricScorer,
    Selection,
    as_metadata,
    clean_output,
    headline,
    select,
)
from academiceval.rounds.tokens import count
from academiceval.store.models import Sample

_O200K = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _tiktoken_cached(blobpath: str = _O200K) -> bool:
    """Whether tiktoken has this encoding file on disk (it downloads it on first use otherwise)."""
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    cache = cache if cache is not None else os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return bool(cache) and os.path.exists(os.path.join(cache, hashlib.sha1(blobpath.encode()).hexdigest()))


def offline_mockllm() -> None:
    """inspect's `mockllm/model` counts prompt tokens with tiktoken's o200k_base, which tiktoken downloads on first
    use, so `--model mockllm/model` fails without network. When that file is not cached, mockllm (only mockllm, a
    test model) counts with the packaged BERT WordPiece vocabulary instead: no download, same order of size."""
    if _tiktoken_cached():
        return
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count_text_tokens(self: MockLLM, text: str) -> int:
        return max(1, count(text))

    MockLLM.count_text_tokens = count_text_tokens


def metric_scorer(metric: str, samples: dict[str, Sample]) -> Scorer:
    """An inspect scorer named after our metric (`rouge-l`, `bertscore`, ...), giving `academiceval score`'s
    value for each answer (`samples`: the round's samples by id, for their labels)."""

    @scorer(metrics=[mean(), stderr()], name=metric)
    def _make() -> Scorer:
        ours = MetricScorer(metric)

        async def score(state: TaskState, target: Target) -> Score:
            sample = samples[str(state.sample_id)]
            completion = state.output.completion
            rec = ours.score(sample, completion, model=str(state.model))
            value = headline(rec)
            return Score(
                value=float("nan") if value is None else value,
                answer=clean_output(sample.task, completion),
                explanation=rec.error,
                metadata={"values": rec.values, "metric": rec.metric, "config_hash": rec.config_hash},
            )

        return score

    return _make()


def dataset(sel: Selection) -> MemoryDataset:
    rows = []
    for s in sel.samples:
        prompt = sel.prompt(s)
        rows.append(
            InspectSample(
                input=prompt,
                target=s.label,
                id=s.sample_id,
                metadata=as_metadata(s, prompt),
            )
        )
    return MemoryDataset(
        rows, name=f"{sel.round.name}/{sel.task}/{sel.setting}/{sel.split}", location=str(sel.round.path)
    )


def round_task(
    task_name: str,
    round: str | None,
    setting: str | None = "zero-shot",
    split: str = "test",
    home: str | None = None,
    metrics: str | list[str] = "rouge-l",
    max_tokens: int | None = None,
) -> Task:
    """A Task over one round × task × setting × split; no scorer when the labels are withheld (a release). Without
    `round` (no `-T round=`), the workspace's only round; several rounds: an error naming them."""
    offline_mockllm()
    sel = select(round, task_name, setting=setting, split=split, home=Path(home) if home else None)
    by_id = {s.sample_id: s for s in sel.samples}
    names = [m.strip() for m in metrics.split(",")] if isinstance(metrics, str) else list(metrics)
    return Task(
        dataset=dataset(sel),
        solver=generate(),
        scorer=[metric_scorer(m, by_id) for m in names if m] if sel.labelled else None,
        config=GenerateConfig(max_tokens=max_tokens or sel.max_tokens, temperature=0.0),
        metadata={
            "round": sel.round.name,
            "round_manifest_sha256": sel.round.manifest_sha256,
            "task": task_name,
            "setting": setting,
            "split": split,
        },
        version=sel.round.manifest.package_version,
    )


@task
def title(
    round: str | None = None,
    setting: str = "zero-shot",
    split: str = "test",
    home: str | None = None,
    metrics: str = "rouge-l",
    max_tokens: int | None = None,
) -> Task:
    """Write the paper's title from its abstract and body."""
    return round_task("title", round, setting, split, home, metrics, max_tokens)


@task
def abstract(
    round: str | None = None,
    setting: str = "zero-shot",
    split: str = "test",
    home: str | None = None,
    metrics: str = "rouge-l",
    max_tokens: int | None = None,
) -> Task:
    """Write the paper's abstract from its title and body."""
    return round_task("abstract", round, setting, split, home, metrics, max_tokens)


@task
def introduction(
    round: str | None = None,
    setting: str = "zero-shot",
    split: str = "test",
    home: str | None = None,
    metrics: str = "rouge-l",
    max_tokens: int | None = None,
) -> Task:
    """Write the paper's introduction."""
    return round_task("introduction", round, setting, split, home, metrics, max_tokens)


@task
def related_work(
    round: str | None = None,
    setting: str = "zero-shot",
    split: str = "test",
    home: str | None = None,
    metrics: str = "rouge-l",
    max_tokens: int | None = None,
) -> Task:
    """Write the paper's related-work section from its citations."""
    return round_task("related_work", round, setting, split, home, metrics, max_tokens)


@task
def citation_cloze(
    round: str | None = None,
    setting: str = "",
    split: str = "test",
    home: str | None = None,
    metrics: str = "accuracy",
    max_tokens: int | None = None,
) -> Task:
    """Pick the paper cited at a masked citation among candidates (SCALAR-style; `setting`: easy, medium, hard,
    or empty for every level); scored by our multiple-choice accuracy (last <answer>…</answer>)."""
    return round_task("citation_cloze", round, setting or None, split, home, metrics, max_tokens)
