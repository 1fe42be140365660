"""Paper metadata as it arrives from arXiv (API, bulk mirror) — the boundary model of `sources`.

Defined in `academiceval.store.paper_models` (the workspace stores and returns it); this is the sources stage's
name for it.
"""

from academiceval.store.paper_models import Author, DatePrecision, PaperMeta

__all__ = ["Author", "DatePrecision", "PaperMeta"]
