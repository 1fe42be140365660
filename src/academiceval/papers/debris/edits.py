"""Edits with offset bookkeeping: a repair is a list of (start, end, replacement) over the current text, and the
cleaner composes them so that spans into the raw text (SCALAR's citation offsets) can be carried into the clean
text.

Why not plain `re.sub`: the SCALAR paper objects carry citation spans (`start_pos`/`end_pos`) that the citation
cloze masks; cleaning the stored text must move every span with it, and drop a span only when its own text was
cut (a citation inside a removed caption). A span that merely contains an edit ("(Vaswani et al., [2017])" →
"(Vaswani et al., 2017)") keeps its identity with the new text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def apply(text: str, edits: Iterable[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits (sorted here; an edit overlapping an earlier one is dropped)."""
    out: list[str] = []
    kept: list[Edit] = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            continue
        out.append(text[pos : e.start])
        out.append(e.text)
        kept.append(e)
        pos = e.end
    out.append(text[pos:])
    return "".join(out), kept


def sub(pattern: re.Pattern[str], text: str, repl: Callable[[re.Match[str]], str | None]) -> list[Edit]:
    """The edits of `pattern.sub(repl, text)`; `repl` returning None leaves that match alone."""
    out = []
    for m in pattern.finditer(text):
        r = repl(m)
        if r is not None and r != m.group(0):
            out.append(Edit(m.start(), m.end(), r))
    return out


@dataclass
class OffsetMap:
    """Old → new positions through a sequence of passes (each a list of applied, sorted edits)."""

    passes: list[tuple[list[int], list[int], list[int]]] = field(default_factory=list)

    def add(self, edits: list[Edit]) -> None:
        if not edits:
            return
        starts = [e.start for e in edits]
        ends = [e.end for e in edits]
        shift, acc = [], 0
        for e in edits:
            acc += len(e.text) - (e.end - e.start)
            shift.append(acc)
        self.passes.append((starts, ends, shift))

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """Where [start, end) went, or None when an edit cut across it (or removed it)."""
        for starts, ends, shift in self.passes:
            # edits wholly before `start` shift it; one that straddles either boundary loses the span
            i = bisect.bisect_right(ends, start)  # edits ending at or before start
            j = bisect.bisect_left(starts, end)  # edits starting before end
            for k in range(i, j):
                if starts[k] < start or ends[k] > end:
                    return None
            if i < len(starts) and starts[i] < start < ends[i]:
                return None
            ns = start + (shift[i - 1] if i else 0)
            ne = end + (shift[j - 1] if j else 0)
            if ne <= ns:
                return None
            start, end = ns, ne
        return start, end
