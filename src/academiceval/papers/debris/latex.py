"""LaTeX left in text that should be prose: unarXive paragraphs, arXiv metadata titles and abstracts, markdown.

* `latex_markup`: a text-formatting or reference command outside math (`\\emph{…}`, `\\textbf{…}`, `\\cite{…}`,
  `\\ref{…}`, `\\url{…}`, `\\footnote{…}`, `\\\\`), or a unarXive marker that was not rendered
  (`{{cite:…}}`, `{{formula:…}}`). Math between `$…$` is the authors' notation and is not debris.

The repair keeps the argument of formatting commands (`\\emph{x}` → x), drops reference commands whose target is
a label (`\\ref{sec:x}`, `\\label{…}`), and leaves everything else for the audit to count.
"""

from __future__ import annotations

import re

from academiceval.papers.debris.edits import Edit, sub

_FORMAT = r"emph|textbf|textit|textsc|texttt|textrm|textsf|textnormal|underline|mbox|hbox|text|url|uline|mathrm"
FORMAT_CMD = re.compile(rf"\\(?:{_FORMAT})\s*\{{(?P<arg>[^{{}}]*)\}}")
LABEL_CMD = re.compile(r"\\(?P<cmd>label|index|ref|eqref|autoref|cref|Cref|cite[pt]?)\*?\s*\{[^{}]*\}")
ANY_CMD = re.compile(
    rf"\\(?:{_FORMAT}|label|ref|eqref|autoref|cref|Cref|cite[pt]?|footnote|index|section|subsection|item|begin|end|"
    r"newline|noindent|vspace|hspace|centering|small|large|footnotesize)\b|\{\{(?:cite|formula|figure|table|ref|"
    r"footnote):[^}]*\}\}|(?<!\\)\\\\(?=\s)"
)
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$|\\\(.*?\\\)", re.S)


def _outside_math(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for m in MATH.finditer(text):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    return out


def count(text: str) -> int:
    return sum(len(ANY_CMD.findall(text, a, b)) for a, b in _outside_math(text))


def _label(m: re.Match[str]) -> str:
    cmd = m.group("cmd")
    return "" if cmd in ("label", "index") else "[cite]" if cmd.startswith("cite") else "[ref]"


def edits(text: str) -> list[Edit]:
    out: list[Edit] = []
    for a, b in _outside_math(text):
        seg = text[a:b]
        for e in sub(FORMAT_CMD, seg, lambda m: m.group("arg")) + sub(LABEL_CMD, seg, _label):
            out.append(Edit(e.start + a, e.end + a, e.text))
    return out


# ---- for reading, not for labels ----------------------------------------------------------------------------
# What a person reads on the report's examples page (issue 28 item 9): the label repairs above, and beyond them the
# macros a label keeps because their meaning is unknown — an author's own (`\ourmethod`), cleveref's glued labels
# (`\creffig:intro`), hyperref internals (`\cref@constructprefix page\cref@result`). Shown as the words they stand
# for; math between `$…$` stays the authors' notation. Labels are not changed by this (a label's words are scored).
INTERNAL_CMDS = re.compile(r"\\[A-Za-z]+@[A-Za-z@]*(?:\s+\w+(?=\s*\\[A-Za-z]+@))?")  # \x@y [word \x@z]
GLUED_REF = re.compile(r"\\(?:[cC]|auto|eq|name)?ref[A-Za-z]*:[\w:\-]+(?:\.[\w:\-]+)*")  # \creffig:intro
TEX_QUOTES = re.compile(r"``|''|`(?=\w)")  # ``quoted'' and `quoted' as TeX writes them
_QUOTE = {"``": "\u201c", "''": "\u201d", "`": "\u2018"}
MACRO = re.compile(r"\\(?P<name>[A-Za-z]+)\*?(?:\{\}|\{(?P<arg>[^{}]*)\})?")
_DROP = {"noindent", "centering", "newline", "small", "large", "footnotesize", "vspace", "hspace", "label", "index"}


def _macro(m: re.Match[str]) -> str:
    name, arg = m.group("name"), m.group("arg")
    if name in _DROP or (arg is None and m.string.startswith("{", m.end())):
        return ""  # a layout command, or one whose argument holds braces: its text stays, the name goes
    return arg if arg is not None else name


def reading_edits(text: str) -> list[Edit]:
    """`edits` plus the unknown macros outside math, as words: `\\ourmethod` → ourmethod, `\\emph{x}` → x,
    `\\creffig:intro` → [ref], hyperref internals dropped, TeX quotes (``x'', `x') as typographic ones."""
    out = edits(text)
    taken = [(e.start, e.end) for e in out]
    for a, b in _outside_math(text):
        seg = text[a:b]
        found = sub(INTERNAL_CMDS, seg, lambda m: "") + sub(GLUED_REF, seg, lambda m: "[ref]")
        found += sub(MACRO, seg, _macro) + sub(TEX_QUOTES, seg, lambda m: _QUOTE[m.group(0)])
        for e in sorted(found, key=lambda e: (e.start, -e.end)):
            s, t = e.start + a, e.end + a
            if any(s < y and x < t for x, y in taken):
                continue  # an earlier, more specific repair covers it
            out.append(Edit(s, t, e.text))
            taken.append((s, t))
    return out
