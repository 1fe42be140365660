"""Statistics of a cloze round: items per level, gold-slot distribution, papers, tokens, citation-type
agreement between the classifiers (heuristic / judge / the source's stored type)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from academiceval.families.cloze.models import ClozeItem, TypeDecision


def agreement(pairs: Iterable[tuple[str | None, str | None]]) -> dict[str, object]:
    """Share of pairs (a, b) with a == b among pairs where both are known, with the confusion counts."""
    conf: Counter[str] = Counter()
    n = agree = 0
    for a, b in pairs:
        if a is None or b is None:
            continue
        n += 1
        agree += a == b
        conf[f"{a}|{b}"] += 1
    return {"n": n, "agree": agree, "rate": round(agree / n, 4) if n else None, "confusion": dict(sorted(conf.items()))}


def type_agreement(decisions: Iterable[TypeDecision]) -> dict[str, object]:
    ds = list(decisions)
    return {
        "heuristic_vs_source": agreement((d.heuristic, d.source) for d in ds),
        "judge_vs_source": agreement((d.judge, d.source) for d in ds),
        "heuristic_vs_judge": agreement((d.heuristic, d.judge) for d in ds),
    }


def cloze_stats(items: list[ClozeItem], *, types: Iterable[TypeDecision] = ()) -> dict[str, object]:
    per_level: dict[str, list[ClozeItem]] = defaultdict(list)
    for it in items:
        per_level[it.preset].append(it)
    levels: dict[str, object] = {}
    slots: dict[str, dict[str, int]] = {}
    for lv, its in sorted(per_level.items()):
        by_paper = Counter(it.paper_id for it in its)
        cand_tokens = [c.tokens for it in its for c in it.candidates if c.tokens is not None]
        inputs = [it.input_tokens for it in its if it.input_tokens is not None]
        slots[lv] = {str(k): v for k, v in sorted(Counter(it.label for it in its).items())}
        levels[lv] = {
            "items": len(its),
            "papers": len(by_paper),
            "max_items_per_paper": max(by_paper.values()),
            "decided_by": dict(Counter(it.citation_type.decided_by for it in its)),
            "link_methods": dict(Counter(c.link_method for it in its for c in it.candidates)),
            "mean_candidate_tokens": round(sum(cand_tokens) / len(cand_tokens), 1) if cand_tokens else None,
            "max_candidate_tokens": max(cand_tokens, default=None),
            "mean_input_tokens": round(sum(inputs) / len(inputs), 1) if inputs else None,
            "max_input_tokens": max(inputs, default=None),
            "types_in_items": type_agreement(it.citation_type for it in its),
        }
    return {
        "items": len(items),
        "levels": levels,
        "gold_slots": slots,
        "type_agreement_all_citations": type_agreement(types),
    }
