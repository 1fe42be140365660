"""Reading-ordered lines → title, abstract, headings and section texts.

Headings are found from style, not position: a candidate line starts a block (or changes style), is short,
and stands out from body text (larger, bold or capitals). Numbered candidates are accepted only when their
number continues the numbering seen so far (1 → 1.1 → 1.2 → 2, I → II, A → A.1), which filters out bold
table rows and list items. Unnumbered candidates are accepted when they name a known section (Introduction,
References, ...) or share the style of an accepted heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from academiceval.papers.layout import Layout, Line
from academiceval.papers.roles import ANCHOR_WORDS, NUMBERED, role_of, roman_value

_ABSTRACT_START = re.compile(r"^a\s?b\s?s\s?t\s?r\s?a\s?c\s?t\b\s*[:.—–\-]?\s*", re.I)
_SENTENCE_END = re.compile(r"[.!?:]['\")\]]?$")
_TOC_ENTRY = re.compile(r"(?:\s|\.)\d{1,3}$")


@dataclass(slots=True)
class Heading:
    line: int  # index into Layout.lines
    text: str
    number: str | None
    level: int
    kind: str  # "arabic", "roman", "letter", "none"
    last: int = -1  # index of the heading's last line (wrapped headings span two or three lines)


def _caps(text: str) -> bool:
    """Set in capitals (at least 4 letters, 90% upper case); cheap rejection first, most lines are prose."""
    if sum(1 for c in text[:12] if c.islower()) > 1:
        return False
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 4 and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


def _style(ln: Line) -> tuple[float, bool, bool]:
    return (round(ln.size * 2) / 2, ln.bold, _caps(ln.text))


def _stands_out(ln: Line, body: float) -> bool:
    _size, bold, caps = _style(ln)
    return ln.size >= body + 0.7 or bold or (caps and ln.size >= body - 2.2)


def _split_number(text: str) -> tuple[str | None, str]:
    m = NUMBERED.match(text)
    if not m:
        return None, text
    return m.group("num"), m.group("text").strip()


def _parts(num: str) -> tuple[str, list[int]] | None:
    head, *rest = num.split(".")
    try:
        tail = [int(x) for x in rest if x]
    except ValueError:
        return None
    if head.isdigit():
        return "arabic", [int(head), *tail]
    rv = roman_value(head)
    if rv is not None and not tail and len(head) > 0 and head != "A":
        return "roman", [rv]
    if len(head) == 1 and head.isalpha():
        return "letter", [ord(head) - 64, *tail]
    return None


def _successor(path: list[int], new: list[int]) -> bool:
    m = len(new)
    if m - 1 > len(path):
        return False
    if new[: m - 1] != path[: m - 1]:
        return False
    prev = path[m - 1] if len(path) >= m else 0
    return prev < new[-1] <= prev + 2


def _candidate(lines: list[Line], i: int, body: float) -> bool:
    ln = lines[i]
    t = ln.text
    if not (2 <= len(t) <= 120) or len(t.split()) > 16 or t[-1] in ",;-–(":
        return False
    if not (t[0].isupper() or t[0].isdigit()):
        return False
    prev = lines[i - 1] if i else None
    if prev is not None and prev.block == ln.block and _style(prev)[:2] == _style(ln)[:2]:
        return False  # mid-paragraph line of the same style
    if _TOC_ENTRY.search(t):  # a table-of-contents entry ("3 Method ..... 12") next to other entries
        near = [lines[k].text for k in (i - 1, i + 1) if 0 <= k < len(lines)]
        if any(_TOC_ENTRY.search(x) for x in near) or "..." in t or ". ." in t:
            return False
    return _stands_out(ln, body) or bool(ANCHOR_WORDS.match(t)) or bool(NUMBERED.match(t))


def _plain_heading(ln: Line, rest: str) -> bool:
    """A numbered heading set in body type (AMS/SIAM styles): a one-line block, short, no final period and
    no trailing page number (which would make it a table-of-contents entry)."""
    return (
        ln.first_in_block
        and ln.last_in_block
        and len(rest.split()) <= 8
        and rest[-1:] not in ".,;:"
        and ". " not in rest
        and not re.search(r"\s\d+$", rest)
    )


def find_headings(layout: Layout) -> list[Heading]:
    """Accepted section headings in document order."""
    lines = layout.lines
    body = layout.body_size
    paths: dict[str, list[int]] = {"arabic": [], "roman": [], "letter": []}
    accepted: list[Heading] = []
    styles_by_level: dict[tuple[float, bool, bool], int] = {}
    pending_unnumbered: list[tuple[int, str]] = []
    roman_doc = False
    after_refs = False
    # nothing before the "Abstract" marker is a section (addresses like "1 University Station" are not)
    abs_idx = next((i for i, ln in enumerate(lines[:600]) if ln.page <= 1 and _ABSTRACT_START.match(ln.text)), -1)
    refs_line = -1
    for i, ln in enumerate(lines):
        if i <= abs_idx or not _candidate(lines, i, body):
            continue
        text = ln.text.strip()
        num, rest = _split_number(text)
        lone_number = False
        # a lone number line followed by the heading text on the next line
        if num is None and re.fullmatch(r"\d{1,2}(\.\d{1,2})*\.?|[IVX]{1,5}\.", text) and i + 1 < len(lines):
            nxt = lines[i + 1]
            if nxt.page == ln.page and abs(nxt.y0 - ln.y0) < 30 and _stands_out(nxt, body):
                num, rest = text.rstrip("."), nxt.text.strip()
                lone_number = True
        if num is not None:
            parsed = _parts(num)
            words = re.findall(r"[A-Za-z]{2,}", rest)
            if parsed is None or not words or not (rest[0].isupper() or rest[0].isdigit()):
                continue
            kind, parts = parsed
            if kind == "roman" and not (text.split()[0].endswith(".") or _style(ln)[2]):
                continue
            # "A Simple Baseline" is a heading text, not appendix A, unless we are in the appendix
            in_appendix = any(h.text.lower().startswith(("appendix", "supplementary")) for h in accepted)
            if kind == "letter" and not (
                after_refs or roman_doc or role_of(rest) is not None or paths["letter"] or in_appendix
            ):
                num, rest = None, text
            if num is not None:
                if kind == "letter" and roman_doc and not after_refs:
                    level = 1 + len(parts)  # IEEE: "A." is a subsection under "II."
                    path = paths["letter"]
                    if len(parts) == 1 and path and path[0] >= parts[0]:
                        paths["letter"] = []
                else:
                    level = len(parts)
                if not _successor(paths[kind], parts) and not (kind == "letter" and parts == [1]):
                    continue
                if ln.size < body - (2.2 if _style(ln)[2] else 1.5):
                    continue
                # body-type headings: AMS "1. Introduction", IEEE "A. Subsection" (never inside the references)
                plain_ok = not after_refs and (kind == "arabic" or (kind == "letter" and roman_doc))
                if not _stands_out(ln, body) and not (plain_ok and _plain_heading(ln, rest)):
                    continue
                paths[kind] = parts
                if kind == "roman":
                    roman_doc = True
                    paths["letter"] = []
                if kind == "arabic" and len(parts) == 1:
                    paths["letter"] = paths["letter"] if after_refs else []
                styles_by_level.setdefault(_style(ln), level)
                accepted.append(Heading(i, rest, num, level, kind, i + 1 if lone_number else i))
                if role_of(rest) is not None and role_of(rest).value == "references":
                    after_refs, refs_line = True, i
                continue
        role = role_of(text)
        if (
            (role is not None or ANCHOR_WORDS.match(text))
            and text[-1] not in ".:"
            and len(text.split()) <= 8
            and not re.search(r"[—–:.;]\s", text)
            and (role is None or role.value not in ("method", "experiments") or len(text.split()) <= 3)
        ):
            if role is None and not _stands_out(ln, body):
                continue
            if not _stands_out(ln, body) and len(text.split()) > 3:
                continue
            level = styles_by_level.get(_style(ln), 1)
            styles_by_level.setdefault(_style(ln), 1)
            accepted.append(Heading(i, text, None, level, "none"))
            if role is not None and role.value == "references":
                after_refs, refs_line = True, i
            continue
        if _stands_out(ln, body):
            pending_unnumbered.append((i, text))
    numbered = sum(1 for h in accepted if h.kind in ("arabic", "roman"))
    first_anchor = accepted[0].line if accepted else len(lines)
    # second chance for unnumbered headings that share an accepted heading's style (unnumbered papers only:
    # in numbered papers a bold unnumbered line is a table row or a paragraph title)
    pending_unnumbered = [(i, t) for i, t in pending_unnumbered if i > first_anchor]
    if numbered >= 3:  # numbered paper: only unnumbered appendix headings after the references
        weak = ("method", "experiments")
        accepted = [
            h
            for h in accepted
            if h.kind != "none"
            or (role_of(h.text) is not None and role_of(h.text).value not in weak)
            or (refs_line >= 0 and h.line > refs_line)
        ]
        top = {st for st, lvl in styles_by_level.items() if lvl == 1}
        styles_by_level = {st: 1 for st in top}
        pending_unnumbered = [(i, t) for i, t in pending_unnumbered if refs_line >= 0 and i > refs_line]
    if pending_unnumbered and styles_by_level:
        by_line = {h.line: h for h in accepted}
        for i, text in pending_unnumbered:
            st = _style(lines[i])
            if st in styles_by_level and st[0] >= body and (st[1] or st[2] or st[0] >= body + 0.7):
                if text[-1] in ".:" or sum(c.isdigit() for c in text) > len(text) / 3:
                    continue
                by_line[i] = Heading(i, text, None, styles_by_level[st], "none")
        accepted = [by_line[k] for k in sorted(by_line)]
    taken = {h.line for h in accepted}
    for h in accepted:
        h.last = max(h.last, h.line)
        st = _style(lines[h.line])
        j = h.last + 1
        while (
            j < len(lines)
            and j - h.line <= 2
            and j not in taken
            and lines[j].block == lines[h.line].block
            and _style(lines[j]) == st
            and h.text[-1:] not in ".:?!"
            and len(lines[j].text) < 90
        ):
            h.text = join_lines([h.text, lines[j].text])
            h.last = j
            j += 1
    return [h for h in accepted if h.text.strip().lower() not in {"abstract"}]


def join_lines(parts: list[str]) -> str:
    """Join wrapped lines, undoing end-of-line hyphenation ("hyphen-" + "ation" → "hyphenation")."""
    out = ""
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if not out:
            out = p
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha() and p[:1].islower():
            word = out.rsplit(" ", 1)[-1]
            out = out + p if word.count("-") > 1 else out[:-1] + p
        else:
            out = f"{out} {p}"
    return out


def text_of(lines: list[Line]) -> str:
    """Paragraph text: lines of a block joined, blocks separated by blank lines unless a sentence runs on."""
    paras: list[str] = []
    cur: list[str] = []
    for k, ln in enumerate(lines):
        if k and ln.block != lines[k - 1].block and cur:
            joined = join_lines(cur)
            if paras and not _SENTENCE_END.search(paras[-1]) and joined[:1].islower():
                paras[-1] = join_lines([paras[-1], joined])
            else:
                paras.append(joined)
            cur = []
        cur.append(ln.text)
    if cur:
        joined = join_lines(cur)
        if paras and not _SENTENCE_END.search(paras[-1]) and joined[:1].islower():
            paras[-1] = join_lines([paras[-1], joined])
        else:
            paras.append(joined)
    return "\n\n".join(paras)
