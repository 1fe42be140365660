"""Typed errors of the `sources` stage.

Each one is an `AcademicEvalError`: a collector records it (code, message, source, hint) and goes on with the
rest of its batch. `retryable` marks the ones the HTTP client retries before giving up.
"""

from __future__ import annotations

from academiceval.errors import AcademicEvalError


class SourceError(AcademicEvalError):
    """Base class for everything that can go wrong while reading papers' metadata or PDFs.

    A failure while working (network, server, a damaged download) unless a subclass says it is bad input
    (`exit_code = 2`: an id, a query, a source or option the user gave)."""

    code = "source"
    retryable = False


class SourceNotFoundError(SourceError):
    """The source the user named does not exist (no such mirror directory, not `arxiv`, not a URL) or does not
    match its index."""

    code = "source_not_found"
    exit_code = 2


class SourceRequestError(SourceError):
    """The source refused the request as malformed (e.g. an OAI-PMH badArgument or cannotDisseminateFormat):
    the options given are at fault, not the network."""

    code = "source_request"
    exit_code = 2


class InvalidArxivIdError(SourceError):
    """A string is not an arXiv identifier (new-style `2301.01234[v2]` or old-style `hep-th/9901001[v2]`)."""

    code = "invalid_id"
    exit_code = 2


class UnknownIdError(SourceError):
    """The source has no such paper (never existed, or withdrawn without a PDF)."""

    code = "unknown_id"
    exit_code = 2


class QuerySyntaxError(SourceError):
    """A `search_query` string could not be parsed."""

    code = "query_syntax"
    exit_code = 2


class AtomParseError(SourceError):
    """A response body is not a readable Atom feed (malformed or truncated XML, HTML error page)."""

    code = "atom_parse"
    retryable = True


class RecordParseError(SourceError):
    """One metadata record (.abs, listing entry, Kaggle line, ...) could not be read."""

    code = "record_parse"


class TransientHTTPError(SourceError):
    """429, 5xx, timeouts, connection resets, arXiv's empty-page quirk: retried with backoff."""

    code = "transient_http"
    retryable = True

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        hint: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(message, source=source, hint=hint)


class HTTPStatusError(SourceError):
    """A non-retryable HTTP status (400, 403, ...)."""

    code = "http_status"

    def __init__(self, message: str, *, source: str | None = None, hint: str | None = None, status: int = 0) -> None:
        self.status = status
        super().__init__(message, source=source, hint=hint)


class RetriesExhaustedError(SourceError):
    """A transient problem persisted through every retry; the last cause is in the message."""

    code = "retries_exhausted"


class NotAPdfError(SourceError):
    """A PDF download returned something else (an HTML page, an empty or truncated body)."""

    code = "not_a_pdf"


class PdfTooLargeError(SourceError):
    """A PDF exceeded the configured size cap; nothing was written."""

    code = "pdf_too_large"


class UnsafePathError(SourceError):
    """A file name derived from an id would leave its destination directory."""

    code = "unsafe_path"
    exit_code = 2


class MirrorIndexError(SourceError):
    """The on-disk mirror index (`mirror-index/*.sqlite`, derived data) could not be written or read: the disk is
    full, the file is read-only, another process holds it. Names the index file, never the workspace database."""

    code = "mirror_index"


class MirrorIndexDamagedError(MirrorIndexError):
    """The mirror index file is not a usable SQLite database (damaged pages, another kind of file). It holds
    nothing that the mirror does not: deleting it and indexing again rebuilds it."""

    code = "mirror_index_damaged"
    exit_code = 2


class QueryTimeoutError(SourceError):
    """A query on the mirror index ran longer than its time limit (`DiskIndex.time_limit`) and was stopped."""

    code = "query_timeout"
    retryable = True
