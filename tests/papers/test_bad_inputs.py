"""Every kind of bad input gets its own typed, actionable error; a batch records them and goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.errors import AcademicEvalError
from academiceval.papers import errors as E
from academiceval.papers import parse_pdf
from academiceval.papers.ingest import ingest_paths

EXPECTED = {
    "empty_file": E.EmptyFileError,
    "html_not_pdf": E.HtmlNotPdfError,
    "truncated_pdf": E.TruncatedPdfError,
    "corrupt_pdf": E.CorruptPdfError,
    "not_pdf": E.NotAPdfError,
    "encrypted_pdf": E.EncryptedPdfError,
    "no_text_layer": E.NoTextLayerError,
    "too_many_pages": E.TooManyPagesError,
    "no_sections": E.NoSectionsError,
}


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_bad_file_raises_typed_error(pdf_dir: dict[str, Path], code: str) -> None:
    with pytest.raises(EXPECTED[code]) as info:
        parse_pdf(pdf_dir[code])
    err = info.value
    assert isinstance(err, AcademicEvalError)
    assert err.code == code
    assert err.source == str(pdf_dir[code])
    assert err.message and err.hint  # says what happened and what to do


def test_page_cap_is_configurable(pdf_dir: dict[str, Path]) -> None:
    with pytest.raises(E.TooManyPagesError, match="cap of 50"):
        parse_pdf(pdf_dir["too_many_pages"], max_pages=50)
    # with a cap above its length the long document gets past the cap (and fails later for lack of sections)
    with pytest.raises(E.NoSectionsError):
        parse_pdf(pdf_dir["too_many_pages"], max_pages=1000)


def test_batch_survives_every_bad_file(workspace, pdf_dir: dict[str, Path], corpus: Path) -> None:
    inputs = [pdf_dir[c] for c in sorted(EXPECTED)] + [pdf_dir["good"], corpus / "pdf" / "1503.02531v1.pdf"]
    report = ingest_paths(workspace, inputs)
    assert len(report.results) == len(inputs)
    assert {r.code for r in report.failed} == set(EXPECTED)
    assert len(report.ok) == 2
    recorded = {(e["path"], e["code"]) for e in workspace.ingest_errors()}
    assert recorded == {(str(pdf_dir[c]), c) for c in EXPECTED}
    with pytest.raises(E.IngestBatchError, match="9 of 11 files failed"):
        ingest_paths(workspace, inputs, strict=True)
