"""ar5iv markdown (SCALAR's paper objects and the cited papers inside them): markup that is not the authors' prose.

Each kind is a pattern (the detector the audit counts) and a repair (edits, so citation spans move with the text):

* `xref_trail`: a cross-reference rendered with its link title, `[4]Table 4 ‣ 4.3 Hyperparameters ‣ 4 Experiments ‣
  PAPER TITLE")` → "4". The trail repeats section names and the paper's own title (the title task's leak).
* `image_markup`: `![Refer to caption]`, `![[Uncaptioned image]]` → removed.
* `math_duplicate`: formulas written three times (`papers.debris.mathml`) → `$LaTeX$`.
* `escaped_markup`: markdown escapes `\\[`, `\\_`, `\\-`, a backslash before a line break → the character.
* `heading_markup`: `### 4.1 Benchmarking` → the heading line without `#`.
* `list_markup`: ar5iv's doubled list labels (`- •`, `1. 1.` on a line of their own) → one label before the item.
* `table_markup`: markdown table rows (`| a | b |`, `| --- |`) → removed; a display equation set as a row
  (`|  | x = y |  | (3) |`) keeps its formula.
* `code_listing`: fenced code blocks → removed.
* `footnote_inline`: a footnote mark glued to a word three times, then the footnote's text
  (`scenario222 [https://moralmachine.net/]`) → removed.
* `link_markup`: link text kept without its brackets: `( [2019]))` → `(2019)`, `[https://x]` → `https://x`.
* `emphasis_markup`: `_progressive_` → `progressive`.
"""

from __future__ import annotations

import re

from academiceval.papers.debris.edits import Edit, sub

TRAIL = re.compile(
    r"\[(?P<anchor>[^\[\]\n]{0,80})\](?:\(https?://[^\s)\"]*\s+\")?"
    r"(?P<attr>(?:[^\n\"\\\[\]]|\\.){0,400}?‣(?:[^\n\"\\]|\\.){0,600}?)\"\)"
)
TRAIL_ANY = re.compile(r"‣")
IMAGE = re.compile(r"!\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?:\([^)\s]*\))?")
ESCAPE = re.compile(r"\\([\\\[\]()_*#.\-!`+{}|<>~&%$^])|\\(?=\n)")
ESCAPE_ANY = re.compile(r"\\[\[\]_*#\-!`]|\\\n")
HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+(?=\S)")
LIST_LABEL = re.compile(
    r"(?m)^[ \t]*(?:[-*+][ \t]+(?P<bullet>[•◦▪‣∙●○■□–-])|(?P<num>\(?\w{1,4}[.)])[ \t]+(?P=num))[ \t]*\n+"
)
TABLE_ROW = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*$\n?")
CODE = re.compile(r"(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$\n?")
FOOTNOTE = re.compile(r"(?<=[A-Za-z.,;:)\]’”])(?P<n>[1-9]\d?)(?P=n)(?P=n)(?=[A-Z\[ ])")
LINK_YEAR = re.compile(r"\[(?P<t>(?:19|20)\d\d[a-z]?|\d{1,3})\](?P<close>\))?")
OPEN_LINK = re.compile(r"[(\[] (?=\[)")
URL_LINK = re.compile(r"\[(?P<u>https?://[^\]\s]+)\](?:\((?P<target>[^)\s]*)\))?")
EMPHASIS = re.compile(r"(?<![\w\\$*])[_*](?P<t>[^\s_*$](?:[^_*$\n]{0,200}?[^\s_*$\\])?)[_*](?![\w$*])")
CAPTION_GLUED = re.compile(r"(?<=[.!?)\]])(?=(?:Figure|Table|Algorithm|Listing)\s+\d+[a-z]?\s*:)")


_ANCHOR_WORD = re.compile(
    r"^(Table|Figure|Fig\.|Section|Sec\.|Eq\.|Equation|Appendix|Algorithm|Theorem|Lemma|Proposition|Corollary|"
    r"Definition|Remark|Example|Assumption|Step|Line)(?=[\dA-Z])"
)


def trail_edits(text: str) -> list[Edit]:
    """`[Table1]In 1 Introduction ‣ TITLE")` → "Table 1" (ar5iv drops the space inside its anchors)."""
    return sub(TRAIL, text, lambda m: _ANCHOR_WORD.sub(r"\1 ", m.group("anchor").strip()))


def count_trails(text: str) -> int:
    """Complete trails, plus every `‣` outside one (a trail cut by the section split or without its anchor)."""
    covered = [(m.start(), m.end()) for m in TRAIL.finditer(text)]
    orphans = sum(1 for m in TRAIL_ANY.finditer(text) if not any(a <= m.start() < b for a, b in covered))
    return len(covered) + orphans


def image_edits(text: str) -> list[Edit]:
    return sub(IMAGE, text, lambda m: "")


def escape_edits(text: str) -> list[Edit]:
    return sub(ESCAPE, text, lambda m: m.group(1) or "")


def heading_edits(text: str) -> list[Edit]:
    return sub(HEADING, text, lambda m: "")


def list_edits(text: str) -> list[Edit]:
    def one(m: re.Match[str]) -> str:
        return "• " if m.group("bullet") else f"{m.group('num')} "

    return sub(LIST_LABEL, text, one)


def _equation_row(row: str) -> str | None:
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    full = [c for c in cells if c]
    if 1 <= len(full) <= 2 and (len(full) == 1 or re.fullmatch(r"\(\w{1,6}\)", full[-1])):
        return " ".join(full)
    return None


def table_edits(text: str) -> list[Edit]:
    def one(m: re.Match[str]) -> str:
        eq = _equation_row(m.group(0))
        return f"{eq}\n" if eq is not None and not re.fullmatch(r"[-: ]+", eq) else ""

    return sub(TABLE_ROW, text, one)


def code_edits(text: str) -> list[Edit]:
    return sub(CODE, text, lambda m: "")


def footnote_edits(text: str) -> list[Edit]:
    out = []
    for m in FOOTNOTE.finditer(text):
        rest = text[m.end() : m.end() + 400]
        u = re.match(r" ?\[https?://[^\]]*\](?:\([^)\s]*\))?", rest)
        if u:
            out.append(Edit(m.start(), m.end() + u.end(), ""))
            continue
        end = re.search(r"[.!?](?=\s|$)", rest)
        out.append(Edit(m.start(), m.end() + (end.end() if end and rest[:1].isupper() else 0), ""))
    return out


def link_edits(text: str) -> list[Edit]:
    """Citation links lose their brackets; the `)` left by a link target goes, the one closing the citation
    stays. Decided by the parenthesis depth of the paragraph read so far: "(Vaswani et al., [2017])" keeps its
    `)`, "(Awad et al., [2018], [2020]))" and "SocialIQA ( [2019]))" drop one."""
    edits = sub(URL_LINK, text, lambda m: m.group("u"))
    taken = [(e.start, e.end) for e in edits]
    depth, pos = 0, 0
    for m in LINK_YEAR.finditer(text):
        depth = _depth(text, pos, m.start(), depth)
        pos = m.end()
        if any(a <= m.start() < b for a, b in taken):
            continue
        t, close = m.group("t"), m.group("close") or ""
        before, after = text[max(0, m.start() - 2) : m.start()], text[m.end() : m.end() + 1]
        inner = m.start() + len(t) + 2  # "[t]": its own edit, so a citation span around it keeps its identity
        if len(t) <= 3:  # numeric "\\[ [28]), [2])\\]": the ")" is what is left of the link target
            if before.endswith(("[", "[ ", ", ", ",", "; ", "–", "-")):
                edits.append(Edit(m.start(), inner, t))
                if close:
                    edits.append(Edit(inner, m.end(), ""))
            continue
        keep = bool(close) and depth > 0 and not (after == ")" and depth == 1)
        if keep:
            depth -= 1
        edits.append(Edit(m.start(), inner, t))
        if close and not keep:
            edits.append(Edit(inner, m.end(), ""))
    edits += sub(OPEN_LINK, text, lambda m: m.group(0)[0])
    return edits


def _depth(text: str, a: int, b: int, depth: int) -> int:
    seg = text[a:b]
    cut = seg.rfind("\n\n")
    if cut >= 0:
        depth, seg = 0, seg[cut:]
    return max(0, depth + seg.count("(") - seg.count(")"))


def emphasis_edits(text: str) -> list[Edit]:
    """The two markers go as two edits, so a citation inside emphasised text keeps its span."""
    out = []
    for m in EMPHASIS.finditer(text):
        out += [Edit(m.start(), m.start() + 1, ""), Edit(m.end() - 1, m.end(), "")]
    return out


def caption_split_edits(text: str) -> list[Edit]:
    """A caption glued to the sentence before it (left by a removed image) starts its own paragraph."""
    return [Edit(m.start(), m.start(), "\n\n") for m in CAPTION_GLUED.finditer(text)]


def count_links(text: str) -> int:
    """ar5iv's link residue only: "(Vaswani et al., [2017])", "( [2019]))", "[https://x]". A bracketed year after
    a name without a comma ("Johnson [2002]") is a real citation style of PDFs and is not counted."""
    return len(URL_LINK.findall(text)) + len(re.findall(r"(?<=[,;] )\[(?:19|20)\d\d[a-z]?\]|\( \[", text))


def count_escapes(text: str) -> int:
    """Markdown escapes outside math (`\\\\-t` inside `$…$` is a LaTeX row break, not an escape)."""
    return sum(len(ESCAPE_ANY.findall(seg)) for seg in re.split(r"\$\$.*?\$\$|\$[^$\n]*\$", text, flags=re.S))


def count_lists(text: str) -> int:
    return len(LIST_LABEL.findall(text))


def count_footnotes(text: str) -> int:
    return len(FOOTNOTE.findall(text))
