"""Related Work bookkeeping of a build: why each paper has a Related Work sample or not, and how well its label
is supported by what the citation list shows.

`RelatedWorkLedger` follows every catalogued paper through the build (quality gate, task view, split, label debris,
citation list, leakage check, settings) and keeps, per paper, either the split its samples went to or the first
reason it got none, with the numbers that reason rests on (works cited in the section, listed, with an abstract,
title-only, not shown; distractors). It is written to the manifest (`validity.related_work`) and read by `audit`.

`paragraph_support` measures the label paragraphs whose every citation is a work the list shows without an
abstract. They are *flagged*, not cut (notes/rounds.md, "Unresolved works stay in the task"): the label stays the
authors' own section, and the model is shown those works' titles, authors and years.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from academiceval.rounds.citations import ABSTRACT, CorpusStats
from academiceval.store.paper_models import Paper, SectionRole

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def paragraph_support(raw: Paper, roles: Paper, by_ref: Mapping[int, str]) -> dict[str, int]:
    """Paragraphs of the related-work section(s) (blank-line separated, in the stored text whose citation spans are
    exact), the ones that cite anything, and the ones whose every cited reference the list shows without an
    abstract (`by_ref` is `CitedList.by_ref`), with their words. `roles` is the paper with the roles the tasks use
    (`prepare_paper`; same sections in the same order)."""
    out = {"paragraphs": 0, "citing": 0, "title_only": 0, "words": 0, "title_only_words": 0}
    rw = [i for i, s in enumerate(roles.sections) if s.role == SectionRole.related_work]
    for i in rw:
        text = raw.sections[i].text if i < len(raw.sections) else ""
        cites = [c for c in raw.citations if c.section_index == i]
        start = 0
        spans = [(m.start(), m.end()) for m in _PARAGRAPH_BREAK.finditer(text)] + [(len(text), len(text))]
        for a, b in spans:
            para, words = (start, a), len(text[start:a].split())
            start = b
            if not words:
                continue
            out["paragraphs"] += 1
            out["words"] += words
            refs = {j for c in cites if para[0] <= c.start < para[1] for j in c.reference_indices if j in by_ref}
            if not refs:
                continue
            out["citing"] += 1
            if all(by_ref[j] != ABSTRACT for j in refs):
                out["title_only"] += 1
                out["title_only_words"] += words
    return out


@dataclass
class RelatedWorkLedger:
    """Per paper: the split of its Related Work samples, or the first reason it has none (see the module doc)."""

    papers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def paper(self, arxiv_id: str, *, has_section: bool, cited: int) -> None:
        self.papers[arxiv_id] = {"has_section": has_section, "cited": cited, "status": None, "reason": None}

    def split(self, arxiv_id: str, split: str) -> None:
        if arxiv_id in self.papers:
            self.papers[arxiv_id]["split"] = split

    def exclude(self, arxiv_id: str, reason: str) -> None:
        """The first reason wins (later stages never see an excluded paper; settings may add their own)."""
        p = self.papers.get(arxiv_id)
        if p is not None and p["status"] is None and p["reason"] is None:
            p["reason"] = reason

    def corpus(
        self, arxiv_id: str, stats: CorpusStats, *, distractors: int = 0, paragraphs: dict[str, int] | None = None
    ) -> None:
        p = self.papers.get(arxiv_id)
        if p is None:
            return
        p.update(
            cited=stats.cited,
            listed=stats.listed,
            with_abstract=stats.with_abstract,
            title_only=stats.title_only,
            not_shown=stats.not_shown,
            abstract_share=round(stats.abstract_fraction, 4),
            distractors=distractors,
        )
        if paragraphs is not None:
            p["paragraphs"] = paragraphs

    def sample(self, arxiv_id: str, split: str) -> None:
        p = self.papers.get(arxiv_id)
        if p is not None:
            p.update(status="sample", split=split, reason=None)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """What the manifest keeps: every paper with its status ("sample" / "excluded") and reason."""
        out = {}
        for aid, p in sorted(self.papers.items()):
            row = dict(p)
            if row["status"] is None:
                row["status"] = "excluded"
                row["reason"] = row["reason"] or "no setting gave a sample (see the skip reasons of the settings)"
            out[aid] = {k: v for k, v in row.items() if v is not None}
        return out


def summary(papers: Mapping[str, Mapping[str, Any]], *, min_cited: int = 5) -> dict[str, Any]:
    """Counts over a ledger (as the manifest stores it): papers with a sample per split, reasons of the others, and
    the papers whose section cites at least `min_cited` works (the task's candidates) by outcome."""
    splits: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    candidates: Counter[str] = Counter()
    for p in papers.values():
        if p.get("status") == "sample":
            splits[str(p.get("split"))] += 1
        else:
            reasons[str(p.get("reason"))] += 1
        if p.get("has_section") and int(p.get("cited") or 0) >= min_cited:
            candidates["sample" if p.get("status") == "sample" else "excluded with a reason"] += 1
    return {
        "papers": len(papers),
        "with_sample": dict(sorted(splits.items())),
        "reasons": dict(reasons.most_common()),
        f"section_citing_{min_cited}_plus": dict(candidates),
    }


def audit(papers: Mapping[str, Mapping[str, Any]], *, min_cited: int = 5) -> dict[str, Any]:
    """What `academiceval audit` shows of a ledger: the summary; one row per paper whose related-work section cites
    something (its split, outcome, works with an abstract of those listed, title-only label paragraphs, reason);
    and the other papers grouped by reason (no section, a fragment the gate excluded, …), ids kept."""
    rows = {aid: dict(p) for aid, p in papers.items() if p.get("has_section") and (p.get("cited") or p.get("listed"))}
    rest: dict[str, list[str]] = {}
    for aid, p in sorted(papers.items()):
        if aid not in rows:
            rest.setdefault(str(p.get("reason") or p.get("status")), []).append(aid)
    return {
        "summary": summary(papers, min_cited=min_cited),
        "papers": dict(sorted(rows.items(), key=lambda kv: (SPLIT_ORDER.get(str(kv[1].get("split")), 9), kv[0]))),
        "others": {k: {"papers": len(v), "ids": v} for k, v in sorted(rest.items(), key=lambda kv: -len(kv[1]))},
    }


SPLIT_ORDER = {"test": 0, "val": 1, "train": 2}
