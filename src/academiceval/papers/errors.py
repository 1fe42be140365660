"""Typed ingestion errors: one class per way a PDF can be unusable, each with a message a person can act on.

Every class has a stable `code` (stored in the workspace's `ingest_error` table and shown in the summary
table) and a default hint saying what to do about it.
"""

from __future__ import annotations

from academiceval.errors import AcademicEvalError


class PaperError(AcademicEvalError):
    """Base for problems with one input PDF; the batch records it and goes on."""

    code = "paper_error"
    exit_code = 2  # the input file is unusable: bad input, not a failure of the tool
    default_hint: str | None = None

    def __init__(self, message: str, *, source: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, source=source, hint=hint or self.default_hint)


class EmptyFileError(PaperError):
    code = "empty_file"
    default_hint = "the download or copy produced 0 bytes; fetch the PDF again"


class NotAPdfError(PaperError):
    code = "not_pdf"
    default_hint = "the file does not start with a PDF header; check that it really is a PDF"


class HtmlNotPdfError(NotAPdfError):
    code = "html_not_pdf"
    default_hint = (
        "an HTML page was saved under a .pdf name, usually a rate-limit or error page from the server; "
        "wait and download it again (arXiv asks for at least 3 s between requests)"
    )


class CorruptPdfError(PaperError):
    code = "corrupt_pdf"
    default_hint = "the PDF structure cannot be read; download the file again or re-export it"


class TruncatedPdfError(CorruptPdfError):
    code = "truncated_pdf"
    default_hint = "the file ends before the PDF does (interrupted download?); download it again"


class EncryptedPdfError(PaperError):
    code = "encrypted_pdf"
    default_hint = "the PDF is password-protected; save an unencrypted copy (e.g. qpdf --decrypt) and ingest that"


class NoTextLayerError(PaperError):
    code = "no_text_layer"
    default_hint = "this looks like a scanned paper with no text layer; run OCR (e.g. ocrmypdf) first"


class TooManyPagesError(PaperError):
    code = "too_many_pages"
    default_hint = "this is not a paper-sized document; raise the page cap (--max-pages) if it really is one"


class NoSectionsError(PaperError):
    code = "no_sections"
    default_hint = "no section headings were recognised; the file may not be a research paper"


class IngestBatchError(AcademicEvalError):
    """Raised by `ingest_paths(strict=True)` after the batch when any file failed."""

    code = "ingest_batch"
