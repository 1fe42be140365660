"""Item defects of a citation cloze, found from what the prompt shows, and the span repairs that avoid them.

A defective item either has two right answers or gives its answer away without being read:

- `duplicate candidates`: two candidates are one work (the same stored paper, the same normalised title, or the
  same text) — two reference entries linked to one paper make two correct options;
- `grouped mask`: the mask sits in a group of citations (`(A, 2020; [MASK]; B, 2021)`): SCALAR masks individual
  citations only, and a group's other members hint at the topic;
- `name fragment`: part of the citation is left next to the mask (`Doshi-[MASK]`, `Riviè[MASK]`, `et al. ([MASK])`,
  `[MASK]a`): the surname or year narrows the choice;
- `empty candidate`: an option with no text;
- `shows own title`: a "body only" option (no title or abstract shown) whose text names its own title;
and per level: `over the per-paper cap` (more than `PAPER_CAP` questions from one paper) and `citation in
several levels` (one masked citation asked twice in a round).

The builder avoids them (`whole_citation`, `in_group`, the pool's deduplication, the caps); `academiceval audit`
counts them on any round (`round_defects`), SCALAR's published questions included.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

from academiceval.families.cloze.models import ClozeItem
from academiceval.papers.links import normalise_title

PAPER_CAP = 5  # questions per paper and level (SCALAR's paper says five; its hard set holds up to six)
GROUP_WINDOW = 80  # characters searched each side of a citation for other members of its group
MIN_TITLE_CHARS = 12  # normalised titles shorter than this ("Adam") are not matched inside texts
ITEM_KINDS = ("duplicate candidates", "grouped mask", "name fragment", "empty candidate", "shows own title")
LEVEL_KINDS = ("over the per-paper cap", "citation in several levels")
KINDS = (*ITEM_KINDS, *LEVEL_KINDS)

_NAME_CHAR = re.compile(r"[^\W\d_]|[-'’]")  # a letter (any script), hyphen or apostrophe: inside a surname
_YEAR = re.compile(r"(?:19|20)\d\d[a-z]?\b")
_AUTHORISH = re.compile(r"\bet al\b|[A-Z][^\W\d_]+ (?:and|&) [A-Z]")
_NUMBERED = re.compile(r"^\s*\d+(?:\s*[-–]\s*\d+)?\s*$")
_CLOSE = {"(": ")", "[": "]"}
_TAIL_BEFORE = re.compile(r"\bet al\.?[,\s]*[(\[]?\s*$")
_TAIL_AFTER = re.compile(r"^[a-z]\b|^\s*[(\[]\s*(?:19|20)\d\d[a-z]?\s*[)\]]")


def whole_citation(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to the whole printed citation: over the rest of a surname it starts inside (`Doshi-` +
    `Velez & Kim, 2017`, `Riviè` + `re et al.`), a letter glued to its year (`2020` + `a`) and the closing bracket
    of a bracket it opened (`Chen et al. (2024` + `)`). Numeric markers (`[12]`, `12`) are left as they are."""
    if start >= end or not text[start:end][:1].isalpha():
        return start, end
    s, e = start, end
    while s > 0 and _NAME_CHAR.match(text[s - 1]):
        s -= 1
    while e < len(text) and text[e - 1].isalnum() and text[e].isalnum():
        e += 1
    span = text[s:e]
    for opener, closer in _CLOSE.items():
        if span.count(opener) > span.count(closer) and text[e : e + 1] == closer:
            e += 1
    return s, e


def _enclosing(text: str, start: int, end: int) -> tuple[str, str]:
    """The text from the bracket the citation sits in up to it, and from it to that bracket's end (each at most
    `GROUP_WINDOW` characters; empty when the citation is not inside a bracket)."""
    head = text[max(0, start - GROUP_WINDOW) : start]
    depth, cut = 0, -1
    for i in range(len(head) - 1, -1, -1):
        ch = head[i]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                cut = i
                break
            depth -= 1
    if cut < 0:
        return "", ""
    opener = head[cut]
    tail = text[end : end + GROUP_WINDOW]
    stop = tail.find(_CLOSE[opener])
    return head[cut + 1 :], tail[: stop if stop >= 0 else len(tail)]


def in_group(text: str, start: int, end: int) -> bool:
    """Whether the citation shares its bracket with another citation: `(A, 2020; X; B, 2021)`, `[3, X, 7]`,
    `(X; 2024)` — another year, "et al." or reference number inside the same parentheses or brackets, separated
    from it by `;` or `,`. A name before it (`(GLU; X)`, `(Gemma X)`) is not a citation."""
    before, after = _enclosing(text, start, end)
    if not before and not after:
        return False
    numeric = bool(_NUMBERED.match(text[start:end]))
    before = re.sub(r"(?:[^\W\d_]|[-'’])+$", "", before)  # a surname the span starts inside (`; Doshi-`)
    for side, sep_at_edge in ((before, before.rstrip()[-1:]), (after, after.lstrip()[:1])):
        if not side.strip() or sep_at_edge not in (";", ","):
            continue
        if _YEAR.search(side) or _AUTHORISH.search(side):
            return True
        if numeric and re.search(r"\d", side):
            return True
    return False


def name_fragment(paper: str, mask: str, citation: str = "") -> str | None:
    """What is left of an author-year citation next to the mask (None when nothing is). A numeric marker glued
    to a word (`method[12]`) leaves nothing of itself."""
    at = paper.find(mask)
    if at < 0:
        return None
    before, after = paper[max(0, at - 40) : at], paper[at + len(mask) : at + len(mask) + 20]
    author_year = not citation or citation.strip()[:1].isalpha()
    if author_year and before and _NAME_CHAR.match(before[-1]):
        return "surname before the mask: " + (before.split()[-1] if before.split() else before[-1])
    if author_year and after and after[0].isalnum():
        return "text glued after the mask: " + (after.split()[0] if after.split() else after[0])
    if _TAIL_BEFORE.search(before):
        return "authors before the mask: " + before.strip()[-20:]
    if _TAIL_AFTER.search(after):
        return "year after the mask: " + after.strip()[:12]
    return None


def _norm_text(text: str) -> str:
    return " ".join(text.split())


def shows_own_title(title: str, text: str) -> bool:
    """A text that names `title` (normalised, at least `MIN_TITLE_CHARS` long) anywhere inside it."""
    t = normalise_title(title)
    return len(t) >= MIN_TITLE_CHARS and f" {t} " in f" {normalise_title(text)} "


def item_defects(item: ClozeItem) -> list[str]:
    """The defects of one item (kinds of `ITEM_KINDS`, each once), from what its prompt shows."""
    out: list[str] = []
    seen_paper: set[str] = set()
    seen_title: set[str] = set()
    seen_text: set[str] = set()
    dup = False
    for c in item.candidates:
        keys = (c.paper_id, normalise_title(c.title), _norm_text(c.text))
        if (
            (keys[0] and keys[0] in seen_paper)
            or (len(keys[1]) >= MIN_TITLE_CHARS and keys[1] in seen_title)
            or (keys[2] and keys[2] in seen_text)
        ):
            dup = True
        seen_paper.add(keys[0])
        seen_title.add(keys[1])
        seen_text.add(keys[2])
    if dup:
        out.append("duplicate candidates")
    at = item.paper.find(item.mask)
    if at >= 0 and in_group(item.paper, at, at + len(item.mask)):
        out.append("grouped mask")
    if name_fragment(item.paper, item.mask, item.citation_text) is not None:
        out.append("name fragment")
    if any(not c.text.strip() for c in item.candidates):
        out.append("empty candidate")
    body_only = [c for c in item.candidates if c.text.strip() and "<Abstract>" not in c.text]
    if any(shows_own_title(c.title, c.text) for c in body_only):
        out.append("shows own title")
    return out


def citation_key(item: ClozeItem) -> tuple[str, str, str]:
    """One masked citation: the question paper, the masked text and the words around it (built and imported
    items alike: imported ones carry no reliable span)."""
    at = item.paper.find(item.mask)
    around = " ".join(
        (item.paper[max(0, at - 120) : at] + " " + item.paper[at + len(item.mask) : at + len(item.mask) + 120]).split()
    )
    return (item.arxiv_id or item.paper_id, item.citation_text, around)


def round_defects(
    items: Iterable[ClozeItem], level_of: Callable[[ClozeItem], str] = lambda it: it.preset
) -> dict[str, dict[str, object]]:
    """Per level: items, defect counts by kind (all `KINDS`, zeros included) and up to 3 examples per kind."""
    by_level: dict[str, list[ClozeItem]] = defaultdict(list)
    for it in items:
        by_level[level_of(it)].append(it)
    levels_of_citation: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for lv, its in by_level.items():
        for it in its:
            levels_of_citation[citation_key(it)].add(lv)
    out: dict[str, dict[str, object]] = {}
    for lv, its in sorted(by_level.items()):
        counts: Counter[str] = Counter({k: 0 for k in KINDS})
        examples: dict[str, list[str]] = defaultdict(list)
        for it in its:
            for kind in item_defects(it):
                counts[kind] += 1
                if len(examples[kind]) < 3:
                    examples[kind].append(it.sample_id)
            if len(levels_of_citation[citation_key(it)]) > 1:
                counts["citation in several levels"] += 1
                if len(examples["citation in several levels"]) < 3:
                    examples["citation in several levels"].append(it.sample_id)
        per_paper = Counter(it.arxiv_id or it.paper_id for it in its)
        over = {p: n for p, n in per_paper.items() if n > PAPER_CAP}
        counts["over the per-paper cap"] = sum(n - PAPER_CAP for n in over.values())
        examples["over the per-paper cap"] = [f"{p}: {n}" for p, n in sorted(over.items())][:3]
        out[lv] = {"items": len(its), "defects": dict(counts), "examples": {k: v for k, v in examples.items() if v}}
    return out


def defect_rows(table: dict[str, dict[str, object]], kinds: Sequence[str] = KINDS) -> list[str]:
    """One line per level: items and each defect kind's count."""
    lines = [f"{'level':8s}{'items':>7s}" + "".join(f"{k:>28s}" for k in kinds)]
    for lv, row in table.items():
        d = row["defects"]
        lines.append(f"{lv:8s}{row['items']:>7}" + "".join(f"{d.get(k, 0):>28}" for k in kinds))
    return lines
