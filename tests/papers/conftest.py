"""Fixtures for the papers tests: a handful of real corpus PDFs parsed once per session, and bad-file makers."""

from __future__ import annotations

from pathlib import Path

import pytest
from papers_corpus_subset import SUBSET

from academiceval.papers import Paper, parse_pdf


@pytest.fixture(scope="session")
def parsed(corpus: Path) -> dict[str, Paper]:
    """name → Paper for SUBSET, parsed once per test session."""
    return {name: parse_pdf(corpus / "pdf" / name) for name in SUBSET}


@pytest.fixture(scope="session")
def pdf_dir(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, Path]:
    """A synthetic paper ("good") plus one file per bad-input kind, written once per session."""
    from papers_pdf_factory import bad_files, synthetic_paper

    base = tmp_path_factory.mktemp("pdfs")
    good = synthetic_paper(base / "synthetic.pdf")
    files = bad_files(base / "bad", corpus / "pdf" / "1706.03762v7.pdf")
    return {"good": good, **files}
