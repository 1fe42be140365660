"""`run_round`: run one model over a round, cached, resumable and concurrent.

Order of work per sample: prepare the prompt (render, truncate, retrieve) → look the answer up in the response
cache → otherwise request it (retries + adaptive concurrency) and cache it → append the record at once. A
rerun of the same command reads the records first and skips every finished sample; a sample whose last record
is a *retryable* error (429s or timeouts that outlived the retries) is requested again. So `kill -9` loses only
the requests in flight.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.models.base import Backend, GenerationOptions
from academiceval.models.cache import ResponseCache
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import is_final
from academiceval.models.registry import load_backend, parse_spec, run_model_name, tokenizer_for_model
from academiceval.models.retry import RetryPolicy
from academiceval.models.tokenize import load_tokenizer
from academiceval.runs.config import RunConfig
from academiceval.runs.embedding import Notice, StageProgress, dense_pass_for
from academiceval.runs.lock import RunLock
from academiceval.runs.prepare import PromptPreparer, length_instruction_for
from academiceval.runs.summary import RunSummary, now_iso
from academiceval.runs.worker import ProgressFn, SampleWorker, Unit
from academiceval.store.artifacts import (
    Layout,
    RecordWriter,
    load_round,
    read_epoch_records,
    read_run_spec,
    safe_name,
    write_run_spec,
)
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import RunSpec, Sample
from academiceval.store.tasks import find_spec, max_new_tokens

GC_GEN0_THRESHOLD = 10_000  # the collector's gen-0 threshold during the request phase (see `run_round_async`)


def run_dir_name(config: RunConfig, context_length: int | None, *, length_instruction: bool) -> str:
    """Variants that change the inputs get their own directory, so records of different variants never mix.
    A local checkpoint is named by its folder (`hf/<name>`), not its whole path; run.json keeps the path and a
    different checkpoint with the same folder name is refused there."""
    parts = [safe_name(run_model_name(config.model))]
    if context_length:
        parts.append(f"ctx{context_length}")
    if config.rag:
        parts.append(f"rag-{config.rag.retriever}-k{config.rag.top_k}")
    if config.probe:
        parts.append(f"probe-{config.probe}")
    if length_instruction:  # the resolved one (runs.prepare.length_instruction_for), not the option
        parts.append("lie")
    if config.preset:  # a protocol (its options, its prompt suffix) is a variant of its own
        parts.append(config.preset)
    elif config.prompt_suffix:
        parts.append("sfx-" + sha256_hex(config.prompt_suffix)[:8])
    return safe_name("+".join(parts))


_FINGERPRINT = (
    "model",
    "round_manifest_sha256",
    "options",
    "context_length",
    "rag",
    "probe",
    "length_instruction",
    "on_overflow",
    "tokenizer",
)


# options stored only in the RunConfig (run.json's `config`) that change what is sent; `epochs` is not one of them:
# more epochs extend a run (epoch 1 stays what it was)
_CONFIG_FINGERPRINT = ("prompt_suffix",)


def _check_compatible(old: RunSpec, new: RunSpec, run_dir: Path) -> None:
    diff = [f for f in _FINGERPRINT if getattr(old, f) != getattr(new, f)]
    diff += [f for f in _CONFIG_FINGERPRINT if old.config.get(f) != new.config.get(f)]
    if diff:
        raise ConfigError(
            f"{run_dir} holds a run with different {', '.join(diff)}; its records cannot be mixed with this one",
            hint="pass --run-name to keep both, or delete the directory to start over",
        )


def _token_report(preparer: PromptPreparer, samples: Sequence[Sample], options: GenerationOptions) -> list[dict]:
    """--count-tokens: per sample, the full and fitted input length and what would be cut or skipped."""
    rows: list[dict[str, Any]] = []
    for s in samples:
        row: dict[str, Any] = {"sample_id": s.sample_id, "task": s.task, "setting": s.setting}
        try:
            p = preparer(s, options.max_tokens or max_new_tokens(s.task))
        except AcademicEvalError as e:
            rows.append({**row, "error": str(e)})
            continue
        full = int(p.extras.get("full_tokens") or p.input_tokens)
        rows.append(
            {
                **row,
                "full_tokens": full,
                "input_tokens": p.input_tokens,
                "tokens_cut": p.tokens_cut,
                "truncation": p.truncation,
                "skipped": p.skipped,
                "tokenizer": p.extras.get("tokenizer"),
            }
        )
    return rows


def select_samples(samples: list[Sample], config: RunConfig) -> list[Sample]:
    """The samples a run asks for: its tasks, settings, splits, and at most `limit` per task and setting."""
    tasks, settings, splits = config.tasks, config.settings, config.splits
    out = [
        s
        for s in samples
        if (not tasks or s.task in tasks)
        and (not settings or s.setting in settings)
        and (not splits or s.split in splits)
    ]
    if config.limit is not None:
        by: dict[tuple[str, str], int] = {}
        kept = []
        for s in out:
            k = (s.task, s.setting)
            if by.get(k, 0) < config.limit:
                by[k] = by.get(k, 0) + 1
                kept.append(s)
        out = kept
    return out


def preparer_for(
    config: RunConfig,
    context_length: int | None,
    *,
    length_instruction: bool,
    templates_dir: str | Path | None,
    count: bool = False,
) -> PromptPreparer:
    """The run's prompt preparation, bound once: the runner's, and the one an export re-renders prompts with
    (`runs.export`: the same config, window and resolved length instruction give the same text)."""
    return PromptPreparer(
        context_length=context_length,
        tokenizer=config.tokenizer,
        on_overflow=config.on_overflow,
        rag=config.rag,
        probe=config.probe,
        length_instruction=length_instruction,
        model=config.model if context_length or config.tokenizer or count else None,
        templates_dir=templates_dir,
        force_fitting=count,
        prompt_suffix=config.prompt_suffix,
    )


def run_tokenizer(config: RunConfig, preparer: PromptPreparer) -> tuple[str | None, str | None]:
    """(the tokenizer that will count this run's tokens, the fallback warning) — (None, None) when nothing is
    counted locally. A tokenizer the user named (`--tokenizer`) must load: offline without its files it is a
    `TokenizerError` before any request, never a silent bert-base-uncased. One implied by the model (tiktoken for
    an OpenAI-style model) may fall back to the packaged estimator, and the warning goes into run.json."""
    if not preparer.needs_fitting:
        return None, None
    if config.tokenizer is not None:
        return load_tokenizer(config.tokenizer, strict=True).name, None
    tok = load_tokenizer(tokenizer_for_model(preparer.model))  # None without a budget: the packaged estimator
    return tok.name, tok.fallback_reason


def run_round(
    ws_or_runs_dir: Any,
    round_ref: str | Path,
    config: RunConfig,
    *,
    progress: ProgressFn | None = None,
    retry_policy: RetryPolicy | None = None,
    backend: Backend | None = None,
    notice: Notice | None = None,
    stage_progress: StageProgress | None = None,
) -> RunSummary:
    """Run `config.model` on a round (a name in the workspace or a round directory); see the module docstring.
    Raises ConfigError before any request when the spec, key, model name, round integrity or options are wrong;
    per-sample failures are recorded instead. A `backend` passed in belongs to the caller, who closes it.
    `notice` gets a line to show the user before a long step (the dense-retrieval estimate), `stage_progress`
    that step's progress (description, done, total)."""
    return asyncio.run(
        run_round_async(
            ws_or_runs_dir,
            round_ref,
            config,
            progress=progress,
            retry_policy=retry_policy,
            backend=backend,
            notice=notice,
            stage_progress=stage_progress,
        )
    )


async def run_round_async(
    ws_or_runs_dir: Any,
    round_ref: str | Path,
    config: RunConfig,
    *,
    progress: ProgressFn | None = None,
    retry_policy: RetryPolicy | None = None,
    backend: Backend | None = None,
    notice: Notice | None = None,
    stage_progress: StageProgress | None = None,
) -> RunSummary:
    """The same as `run_round`, for callers already inside an event loop."""
    model_spec, options, context_length = config.model, config.options, config.context_length
    provider, _ = parse_spec(model_spec)
    layout = Layout.of(ws_or_runs_dir)
    view = load_round(layout.find_round(round_ref))
    distinct = view.distinct_samples()
    samples = select_samples(distinct, config)
    if not samples:
        tasks = sorted({s.task for s in distinct})
        settings = sorted({s.setting for s in distinct})
        splits = sorted({s.split for s in distinct})
        raise ConfigError(
            f"no samples in round {view.name} match tasks={config.tasks} settings={config.settings} "
            f"splits={config.splits}",
            hint=f"the round has tasks {', '.join(tasks)}; settings {', '.join(settings)}; splits {', '.join(splits)}",
        )

    lie = length_instruction_for(config.length_instruction, {s.task for s in samples})

    def make_preparer(ctx: int | None, *, count: bool = False) -> PromptPreparer:
        return preparer_for(config, ctx, length_instruction=lie, templates_dir=view.templates_dir, count=count)

    preparer = make_preparer(context_length, count=config.count_tokens_only)
    tokenizer_used, tokenizer_warning = run_tokenizer(config, preparer)  # an asked-for tokenizer must load: early
    first = samples[0]
    preparer(first, options.max_tokens or max_new_tokens(first.task))  # bad options fail here, early
    summary = RunSummary(
        run_dir=Path(), round=view.name, model=model_spec, prompt_preparation=preparer.name, epochs=config.epochs
    )
    if tokenizer_warning:
        summary.warnings.append(tokenizer_warning)
    if config.count_tokens_only:
        summary.count_tokens_only = True
        summary.token_report = _token_report(preparer, samples, options)
        return summary

    owned = backend is None  # a backend passed in belongs to the caller, who closes it
    lock: RunLock | None = None  # one writer per run directory (runs.lock)
    if backend is None:
        backend = load_backend(
            model_spec,
            base_url=config.base_url,
            api_key_env=config.api_key_env,
            timeout=config.timeout,
            templates_dir=view.templates_dir,
            **({"endpoints": config.endpoints, "max_connections": config.max_connections} if config.endpoints else {}),
        )
    try:
        caps = backend.capabilities
        if caps.validate:
            await backend.validate()
        if context_length is None and caps.context_length:
            # a local model knows its window (max_position_embeddings): truncate to it rather than overflow
            context_length = int(caps.context_length)
            preparer = make_preparer(context_length)
            preparer(first, options.max_tokens or max_new_tokens(first.task))
            summary.prompt_preparation = preparer.name
        # a released round shares its round's name but not its manifest: its runs get their own directory
        release = "+release" if view.manifest.release is not None else ""
        run_dir = layout.run_dir(
            view.name, config.run_name or run_dir_name(config, context_length, length_instruction=lie) + release
        )
        summary.run_dir = run_dir
        lock = RunLock(run_dir).acquire()  # a second run of the same model/round refuses, naming the holder
        spec = RunSpec(
            round=view.name,
            round_manifest_sha256=view.manifest_sha256,
            model=model_spec,
            backend=provider,
            base_url=backend.cache_identity().get("base_url"),
            options=options.model_dump(),
            context_length=context_length,
            rag=config.rag_settings(),
            probe=config.probe,
            length_instruction=lie,
            package_version=__version__,
            created_at=now_iso(),
            on_overflow=config.on_overflow,
            tokenizer=config.tokenizer,
            tokenizer_used=tokenizer_used,
            warnings=[tokenizer_warning] if tokenizer_warning else [],
            prompt_preparation=preparer.name,
            max_connections=config.max_connections,
            timeout_s=config.timeout,
            task_max_tokens={
                t: max_new_tokens(t)
                for t in sorted({s.task for s in samples})
                if options.max_tokens is None and find_spec(t) is not None
            },
            updated_at=now_iso(),
            config=config.stored(),
        )
        old = read_run_spec(run_dir)
        if old is not None:
            _check_compatible(old, spec, run_dir)
            spec.created_at = old.created_at
            spec.task_max_tokens = {**old.task_max_tokens, **spec.task_max_tokens}
        write_run_spec(run_dir, spec)

        existing = read_epoch_records(run_dir)
        todo: list[Unit] = []  # each sample with the epochs it still needs (prepared once for all of them)
        for s in samples:
            counts = summary.config(s.task, s.setting)
            left = []
            for epoch in range(1, config.epochs + 1):
                counts.selected += 1
                rec = existing.get((s.sample_id, epoch))
                if rec is not None and is_final(rec.error_code, rec.error, rec.retryable):  # models.errors decides
                    counts.already_done += 1
                else:
                    left.append(epoch)
            if left:
                todo.append((s, tuple(left)))
        n_todo = sum(len(epochs) for _, epochs in todo)
        # rows committed 1,024 at a time (or every 0.5 s): a commit rewrites the index pages it touched, so bigger
        # batches cost less per row (64 -> 256: 14 -> 10 CPU µs per request; 256 -> 1,024: 10.8 -> 8.3 µs for an
        # answer and its memo); rows a kill loses are restored from the records
        cache = ResponseCache(layout.response_cache, enabled=config.use_cache, batch=1024)
        writer = RecordWriter(run_dir)
        pool = getattr(backend, "endpoints", None)  # models.endpoints.EndpointPool: one window per endpoint
        if pool:  # --max-connections is per endpoint; each endpoint's own limiter adapts, this one only caps
            workers = config.max_connections * len(pool)
            limiter = AdaptiveLimiter(workers, min_limit=workers)
        else:
            workers = config.max_connections
            limiter = AdaptiveLimiter(workers)

        def embed_first(left: list[Sample]) -> None:
            """--rag dense: the chunks of the samples left to ask are embedded first, after an estimate."""
            done = dense_pass_for(preparer, left, notice=notice, progress=stage_progress)
            if done is not None:
                summary.embedding = done.as_dict()

        run = SampleWorker(
            backend,
            options,
            preparer,
            cache,
            writer,
            limiter,
            retry_policy or RetryPolicy(),
            summary,
            progress=progress,
            total=n_todo,
            prepare_in_thread=preparer.needs_fitting,
            round_sha256=view.manifest_sha256,
            before_asking=embed_first,
        )
        # what is alive now (the round's samples, the loaded modules and schemas) outlives the request phase: frozen,
        # it is left out of the garbage collector's full passes, which otherwise walk it all every few thousand
        # requests (a pass took ~40 ms, 20 µs per request of a 2,000-request run). Unfrozen when the phase ends,
        # whatever happens; nothing is collected late but cyclic garbage made in the meantime among these objects
        gc.freeze()
        # and the young generation is collected every GC_GEN0_THRESHOLD allocations (net) instead of 700: with 64
        # requests in flight, what they hold survives each pass and was walked again and again (a `gc.callbacks`
        # probe, concurrency 64: ~9 -> ~2-3 µs of collector CPU per request); reset with the freeze, whatever happens
        thresholds = gc.get_threshold()
        gc.set_threshold(max(thresholds[0], GC_GEN0_THRESHOLD), *thresholds[1:])
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            if progress is not None:
                progress(0, n_todo)
            if todo and (old is None or old.base_url == spec.base_url):  # answers of this same server only
                run.restore_cache(existing.values())
            await run.run_all(todo, workers)
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            writer.close()
            cache.close()
            summary.elapsed_s = time.perf_counter() - t0
            summary.cpu_s = time.process_time() - c0
            summary.requests, summary.retries = run.stats.attempts, run.stats.retries
            summary.rate_limited, summary.final_limit = run.stats.rate_limited, limiter.limit
            if pool:
                summary.endpoints = backend.stats()
        return summary
    finally:
        if lock is not None:
            lock.release()
        if owned:
            await backend.aclose()
