"""Paper titles as the store keeps them: LaTeX rendered to text, and no ALL-CAPS case taken from a page.

A title is the label of the Title task and what people read in reports, so it is plain text: arXiv metadata
writes formulas in LaTeX (`1T-TiSe$_{2}$`, `$\\beta$-ensembles`), which become `1T-TiSe2` and `β-ensembles`
(pylatexenc renders the commands; inside math the sub- and superscript marks go, as a plain-text title would
write them). Titles read from a page (PDF-stamp records) are often set in capitals by the style
("EDUCATIONAL TIMETABLING: PROBLEMS, …"); capitals are typography, not the title's case, so such a title takes its
case from metadata of the same paper where there is one (`case_from`), else word by word from the paper's own text
("LLMs", "GPT-4" and "ImageNet" keep their forms there) and title case for the rest.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterable

from pylatexenc.latex2text import LatexNodes2Text

_MATH = re.compile(r"(?<!\\)\$([^$]*)(?<!\\)\$")
_SCRIPT = re.compile(r"[_^](?=\S)")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_SMALL = {
    "a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "nor", "of", "on", "or", "over",
    "per", "the", "to", "via", "vs", "with", "without",
}  # fmt: skip


_LATEX = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def latex_text(value: str) -> str:
    """LaTeX commands and accents rendered (`Gr\\"obner` → `Gröbner`, `\\beta` → `β`), braces gone; a value
    pylatexenc cannot read keeps its text without braces."""
    if "\\" not in value and "$" not in value and "{" not in value:
        return value
    with contextlib.suppress(Exception):  # pylatexenc is lenient, but one odd title must not stop an index
        value = _LATEX.latex_to_text(re.sub(r"(?<!\\)%", r"\\%", value))  # a bare % is text, not a comment
    return value.replace("{", "").replace("}", "")


def latex_title(title: str) -> str:
    """`WSe$_{2}$` → `WSe2`, `$\\beta$-ensembles` → `β-ensembles`, `Gr\\"obner` → `Gröbner`; other text unchanged."""
    if "$" not in title and "\\" not in title:
        return title
    unescaped = len(re.findall(r"(?<!\\)\$", title))
    if unescaped % 2:  # an unpaired $ is not math but a dollar sign: render the commands around it
        return " ".join(latex_text(re.sub(r"(?<!\\)\$", r"\\$", title)).split())
    parts: list[str] = []
    pos = 0
    for m in _MATH.finditer(title):
        parts.append(latex_text(title[pos : m.start()]) if pos < m.start() else "")
        # pad so that the text renderer keeps the spaces around the formula, then trim what it adds
        lead = " " if m.start() > 0 and title[m.start() - 1] == " " else ""
        trail = " " if m.end() < len(title) and title[m.end()] == " " else ""
        parts.append(lead + _SCRIPT.sub("", latex_text(m.group(1))).replace(" ", "") + trail)
        pos = m.end()
    parts.append(latex_text(title[pos:]) if pos < len(title) else "")
    return " ".join("".join(parts).split())


def is_all_caps(title: str) -> bool:
    letters = [c for c in title if c.isalpha()]
    return len(letters) >= 6 and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


def same_words(a: str, b: str) -> bool:
    return [w.casefold() for w in _WORD.findall(a)] == [w.casefold() for w in _WORD.findall(b)]


def recase(title: str, text: str = "") -> str:
    """An ALL-CAPS title in the case the paper's `text` writes its words, title case otherwise: a word the text
    writes with capitals inside it ("LLMs", "ImageNet", "GPT") keeps that form, a word with digits takes the text's
    most common form ("16x16") or stays as printed, small words are lower case except first and after a colon,
    other words are capitalised."""
    if not is_all_caps(title):
        return title
    forms: dict[str, Counter[str]] = {}
    for w in _WORD.findall(text):
        forms.setdefault(w.casefold(), Counter())[w] += 1
    out: list[str] = []
    start = True
    for token in re.split(r"(\s+|[-–—/:])", title):
        if not token or token.isspace() or token in "-–—/:":
            out.append(token)
            start = start or token == ":"
            continue
        m = re.match(r"^(\W*)(.*?)(\W*)$", token)
        lead, core, tail = m.groups() if m else ("", token, "")
        out.append(lead + _word_case(core, forms, start) + tail)
        start = False
    return "".join(out)


def _word_case(word: str, forms: dict[str, Counter[str]], start: bool) -> str:
    if not word:
        return word
    seen = forms.get(word.casefold())
    if any(c.isdigit() for c in word):  # "16X16", "GPT-4", "3D": as the text writes it, else as printed
        return seen.most_common(1)[0][0] if seen else word
    if seen:
        inner = [(n, f) for f, n in seen.items() if any(c.isupper() for c in f[1:])]
        if inner and max(inner)[0] >= 0.5 * sum(seen.values()):
            return max(inner)[1]  # an acronym or a name with inner capitals, as the paper writes it
    low = word.lower()
    if low in _SMALL and not start:
        return low
    return low[:1].upper() + low[1:]


def normalize_title(title: str, *, case_from: Iterable[str] = (), text: str = "") -> str:
    """The stored form of a title: LaTeX rendered; an ALL-CAPS title takes the case of another title of the same
    paper with the same words (`case_from`: metadata), else of the paper's own `text` (see `recase`)."""
    t = latex_title(" ".join(title.split()))
    if not is_all_caps(t):
        return t
    for other in case_from:
        o = latex_title(" ".join(other.split()))
        if o and not is_all_caps(o) and same_words(o, t):
            return o
    return recase(t, text)
