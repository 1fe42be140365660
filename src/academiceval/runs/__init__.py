"""Running a model on a round: async runner, response cache, records, resume."""

from academiceval.store.models import RunRecord, RunSpec

__all__ = ["RunRecord", "RunSpec"]
