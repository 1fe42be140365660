"""PDF → structured Paper (sections, references, in-text citations).

`parse_pdf(path)` turns one PDF into a `Paper`; `academiceval.papers.ingest` stores many of them in a
workspace, content-addressed by the PDF's sha256.

`parse_pdf` and `PARSER_VERSION` are loaded on first use: PyMuPDF takes seconds to import, and every stage
imports this package for the `Paper` model (the workspace, rounds, runs), so an eager import slowed every
command's start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from academiceval.store.paper_models import Citation, Paper, Reference, Section, SectionRole

if TYPE_CHECKING:
    from academiceval.papers.parse import PARSER_VERSION, parse_pdf

__all__ = ["PARSER_VERSION", "Citation", "Paper", "Reference", "Section", "SectionRole", "parse_pdf"]


def __getattr__(name: str) -> Any:
    if name in ("parse_pdf", "PARSER_VERSION"):
        from academiceval.papers import parse

        return getattr(parse, name)
    raise AttributeError(f"module 'academiceval.papers' has no attribute {name!r}")
