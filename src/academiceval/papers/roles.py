"""Heading text → canonical section role, and heading numbering patterns.

Roles are matched on the heading words, never on position, so "Background and Related Work" is related work
wherever it sits. A subsection without a role of its own inherits its parent's role (done by the parser).
"""

from __future__ import annotations

import re

from academiceval.papers.models import SectionRole

_ROLE_PATTERNS: list[tuple[SectionRole, re.Pattern[str]]] = [
    (SectionRole.references, re.compile(r"^(references?|bibliography|literature cited|works cited|citations)$")),
    (SectionRole.acknowledgements, re.compile(r"^acknowledge?ments?|^acknowledge?ment of|^funding$")),
    (
        SectionRole.appendix,
        re.compile(r"^(appendix|appendices|supplementary|supplemental|supporting information|online appendix)"),
    ),
    (
        SectionRole.introduction,
        re.compile(r"^(extended |general )?introduction\b|^intro$|^motivation$|^overview and motivation$"),
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
