"""A benchmark round and its samples — the boundary model between `rounds` and `runs`.

Defined in `academiceval.store.models` (the artifacts layer reads and writes them); this is the rounds stage's
name for them.
"""

from academiceval.store.models import (
    CitedPaper,
    ConfigInfo,
    Demo,
    RoundManifest,
    Sample,
    Split,
    SplitWindows,
    Task,
)

__all__ = ["CitedPaper", "ConfigInfo", "Demo", "RoundManifest", "Sample", "Split", "SplitWindows", "Task"]
