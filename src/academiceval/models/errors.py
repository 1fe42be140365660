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
    """A 4xx other than 429 / context length: the request itself is wrong; retrying will not help."""

    code = "rejected"


class MissingAPIKeyError(ConfigError):
    code = "missing_api_key"


class UnknownModelError(ConfigError):
    code = "unknown_model"
