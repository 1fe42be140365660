"""PDF → structured Paper (sections, references, in-text citations)."""

from academiceval.papers.models import Citation, Paper, Reference, Section, SectionRole

__all__ = ["Citation", "Paper", "Reference", "Section", "SectionRole"]
# `parse_pdf` is exported here by academiceval.papers.parse once it exists (see issue 2).
