"""The live cutoff of a cloze round: question papers first submitted after it, so that a model whose knowledge
ends before it cannot have read them.

Default ("auto"): the same newest window as the writing round's test split — the day before the test window of
the workspace's newest writing round (its manifest's `windows.test_from`); with no writing round, the window
the writing split's own rule (`rounds.split.windows_from_fractions`, its default fractions) gives over the v1
dates of the stored papers that have text. An explicit date, or None (every dated paper), overrides it.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Literal

from academiceval.rounds.split import DEFAULT_FRACTIONS, windows_from_fractions
from academiceval.store.artifacts import load_round
from academiceval.store.tasks import task_names
from academiceval.store.workspace import Workspace


def writing_test_window(ws: Workspace) -> tuple[date | None, str]:
    """(test window start, where it comes from) of the workspace's newest writing round, else of the fractions
    rule over the stored papers' dates; (None, why) when neither gives one."""
    writing = set(task_names("writing"))
    newest: tuple[str, date, str] | None = None
    for name in ws.layout.known_rounds():
        try:
            m = load_round(ws.layout.round_dir(name), verify=False).manifest
        except Exception:
            continue
        if m.windows.test_from is None or not any(c.task in writing for c in m.configs.values()):
            continue
        if newest is None or m.created_at > newest[0]:
            newest = (m.created_at, m.windows.test_from, name)
    if newest is not None:
        return newest[1], f"test window of writing round {newest[2]} (from {newest[1]})"
    dates = []
    for p in ws.iter_papers():
        meta = ws.get_meta(p.arxiv_id) if p.arxiv_id and any(s.text.strip() for s in p.sections) else None
        if meta is not None and meta.published is not None:
            dates.append(meta.published)
    w = windows_from_fractions(dates, DEFAULT_FRACTIONS)
    if w.test_from is None:
        return None, "no writing round and no dated paper with text: no cutoff"
    share = f"{DEFAULT_FRACTIONS[2]:.0%}"
    return (
        w.test_from,
        f"the writing split's newest {share} of {len(dates)} dated papers with text (from {w.test_from})",
    )


def resolve_cutoff(ws: Workspace, asked: date | Literal["auto"] | None) -> tuple[date | None, str]:
    """(cutoff, how it was chosen): papers with a v1 date after the cutoff are question papers."""
    if asked is None:
        return None, "every dated paper"
    if asked != "auto":
        return asked, f"given ({asked})"
    start, why = writing_test_window(ws)
    return (start - timedelta(days=1) if start is not None else None), why
