"""Typed errors of model calls, raised by the backends and read by every caller of `models.generate`.

Two families matter to callers (the runner, the judge): *transient* errors (429, 5xx, timeouts, a garbled body)
are retried with backoff and, if they persist, recorded as retryable so the next run tries again; *permanent* ones
(the prompt is too long for the server, an empty or refused answer) are recorded once and count as finished.
Configuration errors (missing key, unknown model or option) stop the run before any request is sent. (A tampered
round is the artifacts layer's `RoundIntegrityError`.)
"""

from __future__ import annotations

from academiceval.errors import AcademicEvalError, ConfigError


class BackendError(AcademicEvalError):
    """A model call failed for one sample; recorded, the batch goes on."""

    code = "backend"
    retryable = False


class TransientBackendError(BackendError):
    """Worth retrying: the same request may succeed later."""

    code = "transient"
    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None, **kw) -> None:
        self.retry_after = retry_after
        self.status = status
        super().__init__(message, **kw)


class RateLimitedError(TransientBackendError):
    code = "rate_limited"


class ServerError(TransientBackendError):
    code = "server_error"


class RequestTimeoutError(TransientBackendError):
    code = "timeout"


class ConnectionFailedError(TransientBackendError):
    code = "connection"


class MalformedResponseError(TransientBackendError):
    """The body was not the JSON the protocol promises (proxies cut bodies; a retry usually helps)."""

    code = "malformed_response"


class ContextLengthError(BackendError):
    """The server says prompt + output exceed the model's context window."""

    code = "context_length"


class EmptyAnswerError(BackendError):
    code = "empty_answer"


class RefusedAnswerError(BackendError):
    code = "refused"


class RequestRejectedError(BackendError):
    """A 4xx other than 429 / context length / auth: the request itself is wrong; retrying will not help."""

    code = "rejected"


class AuthError(BackendError):
    """401/402/403 on a request: the key (or the account behind it) was refused. Retrying within the run does not
    help, but the answer is not final either: after the key is fixed, a plain rerun asks again."""

    code = "auth"
    exit_code = 2  # the key or account is at fault: fix it, then rerun


# ---- which recorded errors are final ----------------------------------------------------------------------
# A rerun of the same command skips every sample whose last record is *final*: an answer, or an error that the
# same request would get again (the prompt is too long, the answer was empty or refused, the server rejects the
# request itself, the sample was skipped for overflow). Every other error — auth, rate limits, server errors,
# timeouts, connection failures, garbled bodies, an internal error, and any code this version does not know —
# is requested again by a plain rerun: only final answers are final.
FINAL_ERROR_CODES = frozenset({"context_length", "empty_answer", "refused", "rejected", "skipped_overflow"})
RETRY_ON_RERUN_CODES = frozenset(
    {"auth", "rate_limited", "server_error", "timeout", "connection", "malformed_response", "transient", "internal"}
)
_AUTH_STATUSES = ("HTTP 401", "HTTP 402", "HTTP 403")


def is_final(error_code: str | None, error: str | None = None, retryable: bool = False) -> bool:
    """True when a record with this error is finished for good (a rerun skips it); False: a rerun asks again.

    `error` is the recorded message: records written before `auth` existed typed a 401 as `rejected`."""
    if retryable:
        return False
    if error_code is None:
        return error is None
    if error_code not in FINAL_ERROR_CODES:
        return False
    return not (error_code == "rejected" and error is not None and error.startswith(_AUTH_STATUSES))


class MissingAPIKeyError(ConfigError):
    code = "missing_api_key"


class UnknownModelError(ConfigError):
    code = "unknown_model"
