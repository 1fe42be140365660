"""Fixtures for the papers tests: a handful of real corpus PDFs parsed once per session, and bad-file makers."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.papers import Paper, parse_pdf
from papers_corpus_subset import SUBSET



@pytest.fixture(scope="session")
def parsed(corpus: Path) -> dict[str, Paper]:
    """name → Paper for SUBSET, parsed once per test session."""
    return {name: parse_pdf(corpus / "pdf" / name) for name in SUBSET}
