"""Where papers come from: the arXiv API, a local bulk mirror, a server speaking the arXiv protocol."""

from academiceval.sources.models import Author, PaperMeta

__all__ = ["Author", "PaperMeta"]
