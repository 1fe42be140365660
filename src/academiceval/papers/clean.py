"""One cleaner for every source of paper text: a detector per kind of debris, and the repairs per source.

A label is scored word by word against what a model writes, so whatever is not the authors' prose — captions,
page furniture, font garbage, markup, cross-reference trails that repeat the paper's title — is wrong in it, and in
an input it can leak the answer (a trail in the body names the title). Every paper text goes through
`clean_text(text, vocab, source=…)` before it becomes a label or an input (`rounds.tasks.prepare_paper`), and
SCALAR's paper objects get the markup repairs when they are read (`clean_markup`, which also moves citation
spans). `debris_counts` is what remains: the build excludes a val/test label that still has any
(`rounds.quality.debris_reason`), and `academiceval audit` reports every kind per split.

Source families (`source_family`): `pdf` (PDF parses: layout debris), `latex` (unarXive: LaTeX rendered by
unarXive, its placeholders), `markdown` (ar5iv markdown in SCALAR objects), `text` (metadata and anything else:
LaTeX markup only). Detection runs every detector on every text whatever its source: the corpus scan
(`benchmarks/debris_corpus.py`) shows how often each one fires on each source, before and after cleaning.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from academiceval.papers.debris import ar5iv, latex, mathml
from academiceval.papers.debris import pdf as pdfdebris
from academiceval.papers.debris.edits import Edit, OffsetMap, apply
from academiceval.papers.debris.layout import (
    BROKEN_HYPHEN,
    CAPTION,
    DROP_CAP,
    PLACEHOLDER,
    RUNNING_HEAD,
    SUSPENDED,
    Cleaned,
    fix_placeholders,
    fix_running_heads_and_drop_caps,
    joined_compounds,
    remove_captions,
    repair_hyphenation,
    strip_leading_fragments,
    vocabulary,
)

__all__ = [
    "DEBRIS_KINDS",
    "Cleaned",
    "clean_markup",
    "clean_text",
    "debris_counts",
    "readable",
    "repair_hyphenation",
    "source_family",
    "strip_leading_fragments",
    "vocabulary",
]


def _captions(text: str) -> int:
    paras = text.split("\n\n")
    return sum(1 for p in paras if CAPTION.match(p)) + len(pdfdebris.CAPTION_INLINE.findall(text))


def _broken(text: str, vocab: Counter[str] | None) -> int:
    broken = [m for m in BROKEN_HYPHEN.finditer(text) if not SUSPENDED.match(text[m.end() :])]
    return len(broken) + (len(joined_compounds(text, vocab)) if vocab else 0)


def _furniture(kind: str) -> Callable[[str], int]:
    def count(text: str) -> int:
        n = sum(1 for p in text.split("\n\n") if pdfdebris.furniture_kind(p) == kind)
        if kind == "contact":  # an address inside a longer paragraph is still one
            n += sum(len(pdfdebris.EMAIL.findall(p)) for p in text.split("\n\n") if pdfdebris.furniture_kind(p) is None)
        return n

    return count


# kind -> detector (occurrences in a text). The order is the audit's column order.
DETECTORS: dict[str, Callable[[str], int]] = {
    "captions": _captions,
    "running_heads": lambda t: len(RUNNING_HEAD.findall(t)),
    "page_furniture": _furniture("page_furniture"),
    "publisher_lines": _furniture("publisher_line"),
    "contact_lines": _furniture("contact"),
    "drop_caps": lambda t: len(DROP_CAP.findall(t)),
    "font_garbage": pdfdebris.count_font_garbage,
    "placeholders": lambda t: len(PLACEHOLDER.findall(t)),
    "latex_markup": latex.count,
    "xref_trails": ar5iv.count_trails,
    "image_markup": lambda t: len(ar5iv.IMAGE.findall(t)),
    "math_duplicates": mathml.count,
    "escaped_markup": ar5iv.count_escapes,
    "heading_markup": lambda t: len(ar5iv.HEADING.findall(t)),
    "list_markup": ar5iv.count_lists,
    "table_markup": lambda t: len(ar5iv.TABLE_ROW.findall(t)),
    "code_listings": lambda t: len(ar5iv.CODE.findall(t)),
    "inline_footnotes": ar5iv.count_footnotes,
    "link_markup": ar5iv.count_links,
}
DEBRIS_KINDS: tuple[str, ...] = ("broken_hyphens", *DETECTORS)


def debris_counts(text: str, vocab: Counter[str] | None = None) -> dict[str, int]:
    """How much of each kind of debris a text holds (`vocab`: the word check for joined compounds)."""
    out = {"broken_hyphens": _broken(text, vocab)}
    for kind, detect in DETECTORS.items():
        out[kind] = detect(text)
    return out


def source_family(paper_source: str | None) -> str:
    """`Paper.source` → the family whose repairs apply: pdf, latex (unarXive), markdown (SCALAR/ar5iv), text."""
    s = (paper_source or "").lower()
    if s == "pdf" or s.startswith("pdf") or s in ("publist", "lab"):
        return "pdf"
    if s.startswith("unarxive"):
        return "latex"
    if s.startswith("scalar"):
        return "markdown"
    return "text"


# ---- markdown (ar5iv) repairs, with offsets -----------------------------------------------------------------

_MARKUP_PASSES: tuple[tuple[str, Callable[[str], list[Edit]]], ...] = (
    ("code_listings", ar5iv.code_edits),
    ("xref_trails", ar5iv.trail_edits),
    ("image_markup", ar5iv.image_edits),
    ("table_markup", ar5iv.table_edits),
    ("inline_footnotes", ar5iv.footnote_edits),
    ("link_markup", ar5iv.link_edits),
    ("emphasis_markup", ar5iv.emphasis_edits),
    ("escaped_markup", ar5iv.escape_edits),
    ("math_duplicates", mathml.edits),
    ("heading_markup", ar5iv.heading_edits),
    ("list_markup", ar5iv.list_edits),
    ("captions split from the sentence before", ar5iv.caption_split_edits),
)


def clean_markup(text: str, offsets: OffsetMap | None = None) -> tuple[str, Counter[str]]:
    """ar5iv markdown → text, losslessly for the prose: every pass is a list of edits recorded in `offsets`, so
    spans into the raw text (citations) can be moved (`OffsetMap.span`). Captions are not removed here (that is a
    judgement about labels, made in `clean_text`); a caption glued to the previous sentence is split off."""
    changes: Counter[str] = Counter()
    for kind, make in _MARKUP_PASSES:
        edits = make(text)
        if not edits:
            continue
        text, kept = apply(text, edits)
        changes[f"{kind} repaired"] += len(kept)
        if offsets is not None:
            offsets.add(kept)
    return text, changes


def readable(text: str) -> str:
    """Text as a person should read it on a page: LaTeX left outside math shown as the words it stands for
    (`latex.reading_edits`: `\\emph{x}` → x, `\\ourmethod` → ourmethod, `\\url{u}` → u, refs → [ref], TeX
    quotes as typographic ones). For display only — labels and outputs keep their exact text (what is scored)."""
    return apply(text, latex.reading_edits(text))[0] if "\\" in text or "`" in text or "''" in text else text


# ---- the cleaner ----------------------------------------------------------------------------------------------


def clean_text(
    text: str,
    vocab: Counter[str] | None = None,
    *,
    source: str = "pdf",
    layout: bool | None = None,
    placeholders: bool = True,
) -> Cleaned:
    """All repairs for text from `source` (a `Paper.source` or a family name), in order; returns the text and
    what changed (counts by kind). Idempotent: cleaning clean text changes nothing. `vocab`: the word check's
    vocabulary (default: the text's own words). `layout` (legacy): True forces the PDF repairs, False the
    LaTeX ones."""
    family = source_family(source) if source not in ("pdf", "latex", "markdown", "text") else source
    if layout is not None:
        family = "pdf" if layout else "latex"
    changes: Counter[str] = Counter()
    vocab = vocab if vocab is not None else vocabulary([text])
    t = text
    if family == "markdown":
        t, ch = clean_markup(t)
        changes.update(ch)
        t = remove_captions(t, changes, furniture=True, fragments=False)  # footnote texts with e-mails, too
    if family == "pdf":
        t, n = pdfdebris.repair_fonts(t)
        if n:
            changes["font_garbage repaired"] += n
        t = remove_captions(t, changes, furniture=True)
        t = fix_running_heads_and_drop_caps(t, vocab, changes)
        t = repair_hyphenation(t, vocab, changes)
    if family in ("latex", "markdown", "text"):
        t, kept = apply(t, latex.edits(t))
        if kept:
            changes["latex_markup repaired"] += len(kept)
    if placeholders and family in ("pdf", "latex"):
        t = fix_placeholders(t, changes)
    t = re.sub(r"[ \t]{2,}", " ", t)
    t = re.sub(r"\n{3,}", "\n\n", t)
    return Cleaned(t, changes)
