"""LaTeX bibliographies → `BibEntry`: `\\bibitem`s (a `.bbl` or an inline `thebibliography`) and BibTeX files.

`\\bibitem[label]{key}` entries written by a BibTeX style separate authors, title and venue with `\\newblock`:
those go to the block reader (`bib_blocks.entry_from_blocks`); entries without blocks (hand-written lists,
AASTeX/physics styles) are free strings for `refstring.parse_reference_string`. Identifiers are read before the
LaTeX is turned into text (pylatexenc), since macros such as `\\dodoi{…}`, `\\href{…}` or `\\eprint{…}` carry
them and the text rendering drops their arguments. BibTeX files are read with bibtexparser (v2); its fields are
already the entry's fields.
"""

from __future__ import annotations

import logging
import re

import bibtexparser
from bibtexparser.middlewares.names import split_multiple_persons_names
from pylatexenc.latex2text import LatexNodes2Text

from academiceval.papers.bib_blocks import entry_from_blocks
from academiceval.papers.bibliography import (
    BibEntry,
    arxiv_id_of_doi,
    clean_title,
    find_arxiv_id,
    find_doi,
    find_year,
    split_names,
)
from academiceval.papers.refstring import parse_reference_string

logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)

_BIBITEM = re.compile(r"\\bibitem\s*(?=[\[{])")
_END_BIB = re.compile(r"\\end\{thebibliography\}")
_ID_MACROS = re.compile(r"\\(?:dodoi|doi|href|url|eprint|arxiv)\s*\{([^{}]*)\}", re.I)
_L2T = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def latex_to_text(tex: str) -> str:
    """LaTeX → plain text (accents decoded, commands and braces dropped, `~` a space)."""
    tex = re.sub(r"(?<!\\)%.*", "", tex)  # comments
    try:
        text = _L2T.latex_to_text(tex)
    except Exception:  # pylatexenc is lenient; one odd entry must not stop a bibliography
        text = re.sub(r"\\[a-zA-Z]+\*?|[{}]", " ", tex)
    return " ".join(text.replace("{", "").replace("}", "").replace("~", " ").split())


def _balanced(s: str, i: int, open_: str, close: str) -> int:
    """Index just after the group opening at s[i] (nested groups allowed)."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_:
            depth += 1
        elif s[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


def bibitems(tex: str) -> list[BibEntry]:
    """Every `\\bibitem` in a `.bbl` or a document's `thebibliography`, in order; `key` is the cite key."""
    tex = re.sub(r"(?<!\\)%[^\n]*", "", tex)
    starts = [m.end() for m in _BIBITEM.finditer(tex)]
    out: list[BibEntry] = []
    for n, pos in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(tex)
        chunk = tex[pos:end]
        if n + 1 < len(starts):
            chunk = chunk[: chunk.rfind("\\bibitem")] if "\\bibitem" in chunk else chunk
        stop = _END_BIB.search(chunk)
        if stop:
            chunk = chunk[: stop.start()]
        i = 0
        if chunk.startswith("["):
            i = _balanced(chunk, 0, "[", "]")
        while i < len(chunk) and chunk[i].isspace():
            i += 1
        key = None
        if i < len(chunk) and chunk[i] == "{":
            j = _balanced(chunk, i, "{", "}")
            key = chunk[i + 1 : j - 1].strip()
            i = j
        out.append(bibitem_entry(chunk[i:], key=key))
    return out


def bibitem_entry(body: str, *, key: str | None = None) -> BibEntry:
    """The LaTeX of one entry (after `\\bibitem{key}`) → entry."""
    ids_text = " ".join(_ID_MACROS.findall(body))
    body = re.sub(r"\\(?:dodoi|doi|url|eprint)\s*\{[^{}]*\}", " ", body)
    body = re.sub(r"\\href\s*\{[^{}]*\}", " ", body)
    blocks = [latex_to_text(b) for b in re.split(r"\\newblock\b", body)]
    raw = " ".join(" ".join(blocks).split())
    if len([b for b in blocks if b]) >= 2:
        return entry_from_blocks(blocks, raw=raw, key=key, ids_text=ids_text)
    entry = parse_reference_string(raw, key=key)
    doi = entry.doi or find_doi(ids_text)
    return entry.model_copy(
        update={"doi": doi, "arxiv_id": entry.arxiv_id or find_arxiv_id(ids_text) or arxiv_id_of_doi(doi)}
    )


def bibtex_entries(text: str) -> list[BibEntry]:
    """Every entry of a BibTeX file with its fields (malformed blocks are skipped by bibtexparser's recovery)."""
    lib = bibtexparser.parse_string(text)
    out: list[BibEntry] = []
    for e in lib.entries:
        f = {k.lower(): str(v.value if hasattr(v, "value") else v) for k, v in e.fields_dict.items()}
        title = clean_title(latex_to_text(f.get("title", "")))
        authors = (
            [latex_to_text(a) for a in split_multiple_persons_names(f.get("author", ""))] if f.get("author") else []
        )
        authors = split_names(", ".join(_first_last(a) for a in authors)) if authors else []
        venue = next(
            (
                latex_to_text(f[k])
                for k in ("journal", "journaltitle", "booktitle", "institution", "publisher")
                if f.get(k)
            ),
            None,
        )
        ids = " ".join(f.get(k, "") for k in ("doi", "eprint", "arxiv", "url", "note", "journal"))
        doi = find_doi(f.get("doi", "")) or find_doi(ids)
        arxiv = None
        if f.get("eprint") and "arxiv" in (f.get("archiveprefix", "") + f.get("eprinttype", "") + "arxiv").lower():
            arxiv = find_arxiv_id("arXiv:" + f["eprint"])
        arxiv = arxiv or find_arxiv_id(ids) or arxiv_id_of_doi(doi)
        year = find_year(f.get("year", "") or f.get("date", ""))
        raw = " ".join(x for x in (", ".join(authors), str(year or ""), title or "", venue or "") if x)
        out.append(
            BibEntry(raw=raw, key=e.key, title=title, authors=authors, year=year, venue=venue, arxiv_id=arxiv, doi=doi)
        )
    return out


def _first_last(name: str) -> str:
    """ "Vaswani, Ashish" → "Ashish Vaswani" (bibtexparser keeps the written order)."""
    if "," in name:
        last, first = name.split(",", 1)
        return f"{first.strip()} {last.strip()}".strip()
    return name
