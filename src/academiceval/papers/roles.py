"""Heading text → canonical section role, and heading numbering patterns.

Roles are matched on the heading words, never on position, so "Background and Related Work" is related work
wherever it sits. A subsection without a role of its own inherits its parent's role (done by the parser).
"""

from __future__ import annotations

import re
from collections import Counter

from academiceval.store.paper_models import Paper, Section, SectionRole

_ROLE_PATTERNS: list[tuple[SectionRole, re.Pattern[str]]] = [
    (SectionRole.references, re.compile(r"^(references?|bibliography|literature cited|works cited|citations)$")),
    (SectionRole.acknowledgements, re.compile(r"^acknowledge?ments?|^acknowledge?ment of|^funding$")),
    (
        SectionRole.appendix,
        re.compile(r"^(appendix|appendices|supplementary|supplemental|supporting information|online appendix)"),
    ),
    (
        SectionRole.introduction,
        re.compile(
            r"^(extended |general )?introduction\b|^intro$|^motivation( and significance)?$|^overview and motivation$"
        ),
    ),
    (
        SectionRole.related_work,
        re.compile(
            r"related (work|works|literature|research|studies)|^(background|prior work|previous work|literature"
            r" review|literature survey|review of literature|state of the art)\b|^(technical )?background\b"
        ),
    ),
    (
        SectionRole.conclusion,
        re.compile(
            r"^(conclusions?|concluding remarks?|conclusion|summary|final remarks|closing remarks|discussions?"
            r"|general discussion|outlook)\b|\band conclusions?$|^limitations and conclusions?"
        ),
    ),
    (
        SectionRole.experiments,
        re.compile(
            r"^(experiments?|experimental (results|setup|evaluation|study|studies|settings?)|evaluation"
            r"|empirical (evaluation|results|study)|results( and (discussion|analysis))?|experiments and results"
            r"|evaluation and results|main results|benchmarks?|ablations?( stud(y|ies))?|analysis)\b"
        ),
    ),
    (
        SectionRole.method,
        re.compile(
            r"^(methods?|methodology|approach|our approach|proposed (method|approach|model|framework)|model"
            r"|model architecture|architecture|framework|the model|our method|method overview|technical approach)\b"
        ),
    ),
]

# Heading words strong enough to accept an unnumbered heading by text alone.
ANCHOR_WORDS = re.compile(
    r"^(abstract|introduction|related work|background|conclusions?|references|bibliography|acknowledge?ments?"
    r"|appendix|discussion|experiments|methods?)\b",
    re.I,
)

ROMAN = re.compile(r"^(?=[IVXL])(L?X{0,3})(IX|IV|V?I{0,3})$")
# "1", "1.", "1.2", "1.2.3." / "IV." / "A", "A.", "A.1" followed by the heading text
NUMBERED = re.compile(
    r"^(?P<num>(?:\d{1,2}(?:\.\d{1,2}){0,3}|[IVXL]{1,6}|[A-Z](?:\.\d{1,2}){0,3}))(?P<dot>\.?)\s+(?P<text>\S.*)$"
)


def role_of(heading: str) -> SectionRole | None:
    h = re.sub(r"[^a-z ,]", " ", heading.lower().replace("&", " and "))
    h = re.sub(r"\s+", " ", h).strip(" ,")
    for role, pat in _ROLE_PATTERNS:
        if pat.search(h):
            return role
    return None


def roman_value(s: str) -> int | None:
    if not s or not ROMAN.match(s):
        return None
    vals = {"I": 1, "V": 5, "X": 10, "L": 50}
    total = 0
    for i, ch in enumerate(s):
        v = vals[ch]
        total += -v if i + 1 < len(s) and vals[s[i + 1]] > v else v
    return total


# ---- roles of a whole paper: inheritance and evidence --------------------------------------------------------

# Parts that start a new top-level part of the paper even when printed as a subsection (a "B.1 Appendix" or a
# references list set as a subsection): only these override the parent's role. Everything else under a heading
# is part of that heading's section: "1.2 Summary of Evaluation Results" inside the Introduction is introduction.
TOP_LEVEL_PARTS: frozenset[SectionRole] = frozenset(
    {SectionRole.references, SectionRole.acknowledgements, SectionRole.appendix}
)

# Headings that name related work outright; other related-work headings ("Background", "State of the art",
# "Technical background") are only related work when the section reads like one (see `reads_like_related_work`).
_EXPLICIT_RELATED = re.compile(
    r"related (work|works|literature|research|studies)|prior work|previous work|literature (review|survey)"
    r"|review of (the )?literature"
)

# Evidence rule for Background-like headings: at least this many citation markers per 100 words and this many
# distinct cited references. Measured on the demo corpus: real related-work sections cite 2.1–9 per 100 words
# (median ~4), method/definition "Background" sections 0–0.8 (notes/rounds.md).
RELATED_MIN_CITES_PER_100_WORDS = 1.5
RELATED_MIN_DISTINCT_REFS = 3


def is_explicit_related(heading: str) -> bool:
    h = re.sub(r"[^a-z ]", " ", heading.lower())
    return bool(_EXPLICIT_RELATED.search(" ".join(h.split())))


def reads_like_related_work(words: int, markers: int, distinct_refs: int) -> bool:
    """Does a section with this many words, citation markers and distinct cited references read like a survey
    of prior work? (A "Background" that defines notation cites little.)"""
    if words <= 0:
        return False
    return markers * 100 / words >= RELATED_MIN_CITES_PER_100_WORDS and distinct_refs >= RELATED_MIN_DISTINCT_REFS


def inherit_roles(sections: list[Section]) -> int:
    """Subsections stay in their parent's role unless they start a new top-level part (`TOP_LEVEL_PARTS`).
    Returns how many roles changed. In place."""
    changed = 0
    stack: list[Section] = []
    for s in sections:
        while stack and stack[-1].level >= s.level:
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None and parent.role is not None and s.role not in TOP_LEVEL_PARTS and s.role != parent.role:
            s.role = parent.role
            changed += 1
        stack.append(s)
    return changed


def assign_roles(paper: Paper) -> tuple[Paper, Counter[str]]:
    """A copy of the paper with roles by inheritance and evidence (the rules above), and what changed."""
    notes: Counter[str] = Counter()
    secs = [s.model_copy() for s in paper.sections]
    markers: Counter[int] = Counter()
    refs: dict[int, set[int]] = {}
    for c in paper.citations:
        n = max(1, len(c.reference_indices))
        markers[c.section_index] += n
        refs.setdefault(c.section_index, set()).update(c.reference_indices)
    # evidence first, on the section's own heading (a weak related-work heading that does not read like one)
    for i, s in enumerate(secs):
        if s.role == SectionRole.related_work and not is_explicit_related(s.heading):
            # a section and its subsections are judged together
            j = i + 1
            while j < len(secs) and secs[j].level > s.level:
                j += 1
            words = sum(len(x.text.split()) for x in secs[i:j])
            m = sum(markers[k] for k in range(i, j))
            d = len(set().union(*(refs.get(k, set()) for k in range(i, j))))
            if not reads_like_related_work(words, m, d):
                for x in secs[i:j]:
                    if x.role == SectionRole.related_work and not is_explicit_related(x.heading):
                        x.role = None
                notes["background without citation density: not related work"] += 1
    changed = inherit_roles(secs)
    if changed:
        notes["subsection roles inherited from their parent"] += changed
    if not notes:
        return paper, notes
    return paper.model_copy(update={"sections": secs}), notes
