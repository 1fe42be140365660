"""What a run did, for the summary table and for callers of `run_round`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval.errors import AcademicEvalError
from academiceval.models.errors import is_final
from academiceval.store.models import RunRecord

_last_second: tuple[int, str] = (-1, "")


class RunIncompleteError(AcademicEvalError):
    """Requests of a run failed after their retries: no answer for those samples (a rerun asks them again)."""

    code = "run_incomplete"


NOT_SENT = frozenset({"not_applicable", "skipped_overflow"})  # skips by design (a probe that does not apply, overflow)


def is_failed_request(error_code: str | None) -> bool:
    """An error code whose request failed (a rerun asks again): not an answer, not a skip by design, not a final
    outcome of the model (empty, refused, too long). `models.errors.is_final` decides what a rerun asks again."""
    return error_code is not None and error_code not in NOT_SENT and not is_final(error_code)


def failed_requests(records: Iterable[RunRecord]) -> dict[str, int]:
    """Error code → records whose request failed (the runner marks them `retryable`: a rerun asks again) — what
    `run` and `score` report as answers missing."""
    out = Counter(r.error_code or "error" for r in records if r.error and r.retryable)
    return dict(out.most_common())


def now_iso() -> str:
    """UTC now to the second. Formatted once per second: a cache replay stamps thousands of records a second,
    and `datetime.isoformat` per record was a visible part of its cost."""
    global _last_second
    t = int(time.time())
    if t != _last_second[0]:
        _last_second = (t, datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds"))
    return _last_second[1]


@dataclass
class ConfigCounts:
    selected: int = 0
    already_done: int = 0  # finished by an earlier run (resume)
    done: int = 0  # finished now with an answer (requested or cached)
    cached: int = 0
    errors: int = 0
    truncated: int = 0
    skipped: int = 0

    def add(self, rec: RunRecord) -> None:
        if rec.skipped:
            self.skipped += 1
        elif rec.error:
            self.errors += 1
        else:
            self.done += 1
            self.cached += int(rec.cached)
        if rec.tokens_cut > 0 and not rec.skipped:
            self.truncated += 1


@dataclass
class RunSummary:
    run_dir: Path
    round: str
    model: str
    prompt_preparation: str = ""
    by_config: dict[tuple[str, str], ConfigCounts] = field(default_factory=dict)
    error_codes: Counter[str] = field(default_factory=Counter)
    requests: int = 0  # HTTP attempts (including retries)
    retries: int = 0
    rate_limited: int = 0
    final_limit: int | None = None
    endpoints: dict[str, dict[str, int]] | None = None  # several endpoints: requests/answers/failures per URL
    elapsed_s: float = 0.0  # wall time of the request phase (after loading and validation)
    cpu_s: float = 0.0  # this process's CPU time over the same phase (all threads)
    token_report: list[dict[str, Any]] = field(default_factory=list)  # --count-tokens rows
    count_tokens_only: bool = False
    epochs: int = 1  # repeats per sample; with more than one, the counts are of (sample, epoch) pairs
    warnings: list[str] = field(default_factory=list)  # what run.json records too (e.g. a tokenizer fallback)
    embedding: dict[str, Any] | None = None  # the dense-retrieval embedding pass: chunks, estimate, time taken

    def config(self, task: str, setting: str) -> ConfigCounts:
        counts = self.by_config.get((task, setting))
        if counts is None:
            counts = self.by_config[(task, setting)] = ConfigCounts()
        return counts

    def total(self, attr: str) -> int:
        return sum(getattr(c, attr) for c in self.by_config.values())

    def failures(self) -> dict[str, int]:
        """Error code → records of this invocation whose request failed and a rerun asks again (rate limits,
        server errors, timeouts, garbled answers, auth, ...): samples without an answer, never scores of 0."""
        return {code: n for code, n in self.error_codes.most_common() if is_failed_request(code)}

    def incomplete(self) -> RunIncompleteError | None:
        """The error a command ends with when requests failed (exit status 1), else None."""
        failed = self.failures()
        if not failed:
            return None
        n = sum(failed.values())
        what = ", ".join(f"{code} {k}" for code, k in failed.items())
        return RunIncompleteError(
            f"{n} answer{'s' if n != 1 else ''} missing: the request failed ({what}); left out of every score, "
            "never counted as wrong",
            source=str(self.run_dir),
            hint="rerun the same command to ask them again (answers already recorded are not asked twice)",
        )

    @property
    def finished_now(self) -> int:
        return self.total("done") + self.total("errors") + self.total("skipped")

    def rows(self) -> list[tuple[object, ...]]:
        out: list[tuple[object, ...]] = []
        for (task, setting), c in sorted(self.by_config.items()):
            out.append((task, setting, c.selected, c.already_done, c.done, c.cached, c.errors, c.truncated, c.skipped))
        return out

    COLUMNS = ("task", "setting", "selected", "resumed", "done", "cached", "errors", "truncated", "skipped")
