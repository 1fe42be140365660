"""Block-structured bibliography entries → `BibEntry`: LaTeX's `\\newblock` (`.bbl`) and ar5iv's markdown of it.

Most BibTeX styles print an entry as blocks — authors, title, venue — separated by `\\newblock`; ar5iv keeps
them as paragraphs (or lines) in the markdown SCALAR paper objects carry. Where the style separated the fields,
no guessing is needed: the first block is the author list (natbib styles end it with the year: "Names. 2023."),
the second the title, the rest the venue. An entry of one block is a free string and goes to
`refstring.parse_reference_string`.
"""

from __future__ import annotations

import re

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

_HEAD_YEAR = re.compile(r"[,.]?\s*\(?((?:19|20)\d{2})[a-z]?\)?\.?\s*$")


def entry_from_blocks(blocks: list[str], *, raw: str, key: str | None = None, ids_text: str = "") -> BibEntry:
    """Authors / title / venue blocks → entry. `ids_text`: extra text to read ids from (link targets)."""
    blocks = [" ".join(b.split()) for b in blocks if b and b.strip()]
    text = " ".join(blocks)
    if len(blocks) < 2:
        entry = parse_reference_string(text)
        doi = entry.doi or find_doi(ids_text)
        arxiv_id = entry.arxiv_id or find_arxiv_id(ids_text) or arxiv_id_of_doi(doi)
        return entry.model_copy(update={"raw": raw, "key": key, "doi": doi, "arxiv_id": arxiv_id})
    head = blocks[0]
    year = None
    m = _HEAD_YEAR.search(head)
    if m:
        year = int(m.group(1))
        head = head[: m.start()]
    venue_text = " ".join(blocks[2:])
    if year is None:
        year = find_year(venue_text) or find_year(blocks[1])
    doi = find_doi(text) or find_doi(ids_text)
    arxiv_id = find_arxiv_id(text) or find_arxiv_id(ids_text) or arxiv_id_of_doi(doi)
    return BibEntry(
        raw=raw,
        key=key,
        title=clean_title(blocks[1]),
        authors=split_names(head),
        year=year,
        venue=venue_of(venue_text),
        arxiv_id=arxiv_id,
        doi=doi,
    )


def venue_of(text: str) -> str | None:
    """The venue block without pages, volume, year, URLs and ids ("In _ICML_, pages 1–9, 2020." → "ICML")."""
    v = re.sub(r"https?://\S+|doi:\s*\S+|\bURL\b", " ", text, flags=re.I)
    v = re.sub(r"^\s*In:?\s+", "", v)
    v = re.sub(r"[_*{}]", "", v)
    v = re.split(r",\s*(?:pp?\.|pages?\b|vol(?:ume)?\.?\b|\d)", v, maxsplit=1)[0]
    v = re.sub(r"[,.]?\s*(?:19|20)\d{2}[a-z]?\s*\.?\s*$", "", v)
    v = " ".join(v.split()).strip(" .,;:")
    return v or None
