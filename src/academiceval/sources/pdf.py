"""PDF file checks shared by every source: what counts as a complete PDF on disk (for resumable downloads)."""

from __future__ import annotations

from pathlib import Path

PDF_MAGIC = b"%PDF-"


def looks_like_pdf(head: bytes) -> bool:
    """True when the bytes start like a PDF (some writers put a few bytes of junk before the header)."""
    return PDF_MAGIC in head[:1024]


def is_complete_pdf(path: Path) -> bool:
    """A file that starts like a PDF and ends with an `%%EOF` marker: a finished download, safe to skip."""
    try:
        size = path.stat().st_size
        if size < 64:
            return False
        with path.open("rb") as f:
            head = f.read(1024)
            f.seek(max(0, size - 2048))
            tail = f.read()
    except OSError:
        return False
    return looks_like_pdf(head) and b"%%EOF" in tail
