"""Layout debris of PDF text (and unarXive's placeholders): the repairs `papers.clean.clean_text` runs on text
that came from a page layout.

Parsers leave debris that is harmless for retrieval but wrong in a label a model is scored against:

* line-break hyphenation: "LLaMA- 65B", "IC- DAR" (a hyphen followed by a space inside a word) and words joined
  across the break without their hyphen ("domainspecific"). Repaired with a **word check** against a vocabulary
  (the paper's own words, or a larger one): the hyphen is kept when the hyphenated form is a word there or both
  halves are words ("DeepSeek- R1" → "DeepSeek-R1"), dropped when only the joined form is ("IC- DAR" → "ICDAR").
  Suspended hyphens ("first- and second-order") are real and stay.
* captions and figure/table text spliced into running text: a paragraph opening with "Figure 3:" / "Table 15:"
  is a caption; runs of short non-sentence fragments and number-dense rows next to one are figure or table text.
  A sentence cut in two by the removed block is joined again.
* running heads ("2 C. Auer, et al.") and split drop caps ("L ARGE language" → "LARGE language").
* unarXive placeholders: emptied `\\ref`s ("Section  .", "(REF )") become an explicit "[ref]".

Every function here is pure and deterministic and counts what it changed in the `changes` Counter it is given.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from academiceval.papers.debris.pdf import CAPTION_START, furniture_kind, garbage_paragraph

# ---- vocabulary --------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]")
SUSPENDED = re.compile(r"^(and|or|nor|to|as|versus|vs|und|et)\b", re.I)


def vocabulary(texts: Iterable[str]) -> Counter[str]:
    """Case-folded word counts of some texts, hyphenated words kept whole ("domain-specific") — the word list
    the hyphenation check consults. Words broken by a line-break hyphen ("LLaMA- 65B") are not words here."""
    c: Counter[str] = Counter()
    for t in texts:
        c.update(w.casefold() for w in _TOKEN.findall(t))
    return c


# ---- detectors (counted by the audit) -----------------------------------------------------------------------

BROKEN_HYPHEN = re.compile(r"(?<=[^\W_])- (?=[^\W_])")
CAPTION = CAPTION_START  # every house style: "Figure 3:", "Fig. 3.", "FIG. 3.", "TABLE II." (papers.debris.pdf)
PLACEHOLDER = re.compile(
    r"\bREF\b|\b(?:Section|Sections|Sec\.|Table|Tables|Fig\.|Figure|Figures|Eq\.|Equation|Eqs\.|Appendix|Lemma|"
    r"Theorem|Proposition|Corollary|Definition|Algorithm|Chapter|Ref\.)[ \t]+(?=[.,;:)])"
)
RUNNING_HEAD = re.compile(r"(?:(?<=\s)|^)\d{1,4}\s+(?:[A-Z]\.\s?){1,3}\s?[A-Z][\w'’-]+,?\s+et al\.(?=\s|$)")
DROP_CAP = re.compile(r"(?:(?<=\n)|^)([B-HJ-Z]) ([A-Z]{2,})\b")  # "L ARGE"; "A"/"I" are words


def joined_compounds(text: str, vocab: Counter[str]) -> list[str]:
    """Words that are a hyphenated vocabulary word with its hyphen lost ("domainspecific" where
    "domain-specific" is a word of the vocabulary and "domainspecific" otherwise is not)."""
    index = _dehyphenated_index(vocab)
    out = []
    for w in re.findall(r"\b[a-z]{6,}\b", text):
        hy = index.get(w)
        if hy is not None and vocab.get(hy, 0) > vocab.get(w, 0):
            out.append(w)
    return out


def _dehyphenated_index(vocab: Counter[str]) -> dict[str, str]:
    key = id(vocab), len(vocab)
    got = _INDEX_CACHE.get(key)
    if got is None:
        got = {}
        for w in vocab:
            if w.count("-") == 1 and w.replace("-", "").isalpha():
                got.setdefault(w.replace("-", ""), w)
        _INDEX_CACHE.clear()
        _INDEX_CACHE[key] = got
    return got


_INDEX_CACHE: dict[tuple[int, int], dict[str, str]] = {}


# ---- repairs ------------------------------------------------------------------------------------------------


@dataclass
class Cleaned:
    text: str
    changes: Counter[str] = field(default_factory=Counter)


def repair_hyphenation(text: str, vocab: Counter[str], changes: Counter[str] | None = None) -> str:
    """Join words broken at a line end, keeping real hyphens (see the module docstring for the word check)."""
    changes = changes if changes is not None else Counter()

    def fix(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        if SUSPENDED.match(b):
            return m.group(0)
        joined, hyph = (a + b).casefold(), f"{a}-{b}".casefold()
        changes["broken hyphens repaired"] += 1
        if vocab.get(hyph, 0) >= vocab.get(joined, 0) and (vocab.get(hyph, 0) or not vocab.get(joined, 0)):
            return f"{a}-{b}"
        return a + b

    text = re.sub(r"([^\W_][\w'’-]*)- ([^\W_][\w'’-]*)", fix, text)
    index = _dehyphenated_index(vocab)

    def split(m: re.Match[str]) -> str:
        w = m.group(0)
        hy = index.get(w)
        if hy is not None and vocab.get(hy, 0) > vocab.get(w, 0):
            changes["joined compounds split"] += 1
            return hy
        return w

    return re.sub(r"\b[a-z]{6,}\b", split, text)


_SENT_END = re.compile(r"(?<![(\[])[.!?:;]['\"’”)\]]*$")  # "g(.)" is not a sentence end


def _words(p: str) -> list[str]:
    return p.split()


def _is_fragment(p: str) -> bool:
    """A short paragraph that is not a sentence: figure labels, axis ticks, table cells."""
    w = _words(p)
    return len(w) <= 8 and not _SENT_END.search(p.strip())


def _is_table_row(p: str) -> bool:
    w = _words(p)
    if len(w) < 6:
        return False
    numeric = sum(1 for t in w if any(ch.isdigit() for ch in t))
    return numeric / len(w) >= 0.4 and not re.search(r"[a-z]{3,}[.!?]\s", p)


def remove_captions(
    text: str, changes: Counter[str] | None = None, *, furniture: bool = False, fragments: bool = True
) -> str:
    """Drop caption paragraphs and the figure/table text around them; re-join a sentence cut by them. With
    `furniture`, page-furniture paragraphs (publisher lines, contact lines, page numbers, cipher text:
    `papers.debris.pdf`) go the same way. Without `fragments` only the captions themselves go (markdown text has
    no figure labels spilled around its captions, and its short lines are headings)."""
    changes = changes if changes is not None else Counter()
    paras = text.split("\n\n")
    drop = [False] * len(paras)
    if furniture:
        for i, p in enumerate(paras):
            kind = furniture_kind(p) or ("font_garbage" if garbage_paragraph(p) else None)
            if kind is not None:
                drop[i] = True
                changes[f"{kind} removed"] += 1
    for i, p in enumerate(paras):
        if CAPTION.match(p):
            drop[i] = True
            changes["captions removed"] += 1
            j = i - 1  # figure text printed above its caption
            while fragments and j >= 0 and not drop[j] and (_is_fragment(paras[j]) or _is_table_row(paras[j])):
                drop[j] = True
                changes["figure/table text removed"] += 1
                j -= 1
            j = i + 1  # table text printed below its caption
            while (
                fragments
                and j < len(paras)
                and (_is_table_row(paras[j]) or (_is_fragment(paras[j]) and _run_of_fragments(paras, j)))
            ):
                drop[j] = True
                changes["figure/table text removed"] += 1
                j += 1
    # long runs of fragments with no caption nearby are figure text too (a diagram's labels)
    i = 0
    while fragments and i < len(paras):
        if not drop[i] and _is_fragment(paras[i]):
            j = i
            while j < len(paras) and not drop[j] and _is_fragment(paras[j]):
                j += 1
            if j - i >= 4:
                for k in range(i, j):
                    drop[k] = True
                changes["figure/table text removed"] += j - i
            i = j
        else:
            i += 1
    kept: list[str] = []
    joined_after_gap = False
    for p, d in zip(paras, drop, strict=True):
        if d:
            joined_after_gap = True
            continue
        if joined_after_gap and kept and _continues(kept[-1], p):
            prev = kept[-1]
            kept[-1] = f"{prev} {p.lstrip()}"  # "16-" + "bit": the hyphen check below decides
            changes["sentences re-joined"] += 1
        else:
            kept.append(p)
        joined_after_gap = False
    return "\n\n".join(kept)


def strip_leading_fragments(text: str, changes: Counter[str] | None = None) -> str:
    """Drop figure text printed above a parsed abstract ("Residual function f(.) = y - g(.)" before ResNet's
    "Deeper neural networks are …"): leading paragraphs that are short non-sentences."""
    paras = text.split("\n\n")
    k = 0
    while k < len(paras) - 1 and (_is_fragment(paras[k]) or _is_table_row(paras[k])):
        k += 1
    if k and changes is not None:
        changes["leading figure text removed"] += k
    return "\n\n".join(paras[k:])


def _run_of_fragments(paras: list[str], j: int) -> bool:
    return sum(1 for p in paras[j : j + 3] if _is_fragment(p) or _is_table_row(p)) >= 2


def _continues(prev: str, nxt: str) -> bool:
    """Was `nxt` the rest of `prev`'s sentence before a figure was spliced in?"""
    s = nxt.lstrip()
    return bool(s) and not _SENT_END.search(prev.rstrip()) and (s[0].islower() or prev.rstrip().endswith("-"))


def fix_running_heads_and_drop_caps(text: str, vocab: Counter[str], changes: Counter[str] | None = None) -> str:
    changes = changes if changes is not None else Counter()
    text, n = RUNNING_HEAD.subn("", text)
    if n:
        changes["running heads removed"] += n

    def cap(m: re.Match[str]) -> str:
        word = m.group(1) + m.group(2)
        if vocab.get(word.casefold(), 0) or vocab.get(m.group(2).casefold(), 0) == 0:
            changes["drop caps joined"] += 1
            return word
        return m.group(0)

    return DROP_CAP.sub(cap, text)


_REF_WORDS = (
    r"Section|Sections|Sec\.|Table|Tables|Fig\.|Figure|Figures|Eq\.|Equation|Eqs\.|Appendix|Lemma|Theorem"
    r"|Proposition|Corollary|Definition|Algorithm|Chapter|Ref\."
)
UNARXIVE_REF = re.compile(r"\bREF\b|\b(" + _REF_WORDS + r")[ \t]+(?=[.,;:)])")


def fix_placeholders(text: str, changes: Counter[str] | None = None) -> str:
    """unarXive empties `\\ref{...}` ("Section  ." / "(REF )"): say so explicitly with "[ref]"."""
    changes = changes if changes is not None else Counter()

    def rep(m: re.Match[str]) -> str:
        changes["reference placeholders marked"] += 1
        return "[ref]" if m.group(1) is None else f"{m.group(1)} [ref]"

    text = UNARXIVE_REF.sub(rep, text)
    return re.sub(r"\[ref\][ \t]+(?=[.,;:)])", "[ref]", text)
