"""Run specs and per-sample run records — the boundary model between `runs` and `scores`.

Defined in `academiceval.store.models` (the artifacts layer reads and writes them); this is the runs stage's
name for them.
"""

from academiceval.store.models import RunRecord, RunSpec

__all__ = ["RunRecord", "RunSpec"]
