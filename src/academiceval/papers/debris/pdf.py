"""PDF text: paragraphs that are page furniture rather than prose, and characters a font's encoding garbled.

Kinds (each a detector the audit counts and a repair the cleaner applies to PDF-derived text):

* `caption`: a paragraph opening with a figure/table label in any house style — "Figure 3:", "Fig. 3.", "FIG. 3.",
  "Table 25.3.", "TABLE II." — removed with the figure/table text next to it (`papers.clean.remove_captions`).
* `publisher_line`: copyright, licence, DOI, ISSN/ISBN price lines (`979-8-3503-5554-3/24/$31.00 ©2024 IEEE`),
  received/accepted/published dates, "Permission to make digital or hard copies…".
* `contact`: e-mail addresses, "Corresponding author", "E-mail address:", author-address and affiliation lines.
* `page_furniture`: bare page numbers, "Page 3 of 12", arXiv stamps, conference running heads ("Published as a
  conference paper at ICLR 2025", "Preprint. Under review."), journal running heads ("J. Fluid Mech. (2018),
  vol. 852, pp. 1–29").
* `font_garbage`: text whose font had no usable Unicode map: control and private-use characters, U+FFFD, the
  "MT Extra"/AIP substitution (`OðReÞ` for O(Re), `t ¼ 50` for t = 50, `þ` for +), and cipher runs such as
  `?>9@AJ.B<?><#3$4(56#`.

A furniture paragraph is removed only when it is short (at most `MAX_FURNITURE_WORDS` words) and its signature is
the line's business, not a mention inside prose ("contact us at info@…" in a long paragraph stays; the audit
still counts the address).
"""

from __future__ import annotations

import re

CAPTION_START = re.compile(
    r"^\s*(?:Figure|FIGURE|Fig\.|FIG\.|Figs\.|Table|TABLE|Tab\.|TAB\.|Algorithm|ALGORITHM|Listing)\s*"
    r"(?:[A-Z]?\d+|[IVXL]+)(?:\.\d+)*[a-z]?(?!\.?\d)(?:\s*[:.|]|\s+[-–—]\s)"
)
CAPTION_INLINE = re.compile(
    r"(?<=[.!?)\]])\s*(?:Figure|FIGURE|Fig\.|FIG\.|Table|TABLE)\s*\d+[a-z]?\s*[:|]\s+[A-Z(]"
    r"|(?<=[.!?])(?:Figure|Table)\s+\d+[a-z]?\s*:\s+[A-Z(]"
)
MAX_FURNITURE_WORDS = 60

PUBLISHER = re.compile(
    r"©|\(c\)\s*(?:19|20)\d\d|\bcopyright\b|all rights reserved|\bISSN\b|\bISBN\b|\be-?ISSN\b|"
    r"\bdoi\s*[:.]?\s*10\.\d{4,}|doi\.org/10\.|\b\d{3}-\d{1,5}-\d{1,7}-\d{1,7}-[\dX]/\d\d/\$\d+\.\d\d|"
    r"^\s*(?:received|accepted|revised|published(?: online)?|available online|communicated by)\b[^.]{0,80}"
    r"(?:19|20)\d\d|permission to make digital or hard copies|publication rights licensed|"
    r"licensed under (?:a |the )?creative commons|this article is distributed under|published by (?:elsevier|"
    r"aip|springer|wiley|the royal society|iop|cambridge)",
    re.I | re.M,
)
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
CONTACT = re.compile(
    r"\bcorresponding authors?\b|\be-?mail(?: address(?:es)?)?\s*:|\bauthors[’']? (?:e-mail )?addresses\s*:|"
    r"\borcid\b|\bpresent address\s*:|\bthese authors contributed equally\b|\bequal contribution\b",
    re.I,
)
AFFILIATION = re.compile(
    r"\b(?:universit(?:y|ät|é|e|à|y)|institut(?:e|o|ion)?|department|dept\.|laborator(?:y|ies)|school of|"
    r"college of|cent(?:er|re) for|faculty of|division of|national lab\w*)\b",
    re.I,
)
PLACE = re.compile(
    r"\b(?:USA|U\.S\.A\.|UK|U\.K\.|Germany|France|China|Japan|Canada|Italy|Spain|Switzerland|Netherlands|"
    r"Korea|India|Israel|Australia|Singapore|Sweden|Denmark|Austria|Belgium|Brazil|[A-Z]{2} \d{5}|\d{5}(?:-\d{4})?)\b"
)
PAGE_FURNITURE = re.compile(
    r"^\s*(?:\d{1,4}|page \d+(?: of \d+)?|-\s*\d+\s*-)\s*$|"
    r"^\s*arXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?\s*\[[\w.-]+\]|"
    r"\b(?:published|accepted|under review) as (?:a )?(?:conference|workshop|journal) paper at\b|"
    r"^\s*preprint\b[^.]{0,60}(?:under review|submitted to|work in progress)|^\s*preprint submitted to\b|"
    r"^[^()\n]{2,60}\(\s*(?:19|20)\d\d\s*\),\s*vol\.\s*\d+",
    re.I | re.M,
)
_TAG = re.compile(r"</?[A-Za-z][\w-]*>|<[A-Za-z][\w-]*/?>")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ue000-\uf8ff\ufffd]")
AIP_SIGNATURE = re.compile(r"ð[^ðÞ\n]{0,60}Þ|(?<=\w) ¼ (?=[\w(ð-])")
AIP_MAP = str.maketrans({"ð": "(", "Þ": ")", "¼": "=", "þ": "+", "½": "[", "Š": "]"})
CIPHER = re.compile(r"\S*[#<>?@]\S*(?:\s+\S*[#<>?@]\S*){2,}")


def _words(p: str) -> int:
    return len(p.split())


def furniture_kind(paragraph: str) -> str | None:
    """Why a short paragraph is page furniture (its debris kind), or None."""
    p = paragraph.strip()
    if not p or _words(p) > MAX_FURNITURE_WORDS:
        return None
    if PAGE_FURNITURE.search(p):
        return "page_furniture"
    if PUBLISHER.search(p):
        return "publisher_line"
    if EMAIL.search(p) or CONTACT.search(p):
        return "contact"
    if AFFILIATION.search(p) and PLACE.search(p) and _words(p) <= 40:
        return "contact"
    return None


def cipher_runs(text: str) -> list[re.Match[str]]:
    """Runs of ≥ 3 tokens dense in ASCII symbols ("?>9@AJ.B<?><#3$4(56#"): a font without a Unicode map."""
    out = []
    for m in CIPHER.finditer(text):
        s = m.group(0)
        tokens = [t for t in s.split() if len(set(t) & set("#<>?@")) >= 2 and not _TAG.fullmatch(t.strip(".,;:"))]
        if len(tokens) < 3:
            continue
        sym = sum(ch in "#<>?@" for ch in s)
        if sym / max(1, len(s.replace(" ", ""))) >= 0.2 and len(set(s) & set("#<>?@")) >= 2 and not EMAIL.search(s):
            out.append(m)
    return out


def count_font_garbage(text: str) -> int:
    return len(CONTROL.findall(text)) + len(AIP_SIGNATURE.findall(text)) + len(cipher_runs(text))


def repair_fonts(text: str) -> tuple[str, int]:
    """The AIP/MT-Extra substitution undone where its signature is present; control and private-use characters
    dropped. Cipher runs cannot be decoded: their paragraphs go with the furniture (`drop_garbage`)."""
    n = 0
    if AIP_SIGNATURE.search(text):
        n += len(AIP_SIGNATURE.findall(text))
        text = text.translate(AIP_MAP)
    text, k = CONTROL.subn("", text)
    return text, n + k


def garbage_paragraph(p: str) -> bool:
    """A paragraph that is mostly cipher text."""
    runs = cipher_runs(p)
    return bool(runs) and sum(len(m.group(0)) for m in runs) >= 0.5 * len(p.strip())
