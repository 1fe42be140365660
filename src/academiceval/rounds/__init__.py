"""Benchmark rounds: chronological splits, the four writing tasks, few-shot settings, export."""

from academiceval.rounds.models import TASKS, CitedPaper, Demo, RoundManifest, Sample, Task

__all__ = ["TASKS", "CitedPaper", "Demo", "RoundManifest", "Sample", "Task"]
