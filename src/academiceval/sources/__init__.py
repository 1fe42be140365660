"""Where papers come from: the arXiv API, a local bulk mirror, a server speaking the arXiv protocol.

`open_source` is what every collector command calls for its `--source` / `--api-url` options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from academiceval.sources.base import FeedPage, MetadataSource
from academiceval.sources.errors import SourceError, SourceNotFoundError
from academiceval.sources.names import NameResolver, author_key, display_name
from academiceval.store.paper_models import Author, PaperMeta


def open_source(source: str = "arxiv", api_url: str | None = None, **client_opts: Any) -> MetadataSource:
    """`"arxiv"` → the live API client; a directory (or one data file) → the in-process mirror; `api_url` → the
    HTTP client pointed at any server speaking the arXiv protocol (e.g. `academiceval mirror serve`). Client
    options (min_interval, max_retries, timeout, user_agent, ...) go to `ArxivClient`."""
    from academiceval.sources.client import ArxivClient

    if api_url:
        return ArxivClient(api_url, **client_opts)
    if source == "arxiv":
        return ArxivClient(**client_opts)
    path = Path(source).expanduser()
    if path.exists():  # a mirror directory, or a single data file
        from academiceval.sources.mirror import MirrorSource

        keep = ("id_batch_size", "progress", "index", "index_path", "index_dir")  # index*: see MirrorSource
        opts = {k: v for k, v in client_opts.items() if k in keep}
        return MirrorSource(path, **opts)
    raise SourceNotFoundError(
        f"unknown source {source!r}", hint="use 'arxiv' (live), a mirror directory, or --api-url URL of a server"
    )


__all__ = [
    "Author",
    "FeedPage",
    "MetadataSource",
    "NameResolver",
    "PaperMeta",
    "SourceError",
    "SourceNotFoundError",
    "author_key",
    "display_name",
    "open_source",
]
