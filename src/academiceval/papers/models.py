"""A paper turned into structure — the boundary model of `papers`.

Defined in `academiceval.store.paper_models` (the workspace stores and returns it); this is the papers stage's
name for it.
"""

from academiceval.store.paper_models import NON_BODY_ROLES, Citation, Paper, Reference, Section, SectionRole

__all__ = ["NON_BODY_ROLES", "Citation", "Paper", "Reference", "Section", "SectionRole"]
