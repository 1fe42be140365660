"""The embedded workspace (SQLite in WAL mode plus files), the artifacts layer, the boundary models, the task
registry and the round publisher.

`Workspace`, `register_schema` and `resolve_home` are re-exported lazily: the workspace brings the artifacts
layer (pyarrow, ~0.5 s), and light modules of this package (the task registry, `store.tasks`, which every
command line loads to mount the families' sub-commands) must not pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from academiceval.store.workspace import Workspace, register_schema, resolve_home

__all__ = ["Workspace", "register_schema", "resolve_home"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("academiceval.store.workspace"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
