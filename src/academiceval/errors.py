"""Typed errors shared across stages.

Every error a batch can survive derives from `AcademicEvalError`; its message is meant for a person and says
what went wrong, where (`source`), and what to do about it (`hint`).

Exit status (issue 10): the error *class* decides, through `exit_code`, and every command ends with
`cli.common.fail(err)` so nothing else does. 2 = bad input: `ConfigError` and its kin (artifacts, workspace
database, missing key, unknown model), an id/query/source/path the user gave (`InvalidArxivIdError`,
`UnknownIdError`, `QuerySyntaxError`, `SourceNotFoundError`, `SourceRequestError`, `UnsafePathError`), an
unusable input PDF (`PaperError`), a run that cannot be scored as asked (`ScoreError`), a refused API key
(`AuthError`). 1 = a failure while working: network or server trouble after retries (`SourceError`,
`RetriesExhaustedError`, `BackendError`), a failed build (`LeakageError`), a batch with failed files
(`IngestBatchError`), a locked run, a missing packaged model, a demo step.
"""

from __future__ import annotations


class AcademicEvalError(Exception):
    """Base class: a problem with one input that is recorded while the rest of the batch goes on."""

    code: str = "error"
    exit_code: int = 1  # the CLI's exit status when this error ends a command: 1 a failure, 2 bad input

    def __init__(self, message: str, *, source: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.source = source
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        tip = f" ({self.hint})" if self.hint else ""
        return f"{where}{self.message}{tip}"

    def as_record(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "source": self.source, "hint": self.hint}


class ConfigError(AcademicEvalError):
    """A user-supplied option or file is invalid; raised before any work starts."""

    code = "config"
    exit_code = 2
