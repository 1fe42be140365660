"""Per-sample scores — the boundary model between `scores` and `report`.

Defined in `academiceval.store.models` (the artifacts layer reads and writes them); this is the scores stage's
name for it.
"""

from academiceval.store.models import ScoreRecord

__all__ = ["ScoreRecord"]
