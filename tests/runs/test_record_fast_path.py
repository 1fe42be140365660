"""The runner's answered record (`SampleWorker._answered`, every field named in declaration order and built with
`store.artifacts.record_of`) is the record the generic path (`SampleWorker._record` → `new_record`) builds from the
same values: the same JSON line byte for byte, the same fields set, equal objects, and the same object after a
read back — on real samples (the round of the unarXive sample) with varied answers: unicode, control characters,
empty and blank answers, missing counts and finish reasons, damaged-text warnings, an answering endpoint, epochs
and preparation extras."""

from __future__ import annotations

import itertools
from pathlib import Path

from academiceval.models.base import Completion
from academiceval.models.postprocess import postprocess
from academiceval.runs.prepare import Prepared
from academiceval.runs.summary import now_iso
from academiceval.runs.worker import SampleWorker
from academiceval.store.artifacts import _record_json, load_round
from academiceval.store.models import RunRecord

TEXTS = [
    "A plain answer about transformers.",
    "Ünïcode — ∑ αβγ 中文 😀 and a tab\tand\nnewlines\r\n",
    'control \x00\x01\x1f\x7f characters and a \\ backslash and "quotes"',
    "Abstract: We study the thing.\n\nIt works.",
    "<think>hidden</think>Title: A **Good** Title.",
    "",
    "   \n\t ",
    "\ufffd replacement \ufffd",
    "x" * 5000,
]
COMPLETIONS = [
    dict(input_tokens=412, output_tokens=37, finish_reason="stop", raw={"served_model": "m"}),
    dict(input_tokens=None, output_tokens=None, finish_reason=None, raw={}),
    dict(input_tokens=0, output_tokens=0, finish_reason="length", raw={"invalid_utf8": True}),
    dict(output_tokens=5, finish_reason="stop", raw={"replacement_chars": 2, "invalid_utf8": True, "endpoint": "e"}),
]
PREPS = [
    dict(input_tokens=0, tokens_cut=0, truncation="none", extras={}),
    dict(input_tokens=900, tokens_cut=120, truncation="body-tail-cut", extras={"full_tokens": 1020, "tokenizer": "t"}),
    dict(input_tokens=50, extras={"retrieved": [{"chunk": 3, "score": 0.25}], "variant": "é"}),
]


def _generic(sample, prep, out, *, cached, latency, attempts, epoch, endpoint) -> RunRecord:
    """The record as `_from_outcome` built it before the fast path: `_record` with these keywords."""
    common = dict(latency_s=round(latency, 4), cached=cached, attempts=attempts, epoch=epoch)
    if endpoint is not None:
        common["endpoint"] = endpoint
    text = out.text or ""
    error = code = None
    if not text.strip():
        error, code = f"empty answer (finish_reason={out.finish_reason})", "empty_answer"
    return SampleWorker._record(
        None,  # _record reads nothing of the worker
        sample,
        prep,
        output_raw=text,
        output=postprocess(sample.task, text) if not error else "",
        input_tokens=out.input_tokens or prep.input_tokens,
        output_tokens=out.output_tokens or 0,
        error=error,
        error_code=code,
        finish_reason=out.finish_reason,
        warnings=[k for k in ("invalid_utf8", "replacement_chars") if out.raw.get(k)],
        **common,
    )


def test_answered_record_is_the_generic_record_byte_for_byte(sample_round: Path):
    samples = load_round(sample_round).distinct_samples()
    assert {s.task for s in samples} == {"title", "abstract"}  # a title is refined, an abstract only stripped
    cases = itertools.product(TEXTS, COMPLETIONS, PREPS, ((1, None, 0.0), (3, "http://b:8000/v1", 12.345678)))
    checked = 0
    for i, (text, comp, prep_kw, (epoch, endpoint, latency)) in enumerate(cases):
        sample = samples[i % len(samples)]
        if i % 7 == 0:
            sample = sample.model_copy(update={"date_precision": "month"})
        prep = Prepared(prompt="p", prompt_sha256=f"{i:064x}", **prep_kw)
        out = Completion(text=text, **comp)
        kw = dict(cached=bool(i % 2), latency=latency + i * 1e-5, attempts=i % 4, epoch=epoch, endpoint=endpoint)
        stamp = now_iso()
        ours = SampleWorker._answered(None, sample, prep, out, **kw)
        theirs = _generic(sample, prep, out, **kw)
        if ours.finished_at != theirs.finished_at or stamp != theirs.finished_at:  # a second passed in between
            continue
        assert _record_json(ours) == _record_json(theirs) == theirs.model_dump_json().encode()
        assert list(ours.__dict__) == list(RunRecord.model_fields)  # declaration order: the JSON key order
        assert ours.model_fields_set == theirs.model_fields_set
        assert ours == theirs
        assert RunRecord.model_validate_json(_record_json(ours)) == RunRecord.model_validate_json(_record_json(theirs))
        checked += 1
    assert checked >= 0.9 * len(TEXTS) * len(COMPLETIONS) * len(PREPS) * 2
