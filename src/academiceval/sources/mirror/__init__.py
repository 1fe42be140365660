"""Local bulk mirror: read arXiv's own formats from a directory, answer queries in-process, index a workspace."""

from academiceval.sources.mirror.index import MirrorIndex, load_index
from academiceval.sources.mirror.source import MirrorSource

__all__ = ["MirrorIndex", "MirrorSource", "load_index"]
