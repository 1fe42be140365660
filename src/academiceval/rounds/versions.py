"""Which version of a paper a text is, and the latest date it can be from: a demonstration's text must be dated
no later than its target (issue 23).

Windows and every leakage rule use a paper's v1 date (`PaperMeta.published`). But the text the workspace holds
may be a later version — a PDF stamped v7, a SCALAR object of v3 — written after v1, sometimes after the target
it would demonstrate: the demonstration would then show the model text from after the target's date. So every
text carries `until`, the latest date it can be from:

- no version known, or v1: the paper's own date (`published`; the policy for journal PDFs, LaTeX sources and
  unarXive texts, which the metadata dates);
- vN with N = the metadata's latest version: the metadata's `updated` date (exact);
- vN older than the metadata's latest version: at latest the `updated` date of that later version (a bound);
- vN otherwise (newer than the metadata, or no `updated` date): unknown — such a text is never a
  demonstration, since no date shows it is older than any target.

A demonstration uses the newest text of its paper whose `until` is not after the target's date: the primary
text (the one `Workspace.get_paper_by_arxiv` gives), else an earlier version's text when the workspace holds one
(another parse of the same arXiv id with a lower, known version), else the paper gives no demonstration to that
target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from academiceval.rounds import quality
from academiceval.rounds.tasks import prepare_paper, task_views
from academiceval.sources.dates import not_after
from academiceval.store.paper_models import DatePrecision, Paper, PaperMeta


@dataclass(frozen=True)
class TextDate:
    """The version of one text of a paper and the latest date it can be from (None: unknown)."""

    version: int | None
    until: date | None
    precision: DatePrecision = "day"
    exact: bool = True  # False: `until` is a bound (the date of a later version), or unknown

    def not_after(self, target: date, target_precision: DatePrecision = "day") -> bool:
        """This text is known to be no later than a target dated `target`."""
        return self.until is not None and not_after(self.until, self.precision, target, target_precision)

    def record(self) -> dict[str, object]:
        """As the manifest records it (`validity.text_versions`)."""
        return {
            "version": self.version,
            "date": self.until.isoformat() if self.until is not None else None,
            "exact": self.exact,
        }


def text_date(meta: PaperMeta, paper: Paper) -> TextDate:
    """How old the text of `paper` is (module docstring)."""
    v = paper.version
    if v is None or v <= 1:
        return TextDate(v, meta.published, meta.date_precision)
    if meta.updated is not None and meta.version is not None:
        if meta.version == v:
            return TextDate(v, meta.updated)
        if meta.version > v:
            return TextDate(v, meta.updated, exact=False)
    return TextDate(v, None, exact=False)


@dataclass(frozen=True)
class DemoText:
    """One text of a paper that can serve as a demonstration: which parse, how old, and its cost per task."""

    paper_id: str
    date: TextDate
    cost: dict[str, int] = field(default_factory=dict)  # task -> tokens of its demo (inputs + label)


def earlier_texts(ws, meta, paper, tasks, gate, token_cache) -> list[DemoText]:
    """Other texts of the paper from an earlier, known version than `paper` (newest first), as demonstrations
    for targets older than the primary text (rounds.versions); each passes the quality gate like any paper."""
    if not paper.version or paper.version <= 1:
        return []
    out: list[DemoText] = []
    for other in ws.papers_by_arxiv(meta.arxiv_id):
        if other.paper_id == paper.paper_id or not other.version or other.version >= paper.version:
            continue
        other, _ = prepare_paper(other)
        if quality.paper_reason(other, gate) is not None:
            continue
        v = task_views(meta, other, tasks=tasks, cache=token_cache, gate=gate, prepare=False)
        cost = {t: sum(i.field_tokens.values()) + i.label_tokens for t, i in v.instances.items()}
        if cost:
            out.append(DemoText(other.paper_id, text_date(meta, other), cost))
    return sorted(out, key=lambda t: -(t.date.version or 0))
