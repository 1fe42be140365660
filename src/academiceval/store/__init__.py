"""The embedded workspace (SQLite in WAL mode plus files)."""

from academiceval.store.workspace import Workspace, register_schema, resolve_home

__all__ = ["Workspace", "register_schema", "resolve_home"]
