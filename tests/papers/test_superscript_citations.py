"""Superscript citations (AIP/RSC/APS: a raised number after a word, "possible.2,3 In"): found from PyMuPDF's
superscript span flag on a real lab paper whose reference list is numbered with glued labels ("1S. B. Pope")."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.papers.parse import parse_pdf
from academiceval.papers.references import reference_style


@pytest.fixture(scope="module")
def avs(corpus: Path):  # type: ignore[no-untyped-def]
    return parse_pdf(corpus / "lab_publications" / "comp-physics" / "papers" / "kocherla-AVS-24.pdf")


def test_glued_reference_labels_are_numbered(avs) -> None:  # type: ignore[no-untyped-def]
    labels = [r.label for r in avs.references]
    assert reference_style(avs.references) == "numeric"
    assert len(labels) >= 40 and labels[:5] == ["1", "2", "3", "4", "5"]
    assert avs.references[0].raw.startswith("S. B. Pope")


def test_superscript_citations_resolve(avs) -> None:  # type: ignore[no-untyped-def]
    cits = [c for c in avs.citations if c.reference_indices]
    assert len(cits) >= 40  # was 0: the raised numbers were dropped
    for c in avs.citations:  # offsets point into the stored section text
        assert avs.sections[c.section_index].text[c.start : c.end] == c.text
    texts = {c.text: c.reference_indices for c in cits}
    assert texts.get("[2,3]") == [1, 2]  # "... are possible.2,3 In the sciences"
    assert texts.get("[5–7]") == [4, 5, 6]  # a range set as three raised spans "5", "–", "7"
    intro = next(s.text for s in avs.sections if s.role is not None and s.role.value == "introduction")
    assert "possible.[2,3] In" in intro


def test_exponents_are_not_citations(avs) -> None:  # type: ignore[no-untyped-def]
    # "O(Re^3)": the raised 3 runs into the closing parenthesis, so it is not read as citation 3
    intro = next(s.text for s in avs.sections if s.role is not None and s.role.value == "introduction")
    assert "Re[3]" not in intro


def test_bracket_papers_keep_their_text(corpus: Path) -> None:
    """A bracket-citing paper is left alone: no "[n]" inserted from its raised numbers (footnote marks)."""
    pdfs = sorted((corpus / "lab_publications" / "comp-physics" / "papers").glob("bryngelson-PRE-19.pdf"))
    paper = parse_pdf(pdfs[0])
    assert all(c.text.startswith("[") for c in paper.citations)
    assert sum(1 for c in paper.citations if c.reference_indices) >= 40
