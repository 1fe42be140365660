"""Formulas that ar5iv wrote three times: the visible MathML text, the content-MathML annotation and the LaTeX.

SCALAR's paper objects are ar5iv pages turned into markdown; every `<math>` element left all three of its text
nodes in a row: `O​(N2)𝑂superscript𝑁2O(N^{2})` is "O​(N2)" (what the page shows), "𝑂superscript𝑁2" (the content
annotation: math-italic identifiers and operator names such as `superscript`, `subscript`, `conditional`) and
"O(N^{2})" (the LaTeX source). A formula becomes `$LaTeX$` here, as unarXive's formulas do in the same store.

How a triple is recognised: the three parts name the same identifiers and numbers in the same order. Each part
is reduced to a *skeleton* (its letters and digits after NFKC, which maps 𝑠 to s and ℝ to R; operator names
dropped from the annotation, command names dropped from the LaTeX, Greek commands mapped to their letters), and
a triple is accepted only when the three skeletons are equal. Anything else is left as it is (and counted as
debris by `count`, so a label that keeps one is visible in the audit). Pure numbers are tripled without any
math character ("1.151.151.15", "11,6561165611,656"): one rule checks X + X-without-commas + X.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from academiceval.papers.debris.edits import Edit

# content-MathML operator names ar5iv leaves in the annotation (measured on the corpus's SCALAR objects)
OP_WORDS = (
    "superscript",
    "subscript",
    "conditional",
    "percent",
    "absent",
    "norm",
    "product",
    "cases",
    "delimited",
    "similar",
    "formulae-sequence",
    "formulae",
    "annotated",
    "tensor-product",
    "direct-sum",
    "interval",
    "top",
    "italic",
    "bold",
    "times",
)
# hyphenated content names ("much-less-than", "maps-to", "less-than-or-similar-to") come first: they only occur there
_OP = re.compile("(?:[a-z]+-)+[a-z]+(?=[^\\sa-z])|" + "|".join(sorted(OP_WORDS, key=len, reverse=True)))
_LATEX_CMD = re.compile(r"\\([A-Za-z]+)|\\(.)")
_FOLD = str.maketrans({"ϵ": "ε", "ϑ": "θ", "ϕ": "φ", "ϖ": "π", "ϱ": "ρ", "ς": "σ", "ı": "i", "ȷ": "j"})
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu",
    "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
}  # fmt: skip
_LETTER_CMDS = {"ell": "l", "imath": "i", "jmath": "j", "hbar": "ħ", "partial": "∂", "nabla": "∇", "infty": "∞"}
# named operators the page shows as letters ("min", "exp") and the LaTeX writes as commands; the content
# annotation leaves them out, so a triple holding one is matched by `_loose_triple_at`
_FUNCTION_CMDS = {
    "min", "max", "exp", "log", "ln", "lg", "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh",
    "arcsin", "arccos", "arctan", "arg", "sup", "inf", "lim", "liminf", "limsup", "det", "dim", "ker", "Pr",
    "deg", "gcd", "hom",
}  # fmt: skip
MAX_PART = 400  # characters; a longer "formula" is not one
MAX_LOOSE_VISIBLE = 120  # characters of the visible part the loose rule reads back


@lru_cache(maxsize=4096)
def _nfkc(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch)


def is_math_char(ch: str) -> bool:
    """Math-styled letters and digits (𝑠, 𝒚, ℝ, ℒ, ℎ): the mark of an ar5iv annotation or a styled symbol."""
    o = ord(ch)
    if 0x1D400 <= o <= 0x1D7FF:
        return True
    return 0x2100 <= o <= 0x214F and _nfkc(ch) != ch and len(_nfkc(ch)) == 1 and _nfkc(ch).isalnum()


@lru_cache(maxsize=8192)
def _skel_char(ch: str) -> str:
    n = _nfkc(ch) if ord(ch) > 127 else ch
    return "".join(c for c in n if c.isalnum()).translate(_FOLD)


def _skel_chars(s: str) -> str:
    return "".join(map(_skel_char, s))


def skeleton_visible(s: str) -> str:
    return _skel_chars(s)


def _latex_cmd(m: re.Match[str]) -> str:
    name = m.group(1)
    if name is None:
        return ""
    low = name.lower()
    if low.lstrip("var") in _GREEK or low in _GREEK:
        base = low[3:] if low.startswith("var") and low[3:] in _GREEK else low
        try:
            letter = unicodedata.lookup(f"GREEK {'CAPITAL' if name[0].isupper() else 'SMALL'} LETTER {base.upper()}")
        except KeyError:
            return ""
        return letter
    if name in _FUNCTION_CMDS:
        return name
    return _LETTER_CMDS.get(name, "")


def skeleton_latex(s: str) -> str:
    return _skel_chars(_LATEX_CMD.sub(_latex_cmd, s))


_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_MATHCHARS = "\U0001d400-\U0001d7ff\u2100-\u214f"
# where an annotation can start: operator names glued to what follows them, or a math-styled character
_ANCHOR = re.compile(rf"(?:{_OP.pattern})+(?=[{_MATHCHARS}\d(\[~¯^])|[{_MATHCHARS}]")


def _triple_at(text: str, p: int, lo: int) -> tuple[int, int, str] | None:
    """A triple whose annotation starts at `p` (V from the last space before it): (start, end, LaTeX)."""
    s = max(text.rfind(" ", lo, p), text.rfind("\n", lo, p)) + 1
    s = max(s, p - MAX_PART)
    visible = text[s:p]
    # cheap test first: the annotation's first identifier is the visible part's first one
    a = p
    while (op := _OP.match(text, a)) is not None:
        a = op.end()
    first_a = _skel_char(text[a]) if a < len(text) else ""
    first_v = next((c for c in map(_skel_char, visible) if c), "")
    if not first_a or first_a[0] != first_v[:1]:
        return None
    k = skeleton_visible(visible)
    if not k:
        return None
    # the annotation: operator names, math characters, digits and a few separators, until its skeleton is K
    j, got = p, ""
    while j < len(text) and len(got) < len(k):
        m = _OP.match(text, j)
        if m:
            j = m.end()
            continue
        ch = text[j]
        if ch.isspace() or not (is_math_char(ch) or ch.isdigit() or ch in ".,^′″‴-−+=()[]|⋅∗∘¯~^˙¨→←" or ch.isalpha()):
            return None
        got += _skel_char(ch)
        j += 1
    while j < len(text):  # operator names after the last identifier ("𝑔norm" ends with "norm")
        m = _OP.match(text, j)
        if not m:
            break
        j = m.end()
    if got != k:
        return None
    # the LaTeX: the shortest balanced prefix after the annotation whose skeleton is K
    e = _latex_end(text, j, k)
    if e is None:
        return None
    latex = text[j:e]
    if s < p and visible[:1] in _BRACKETS and not latex.startswith(visible[0]):
        s += 1  # "(st…" : the bracket is the sentence's, not the formula's
    return s, e, latex


def _latex_end(text: str, j: int, k: str) -> int | None:
    """End of the shortest balanced LaTeX after `j` whose skeleton is `k` (with its trailing closers)."""
    e, acc = j, ""
    limit = min(len(text), j + MAX_PART)
    while e < limit:
        m = _LATEX_CMD.match(text, e)
        if m:
            acc += skeleton_latex(m.group(0))
            e = m.end()
        else:
            acc += _skel_char(text[e])
            e += 1
        if len(acc) > len(k) or not k.startswith(acc):
            return None
        if acc == k:
            while e < len(text) and text[e] in "}^_'" and not _balanced(text[j:e]):
                e += 1
            while e < len(text) and text[e] in ")]}|" and _closes(text[j:e], text[e]):
                e += 1
            while (c := _LATEX_CMD.match(text, e)) and not skeleton_latex(c.group(0)):
                e = c.end()
            if _balanced(text[j:e]) and not (e < len(text) and (text[e].isalnum() or text[e] in "_^{")):
                return e
    return None


def _subsequence(a: str, k: str) -> bool:
    it = iter(k)
    return all(ch in it for ch in a)


def _first_latex_char(text: str, j: int) -> str:
    """The first skeleton character of the LaTeX starting at `j` ("" when none within a few characters)."""
    e = j
    while e < min(len(text), j + 24):
        m = _LATEX_CMD.match(text, e)
        got = skeleton_latex(m.group(0)) if m else _skel_char(text[e])
        if got:
            return got[0]
        e = m.end() if m else e + 1
    return ""


def _loose_triple_at(text: str, p: int, lo: int) -> tuple[int, int, str] | None:
    """A triple the exact rule misses: the annotation drops named operators ("min", "exp", "log") and holds
    symbols the exact rule does not read ("…", "∝", "{"), or the visible part is glued to the word before it
    ("BPS(N,M)𝑁𝑀(N,M)"). Accepted when the visible part (a suffix of the text since the last space) and the
    LaTeX have the same skeleton (named operators kept on both sides) and the annotation between them (no space,
    no backslash; upright identifiers such as "am" are plain letters in it) has a skeleton that is a non-empty
    subsequence of it. The longest visible part, then the shortest annotation, wins."""
    s0 = max(text.rfind(" ", lo, p), text.rfind("\n", lo, p)) + 1
    s0 = max(s0, p - MAX_LOOSE_VISIBLE)
    if s0 >= p:
        return None
    k0 = skeleton_visible(text[s0:p])
    if not k0:
        return None
    steps: list[tuple[int, str, str]] = []  # (end of the annotation, its skeleton, first LaTeX character after)
    j, got, at = p, "", 0  # `at`: how far into k0 the annotation's skeleton reaches as a subsequence
    while j < len(text) and j - p < MAX_PART:
        m = _OP.match(text, j)
        if m:
            j = m.end()
            continue
        ch = text[j]
        if ch.isspace() or ch == "\\":
            break
        for c in _skel_char(ch):
            at = k0.find(c, at) + 1
            if at == 0:
                break
        if at == 0:
            break  # no longer a subsequence of the longest visible part: nor of any shorter one
        got += _skel_char(ch)
        j += 1
        if got and not (j < len(text) and text[j].isascii() and text[j].isalpha() and ch.isascii() and ch.isalpha()):
            steps.append((j, got, _first_latex_char(text, j)))  # never inside a run of plain letters
    if not steps:
        return None
    chars = [_skel_char(c) for c in text[s0:p]]
    firsts = {first for _, _, first in steps if first}
    for s in range(s0, p):
        if s > s0 and text[s - 1].isalnum() and text[s].isalnum() and not text[s].isupper():
            continue  # the visible part starts at a word boundary, a capital or a bracket
        head = next((c for c in chars[s - s0 :] if c), "")
        if not head:
            break
        if head[0] not in firsts:
            continue
        k = "".join(chars[s - s0 :])
        for j, anno, first in steps:
            if first != k[0] or not _subsequence(anno, k):
                continue
            e = _latex_end(text, j, k)
            if e is not None:
                latex = text[j:e]
                if text[s] in _BRACKETS and not latex.startswith(text[s]):
                    s += 1
                return s, e, latex
    return None


def _closes(s: str, ch: str) -> bool:
    opener = {")": "(", "]": "[", "}": "{", "|": "|"}[ch]
    if ch == "|":
        return s.count("|") % 2 == 1
    return s.count(opener) > s.count(ch)


_NUMBER = re.compile(r"(?<![\w.,])\d[\d.,]{2,}\d(?![\d.,])")


def _number_triple(tok: str) -> str | None:
    for i in range(2, len(tok) // 2 + 1):
        x = tok[:i]
        if not x[-1].isdigit():
            continue
        a = x.replace(",", "")
        if tok == x + a + x:
            return x
    return None


def edits(text: str) -> list[Edit]:
    """Replace every recognised triple with `$LaTeX$` (pure numbers with the number)."""
    out: list[Edit] = []
    pos = 0
    for m in _ANCHOR.finditer(text):
        if m.start() < pos:
            continue
        got = None
        q = m.start()
        # multi-letter identifiers ("Attention", "softmax") are plain letters at the start of the annotation
        while got is None and q >= max(pos, m.start() - 24):
            got = _triple_at(text, q, pos)
            if q == 0 or not text[q - 1].isalpha():
                break
            q -= 1
        if got is None:
            got = _loose_triple_at(text, m.start(), pos)
        if got is None:
            continue
        s, e, latex = got
        out.append(Edit(s, e, f"${latex.strip()}$"))
        pos = e
    for m in _NUMBER.finditer(text):
        x = _number_triple(m.group(0))
        if x is not None and not any(ed.start <= m.start() < ed.end for ed in out):
            out.append(Edit(m.start(), m.end(), x))
    return out


_GLUED = re.compile(
    r"(?:subscript|superscript|conditional|percent|delimited)(?=[\U0001D400-\U0001D7FF\u2100-\u214F])"
    r"|[\U0001D400-\U0001D7FF](?:subscript|superscript|conditional|norm|absent)"
)


def count(text: str) -> int:
    """Formulas still written more than once: the triples `edits` would resolve, plus content-MathML operator
    names glued to a math-styled character elsewhere (the annotation of a triple it cannot resolve). A
    math-styled character alone is not debris (PDF text shows formulas that way)."""
    found = edits(text)
    n = len(found)
    for m in _GLUED.finditer(text):
        if not any(e.start <= m.start() < e.end for e in found) and not _in_dollars(text, m.start()):
            n += 1
    return n


def _in_dollars(text: str, pos: int) -> bool:
    line_start = text.rfind("\n", 0, pos) + 1
    return text.count("$", line_start, pos) % 2 == 1
