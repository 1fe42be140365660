"""Benchmark rounds: chronological splits, the four writing tasks, few-shot settings, export."""

from academiceval.store.models import CitedPaper, Demo, RoundManifest, Sample, Task

__all__ = ["CitedPaper", "Demo", "RoundManifest", "Sample", "Task"]
