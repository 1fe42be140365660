"""Reference resolution in layers: the workspace, a local mirror, the arXiv API, OpenAlex (see resolver.py)."""

from academiceval.sources.resolve.cache import method_counts, record_resolutions, resolutions_of
from academiceval.sources.resolve.models import METHODS, Resolution, ResolvedWork
from academiceval.sources.resolve.resolver import Resolver, entry_of, resolve_references, resolver_for

__all__ = [
    "METHODS",
    "Resolution",
    "ResolvedWork",
    "Resolver",
    "entry_of",
    "method_counts",
    "record_resolutions",
    "resolutions_of",
    "resolve_references",
    "resolver_for",
]
