"""PDF → structured Paper (sections, references, in-text citations).

`parse_pdf(path)` turns one PDF into a `Paper`; `academiceval.papers.ingest` stores many of them in a
workspace, content-addressed by the PDF's sha256.
"""

from academiceval.papers.models import Citation, Paper, Reference, Section, SectionRole
from academiceval.papers.parse import PARSER_VERSION, parse_pdf

__all__ = ["PARSER_VERSION", "Citation", "Paper", "Reference", "Section", "SectionRole", "parse_pdf"]
