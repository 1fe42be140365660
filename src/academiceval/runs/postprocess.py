"""Post-processing of raw answers before they are recorded (raw text is always kept beside).

Title refinement belongs to the models area; this hook calls it when it exists and otherwise only strips
surrounding whitespace, so a record never claims a refinement that did not happen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_CANDIDATES = (
    ("academiceval.models.postprocess", "postprocess"),
    ("academiceval.models.postprocess", "refine_title"),
    ("academiceval.models.titles", "refine_title"),
    ("academiceval.models.refine", "refine_title"),
)


def _resolve() -> tuple[Callable[..., str] | None, bool]:
    for mod, attr in _CANDIDATES:
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError):
            continue
        return fn, attr == "postprocess"
    return None, False


_FN, _TAKES_TASK = _resolve()


def postprocess(task: str, text: str) -> str:
    if _FN is None:
        return text.strip()
    if _TAKES_TASK:
        return _FN(task, text)
    return _FN(text) if task == "title" else text.strip()
