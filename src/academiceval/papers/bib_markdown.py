"""ar5iv markdown bibliographies (SCALAR paper objects' `markdown_content`) → `BibEntry` per item, in order.

ar5iv renders a `.bbl` as a markdown list under "## References": each item starts with the citation marker on
its own line ("- Achiam et al. (2023)", "- \\[12\\]"), then the `\\newblock` blocks as paragraphs separated by
blank lines (or, in some renderings, one block per line). Links wrap titles (`[Title](https://arxiv.org/abs/…)`)
and italics mark venues (`_arXiv preprint arXiv:…_`). Item i is SCALAR's bib id `bib.bib{i+1}`
(`sources.mirror.scalar_papers` checks the markers against SCALAR's own where it has them).
"""

from __future__ import annotations

import re

from academiceval.papers.bib_blocks import entry_from_blocks
from academiceval.papers.bibliography import BibEntry

_REFS_HEADING = re.compile(r"^#{1,4}\s*(?:\d+\.?\s*)?(?:References|Bibliography)\s*\\?\s*$", re.M | re.I)
_NEXT_HEADING = re.compile(r"^#{1,4}\s+\S", re.M)
_ITEM = re.compile(r"^- ", re.M)
_LINK = re.compile(r"\[((?:[^\[\]]|\\\[|\\\])*)\]\((\S*?)(?:\s+\"[^\"]*\")?\)")


def references_block(md: str) -> str:
    """The text of the last References section (up to the next heading), or ""."""
    heads = list(_REFS_HEADING.finditer(md))
    if not heads:
        return ""
    start = heads[-1].end()
    nxt = _NEXT_HEADING.search(md, start)
    return md[start : nxt.start() if nxt else len(md)]


def unescape(s: str) -> str:
    """Markdown escapes and ar5iv's forced line breaks (`\\\\` + newline) → plain text."""
    s = re.sub(r"\\\\\s*\n", " ", s)
    s = s.replace("\\\\", " ")
    return re.sub(r"\\([\[\]()_*#`.!-])", r"\1", s)


def markdown_bibliography(md: str) -> list[BibEntry]:
    """Every item of the References list, in order; `key` is the item's citation marker as printed."""
    block = references_block(md)
    if not block:
        return []
    starts = [m.start() for m in _ITEM.finditer(block)]
    out: list[BibEntry] = []
    for a, b in zip(starts, [*starts[1:], len(block)], strict=True):
        item = block[a + 2 : b]
        out.append(markdown_item(item))
    return out


def markdown_item(item: str) -> BibEntry:
    """One list item (without its "- ") → entry."""
    marker, _, body = item.partition("\n")
    glued = re.match(r"^\s*(\\\[\d{1,4}\\\])(?=\S)", marker)  # "\\[2\\]Guillaume Baudart …" on one line
    if glued and not body.strip():
        marker, body = glued.group(1), marker[glued.end() :]
    urls: list[str] = []

    def link(m: re.Match[str]) -> str:
        urls.append(m.group(2))
        return m.group(1)

    # a third rendering ends every line with a markdown hard break ("\\") and separates blocks by a line holding
    # only one: the lone ones are block breaks, the trailing ones soft wraps
    body = re.sub(r"(?m)^[ \t]*\\[ \t]*$", "", body)
    body = re.sub(r"(?m)(?<!\\)\\[ \t]*$", "", body)
    body = _LINK.sub(link, unescape(body))
    body = re.sub(r"(?<!\w)[_*]+|[_*]+(?!\w)", "", body)  # emphasis marks
    paras = [p for p in re.split(r"\n\s*\n", body.strip()) if p.strip()]
    blocks = paras if len(paras) > 1 else [ln for ln in body.strip().split("\n") if ln.strip()]
    raw = " ".join(" ".join(blocks).split())
    return entry_from_blocks(
        blocks, raw=raw, key=unescape(marker).strip().rstrip("\\").strip(), ids_text=" ".join(urls)
    )
