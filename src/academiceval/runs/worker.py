"""The per-sample pipeline of a run: prepare → `models.generate.Generator` (cache → shared in-flight call →
retried request) → record.

All methods run on the event-loop thread (records and cache are written from there, in order); only prompt
preparation that tokenizes or retrieves goes to a worker thread so it overlaps with requests in flight.
Two samples with the same rendered prompt and options (e.g. a random-demo sample that drew no demo and its
zero-shot twin) cost one request: the second awaits the first's answer (the Generator shares it). What stays
here is the run's own business: prompt memos and bulk replay of cached answers, records, progress, resume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from academiceval.errors import AcademicEvalError
from academiceval.models.base import Backend, Completion, GenerationOptions
from academiceval.models.cache import ResponseCache
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.errors import BackendError, EmptyAnswerError, is_final
from academiceval.models.generate import Generator, Outcome
from academiceval.models.postprocess import postprocess
from academiceval.models.prepare import probe_parts
from academiceval.models.retry import RetryPolicy, RetryStats
from academiceval.rounds.document_qa import DOCUMENT_FIELD
from academiceval.runs.config import epoch_options
from academiceval.runs.prepare import Prepared, PromptPreparer
from academiceval.runs.summary import RunSummary, now_iso
from academiceval.store.artifacts import RecordWriter, new_record, record_of
from academiceval.store.models import RunRecord, Sample
from academiceval.store.tasks import max_new_tokens, task_spec

ProgressFn = Callable[[int, int], None]  # (finished so far, total to do)
Unit = tuple[Sample, tuple[int, ...]]  # a sample and the epochs of it still to do (prepared once, asked per epoch)
PROGRESS_EVERY_S = 0.1  # progress callbacks are throttled to this interval (and always called at the end)
REPLAY_BATCH = 1024  # records a cache replay writes with one write + flush per file
PREPARE_BATCH = 64  # samples prepared in one go when preparation runs on the loop thread (see `run_all`)
# the fields an answered record is given (`SampleWorker._answered`; the others keep their defaults), as `_record`
# gives them: the sample's, the preparation's, the answer's and the request's
_ANSWERED_FIELDS = frozenset(
    (
        "sample_id", "task", "setting", "split", "arxiv_id", "published", "date_precision", "finished_at", "epoch",
        "prompt_sha256", "input_tokens", "tokens_cut", "truncation", "prompt_info",
        "output_raw", "output", "output_tokens", "error", "error_code", "finish_reason", "warnings",
        "latency_s", "cached", "attempts",
    )
)  # fmt: skip
_ANSWERED_FIELDS_ENDPOINT = _ANSWERED_FIELDS | {"endpoint"}


class SampleWorker:
    def __init__(
        self,
        backend: Backend,
        options: GenerationOptions,
        preparer: PromptPreparer,
        cache: ResponseCache,
        writer: RecordWriter,
        limiter: AdaptiveLimiter,
        policy: RetryPolicy,
        summary: RunSummary,
        *,
        progress: ProgressFn | None = None,
        total: int = 0,
        prepare_in_thread: bool = False,
        round_sha256: str | None = None,
        before_asking: Callable[[list[Sample]], None] | None = None,
    ) -> None:
        self.round_sha256 = round_sha256
        # called once with the samples that still need preparing, before the first request (the dense-retrieval
        # embedding pass: `runs.embedding`)
        self.before_asking = before_asking
        self.generator = Generator(backend, cache=cache, limiter=limiter, policy=policy)
        # baselines read the sample's fields, not the prompt: two samples that render (or are truncated) to the
        # same prompt may still get different answers, so their answers are keyed by the sample too
        self.reads_sample = self.generator.capabilities.reads_sample
        self.backend, self.options, self.preparer, self.cache = backend, options, preparer, cache
        self.writer, self.limiter, self.policy, self.summary = writer, limiter, policy, summary
        self.identity = self.generator.identity
        self.progress, self.total, self.finished = progress, total, 0
        self._progress_at = 0.0
        self._task_options: dict[tuple[str, int], tuple[GenerationOptions, bytes]] = {}
        self._fingerprint = preparer.fingerprint() if cache.enabled else b""
        self._memo_keys: dict[str, str] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") if prepare_in_thread else None

    def options_for(self, task: str, epoch: int = 1) -> tuple[GenerationOptions, bytes]:
        """Per-task output length when none was given (title 32, abstract 512, introduction 1536, RW 1024), with
        the epoch's seed (`runs.config.epoch_options`: epoch 1 unchanged), and the cache-key prefix of both."""
        got = self._task_options.get((task, epoch))
        if got is None:
            opts = self.options
            if opts.max_tokens is None:
                opts = opts.model_copy(update={"max_tokens": max_new_tokens(task)})
            opts = epoch_options(opts, epoch)
            got = self._task_options[(task, epoch)] = (opts, self.generator.prefix(opts))
        return got

    @property
    def stats(self) -> RetryStats:
        """Attempts, retries, 429s, 5xx and timeouts of every request of this run."""
        return self.generator.stats

    def prepare_now(self, sample: Sample, max_tokens: int) -> Prepared:
        """The sample's prompt, prepared on the calling thread (every path of the worker prepares through here)."""
        return self.preparer(sample, max_tokens)

    async def prepare(self, sample: Sample, max_tokens: int) -> Prepared:
        if self._pool is None:
            return self.prepare_now(sample, max_tokens)
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.prepare_now, sample, max_tokens)

    # ---- records ----------------------------------------------------------------------------------
    def _record(self, sample: Sample, prep: Prepared | None, epoch: int = 1, **kw: Any) -> RunRecord:
        base: dict[str, Any] = dict(
            sample_id=sample.sample_id,
            task=sample.task,
            setting=sample.setting,
            split=sample.split,
            arxiv_id=sample.arxiv_id,
            published=sample.published,
            date_precision=sample.date_precision,
            finished_at=now_iso(),
            epoch=epoch,
        )
        if prep is not None:
            base.update(
                prompt_sha256=prep.prompt_sha256,
                input_tokens=prep.input_tokens,
                tokens_cut=prep.tokens_cut,
                truncation=prep.truncation,
                prompt_info=prep.extras,
            )
        base.update(kw)
        return new_record(**base)  # built from typed values here; validation would only cost

    def _finish(self, rec: RunRecord, *, urgent: bool = True) -> None:
        """Append the record; only answers read back from committed cache rows (and skips) may be flushed
        lazily — anything else would cost a request to redo if the process died now."""
        self.writer.append(rec, urgent=urgent)
        self._count(rec)
        self._tick(1)

    def _count(self, rec: RunRecord) -> None:
        self.summary.config(rec.task, rec.setting).add(rec)
        if rec.error_code:
            self.summary.error_codes[rec.error_code] += 1

    def _tick(self, n: int) -> None:
        """Report progress at most every PROGRESS_EVERY_S (a rich bar update per sample would cost more than a
        cached sample itself), and always when the last sample is done."""
        self.finished += n
        if self.progress is None:
            return
        now = time.monotonic()
        if self.finished >= self.total or now - self._progress_at >= PROGRESS_EVERY_S:
            self._progress_at = now
            self.progress(self.finished, self.total)

    def _from_outcome(
        self,
        sample: Sample,
        prep: Prepared,
        out: Outcome,
        *,
        cached: bool,
        latency: float,
        attempts: int,
        epoch: int = 1,
        endpoint: str | None = None,
    ) -> RunRecord:
        if not isinstance(out, BaseException):  # an answer (the common case)
            return self._answered(
                sample, prep, out, cached=cached, latency=latency, attempts=attempts, epoch=epoch, endpoint=endpoint
            )
        common: dict[str, Any] = dict(latency_s=round(latency, 4), cached=cached, attempts=attempts, epoch=epoch)
        if endpoint is not None:  # several endpoints: the one that answered
            common["endpoint"] = endpoint
        if isinstance(out, BackendError):
            retryable = not is_final(out.code)  # auth, 429, 5xx, timeouts: a rerun asks again (models.errors)
            return self._record(sample, prep, error=str(out), error_code=out.code, retryable=retryable, **common)
        if isinstance(out, AcademicEvalError):
            return self._record(sample, prep, error=str(out), error_code=out.code, **common)
        # any other exception is a backend bug: it must not sink the batch; recorded, retried next run
        msg = f"{type(out).__name__}: {out}"[:500]
        return self._record(sample, prep, error=msg, error_code="internal", retryable=True, **common)

    def _answered(
        self,
        sample: Sample,
        prep: Prepared,
        out: Completion,
        *,
        cached: bool,
        latency: float,
        attempts: int,
        epoch: int,
        endpoint: str | None,
    ) -> RunRecord:
        """The record of an answer (or an empty one), every field named here in declaration order (`record_of`):
        the same record as `_record(...)` of these values, without its three passes over dicts of keywords
        (tests/runs/test_record_fast_path.py holds the two side by side)."""
        text = out.text or ""
        error = code = None
        if not text.strip():
            err = EmptyAnswerError(f"empty answer (finish_reason={out.finish_reason})")
            error, code = str(err), err.code
        raw = out.raw
        data = {
            "sample_id": sample.sample_id,
            "task": sample.task,
            "setting": sample.setting,
            "split": sample.split,
            "arxiv_id": sample.arxiv_id,
            "published": sample.published,
            "date_precision": sample.date_precision,
            "prompt_sha256": prep.prompt_sha256,
            "output_raw": text,
            "output": postprocess(sample.task, text) if not error else "",
            "input_tokens": out.input_tokens or prep.input_tokens,
            "output_tokens": out.output_tokens or 0,
            "tokens_cut": prep.tokens_cut,
            "truncation": prep.truncation,
            "latency_s": round(latency, 4),
            "cached": cached,
            "error": error,
            "finished_at": now_iso(),
            "error_code": code,
            "retryable": False,
            "skipped": False,
            "finish_reason": out.finish_reason,
            "attempts": attempts,
            "endpoint": endpoint,
            "warnings": [k for k in ("invalid_utf8", "replacement_chars") if raw.get(k)] if raw else [],
            "prompt_info": prep.extras,
            "epoch": epoch,
        }
        return record_of(data, set(_ANSWERED_FIELDS if endpoint is None else _ANSWERED_FIELDS_ENDPOINT))

    # ---- requests ---------------------------------------------------------------------------------
    def _backend_view(self, sample: Sample, prep: Prepared) -> Sample:
        """The sample as the backend should see it. A baseline reads the sample, not the prompt, so under --rag
        its available text must be what retrieval kept (in rank order) — otherwise a RAG baseline would silently
        score the same as the plain one and measure nothing about retrieval."""
        if self.reads_sample and self.preparer.probe:
            # likewise a probe: the baseline reads only what the probe leaves (title-only: the title), so a probed
            # baseline run measures the probe instead of repeating the plain run's answers
            probed, _ = probe_parts(sample, self.preparer.probe)
            if probed is not None:
                return sample.model_copy(update={"fields": probed.fields, "demos": [], "citations": []})
        if not self.reads_sample or not prep.retrieved_texts:
            return sample
        kept = prep.retrieved_texts[: max(0, len(prep.retrieved_texts) - int(prep.extras.get("chunks_dropped", 0)))]
        field = DOCUMENT_FIELD if task_spec(sample.task).prompt_kind == "document_qa" else "body"
        fields = {**sample.fields, field: "\n\n".join(kept)}  # L-Eval items: the document's retrieved chunks
        return sample.model_copy(update={"fields": fields, "demos": [], "citations": []})

    def restore_cache(self, records: Iterable[RunRecord]) -> int:
        """Write answers found in earlier records back to the cache when their rows are missing (lost with a
        killed process before the cache committed them)."""
        if not self.cache.enabled or self.reads_sample:  # records do not hold the sample; baselines are cheap
            return 0
        rows: dict[str, tuple[str, dict[str, Any], Completion]] = {}
        for r in records:
            if r.error or not r.output_raw or not r.prompt_sha256:
                continue
            key = self.generator.key(self.options_for(r.task, r.epoch)[1], r.prompt_sha256)  # not reads_sample
            completion = Completion(
                text=r.output_raw,
                input_tokens=r.input_tokens or None,
                output_tokens=r.output_tokens or None,
                finish_reason=r.finish_reason,
                raw={"restored_from_record": True},
            )
            rows[key] = (r.prompt_sha256, self.identity, completion)
        return self.cache.restore(rows)

    def replay_cached(self, units: Sequence[Unit]) -> list[Unit]:
        """Finish every (sample, epoch) whose prepared prompt (memo) and answer are both cached, in bulk and
        without rendering or tokenizing; return the rest (a sample with the epochs still to ask), which need `one`."""
        if not self.cache.enabled or not units:
            return list(units)
        memo_keys = [self._memo_key(s) for s, _ in units]
        memos = self.cache.get_memos(memo_keys)
        preps: dict[int, Prepared] = {}
        response_keys: dict[tuple[int, int], str] = {}
        for i, ((s, epochs), mk) in enumerate(zip(units, memo_keys, strict=True)):
            blob = memos.get(mk)
            if blob is None:
                continue
            prep = preps[i] = Prepared.from_memo(blob)
            if not prep.skipped:
                for e in epochs:
                    response_keys[(i, e)] = self._response_key(s, prep.prompt_sha256, e)
        answers = self.cache.get_many(sorted(set(response_keys.values())))
        rest: list[Unit] = []
        batch: list[RunRecord] = []
        for i, (s, epochs) in enumerate(units):
            prep = preps.get(i)
            left: list[int] = []
            for e in epochs:
                if prep is not None and prep.skipped:
                    batch.append(self._skipped(s, prep, e))
                elif prep is not None and response_keys[(i, e)] in answers:
                    out = answers[response_keys[(i, e)]]  # a committed row of an earlier run: nothing lost on a kill
                    batch.append(self._from_outcome(s, prep, out, cached=True, latency=0.0, attempts=0, epoch=e))
                else:
                    left.append(e)
            if left:
                rest.append((s, tuple(left)))
            if len(batch) >= REPLAY_BATCH:
                self._finish_batch(batch)
                batch = []
        self._finish_batch(batch)
        return rest

    def _finish_batch(self, records: list[RunRecord]) -> None:
        """Records of cache hits and skips: one write + flush per file for the whole batch (a kill loses
        at most answers that are still in the cache, so a rerun records them again for free)."""
        if not records:
            return
        self.writer.append_many(records)
        for rec in records:
            self._count(rec)
        self._tick(len(records))

    def _response_key(self, sample: Sample, prompt_sha256: str, epoch: int = 1) -> str:
        return self.generator.key(self.options_for(sample.task, epoch)[1], prompt_sha256, sample)

    def _memo_key(self, sample: Sample) -> str:
        """Computed once per sample per run (replay computes it for every sample; `one` reuses it)."""
        key = self._memo_keys.get(sample.sample_id)
        if key is None:
            max_tokens = int(self.options_for(sample.task)[0].max_tokens or 0)
            key = self.preparer.memo_key(self._fingerprint, sample, max_tokens, self.round_sha256)
            self._memo_keys[sample.sample_id] = key
        return key

    def _skipped(self, sample: Sample, prep: Prepared, epoch: int = 1) -> RunRecord:
        reason = prep.reason or "too long for the context"
        # a probe that does not apply to the task (title-only on title samples) is not an overflow
        code = "not_applicable" if prep.truncation == "not_applicable" else "skipped_overflow"
        return self._record(sample, prep, epoch, skipped=True, error=reason, error_code=code)

    async def one(self, sample: Sample, epochs: Sequence[int] = (1,)) -> None:
        """Prepare the sample once, then ask each of its epochs (concurrently: the limiter bounds what is in
        flight) and record each as it finishes."""
        opts = self.options_for(sample.task)[0]  # the output length is the same in every epoch
        try:
            prep = await self.prepare(sample, int(opts.max_tokens or 0))
        except Exception as e:
            self._prepare_failed(sample, epochs, e)
            return
        if self._prepared(sample, prep, epochs):
            await self._ask_epochs(sample, prep, epochs)

    def _prepare_unit(self, sample: Sample, epochs: Sequence[int]) -> Prepared | None:
        """`one`'s preparation on the loop thread: the Prepared to ask, or None when the sample is already
        recorded (preparation failed, or the prompt is skipped)."""
        opts = self.options_for(sample.task)[0]
        try:
            prep = self.prepare_now(sample, int(opts.max_tokens or 0))
        except Exception as e:
            self._prepare_failed(sample, epochs, e)
            return None
        return prep if self._prepared(sample, prep, epochs) else None

    def _prepare_failed(self, sample: Sample, epochs: Sequence[int], e: Exception) -> None:
        # one bad sample is recorded (readably: prompt_sha256 is required) and the run goes on
        code = e.code if isinstance(e, AcademicEvalError) else "prepare_failed"
        msg = str(e) if isinstance(e, AcademicEvalError) else f"preparing the prompt failed: {e!r}"
        # retryable: nothing was sent, so a rerun (e.g. after fixing a template) costs no request
        for epoch in epochs:
            failed = self._record(sample, None, epoch, prompt_sha256="", error=msg, error_code=code, retryable=True)
            self._finish(failed)

    def _prepared(self, sample: Sample, prep: Prepared, epochs: Sequence[int]) -> bool:
        """Memoise the preparation; record the epochs of a skipped prompt. True when there is something to ask."""
        if self.cache.enabled:
            self.cache.put_memo(self._memo_key(sample), prep.memo_json())
        if prep.skipped:
            for epoch in epochs:
                self._finish(self._skipped(sample, prep, epoch), urgent=False)
            return False
        return True

    async def _ask_epochs(
        self, sample: Sample, prep: Prepared, epochs: Sequence[int], keys: Sequence[str] | None = None
    ) -> None:
        keys = keys or [self._response_key(sample, prep.prompt_sha256, epoch) for epoch in epochs]
        if len(epochs) == 1:
            await self._ask(sample, prep, epochs[0], keys[0])
        else:
            await asyncio.gather(*(self._ask(sample, prep, e, k) for e, k in zip(epochs, keys, strict=True)))

    async def _ask(self, sample: Sample, prep: Prepared, epoch: int, key: str) -> None:
        opts = self.options_for(sample.task, epoch)[0]
        got = await self.generator.generate(
            prep.prompt, opts, self._backend_view(sample, prep), key=key, prompt_sha256=prep.prompt_sha256
        )
        answered = got.completion is not None and got.source != "cache"
        rec = self._from_outcome(
            sample,
            prep,
            got.outcome,
            cached=got.cached,
            latency=got.latency_s,
            attempts=got.attempts,
            epoch=epoch,
            endpoint=got.completion.raw.get("endpoint") if answered else None,
        )
        # a committed cache row survives a kill, so its record may be flushed lazily; an answer this run wrote and
        # has not committed yet (see ResponseCache), a shared one and a fresh one are flushed at once
        self._finish(rec, urgent=got.source != "cache" or not got.committed)

    def _prepare_ahead(self, units: Sequence[Unit]) -> Iterator[tuple[Sample, Sequence[int], Prepared, list[str]]]:
        """Units with their prepared prompts and response keys, PREPARE_BATCH samples at a time: rendering a batch
        in one go costs less than half of rendering each sample between requests (the template engine's code stays
        in the CPU caches), their memos go into the cache's same commit, and their answers are looked up with one
        query (`remember_misses`: the Generator's own look-up of a miss then costs no query). Shared by the
        workers: no `await` inside, so one batch is prepared at a time, in order."""
        for i in range(0, len(units), PREPARE_BATCH):
            batch = []
            for s, epochs in units[i : i + PREPARE_BATCH]:
                prep = self._prepare_unit(s, epochs)
                if prep is not None:
                    batch.append((s, epochs, prep, [self._response_key(s, prep.prompt_sha256, e) for e in epochs]))
            if self.cache.enabled:
                self.cache.get_many([k for *_, keys in batch for k in keys], remember_misses=True)
            yield from batch

    async def run_all(self, units: Sequence[Unit], workers: int) -> None:
        """Every (sample, epochs) unit: cached ones replayed in bulk, the rest asked by `workers` workers."""
        units = self.replay_cached(units)
        if not units:
            return
        if self.before_asking is not None:
            self.before_asking([s for s, _ in units])
        n = max(1, min(workers, len(units)))
        if self._pool is None:  # preparation on the loop thread: in batches, ahead of the requests
            prepared = self._prepare_ahead(units)

            async def worker() -> None:
                for s, epochs, prep, keys in prepared:  # one shared iterator: each sample is taken by one worker
                    if len(epochs) == 1:  # (without `_ask_epochs`' coroutine layer: most samples have one epoch)
                        await self._ask(s, prep, epochs[0], keys[0])
                    else:
                        await self._ask_epochs(s, prep, epochs, keys)

        else:  # preparation that tokenizes or retrieves: one sample at a time in the pool, overlapping requests
            it = iter(units)

            async def worker() -> None:
                for s, epochs in it:
                    await self.one(s, epochs)

        try:
            await asyncio.gather(*(worker() for _ in range(n)))
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
