"""Large publication lists made of real metadata, for the import's scale tests and benchmark (issue 26, item 9).

Two shapes that real lists take and that the first import could not handle:

- **a collaboration paper**: one entry with thousands of authors (ATLAS, LIGO), here N real, distinct author
  names from the corpus' astro-ph listings, written as the listings write them; with `twin=True` a second
  entry lists the same people with initials only ("Takashi J. Moriya" → "Moriya, T. J."), as lists merged
  from two sources do — every initial form is then a merge candidate of a full form;
- **a long list**: N entries made of real listing records (title, authors, year and month of v1), without
  arXiv ids (stored as `pub:<key>`, as a group's own list would be).

Names containing characters that would need BibTeX escaping (braces, backslashes, quotes, " and ") are skipped,
so every generated entry parses and the author counts are exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from academiceval.sources.mirror.records import read_abs_text
from academiceval.sources.namemerge import name_parts
from academiceval.sources.names import author_key
from academiceval.store.paper_models import PaperMeta

LISTINGS = Path("metadata") / "arxiv_browse_astro-ph_listings"
_UNSAFE = re.compile(r"[{}\\\"%@#,]| and ", re.I)
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def listing_records(corpus: Path, *, files: int | None = None) -> Iterator[PaperMeta]:
    """The papers of the astro-ph listings (Jan–Jun 2018), in file order."""
    for f in sorted((Path(corpus) / LISTINGS).glob("*.txt"))[:files]:
        for r in read_abs_text(f.read_text(encoding="utf-8", errors="replace"), path=str(f), fmt="listing"):
            meta = getattr(r, "meta", None)
            if meta is not None:
                yield meta


def real_people(corpus: Path, n: int) -> list[str]:
    """`n` real author names with distinct keys (listing order); fewer when the listings run out."""
    seen: set[str] = set()
    out: list[str] = []
    for files in (1, None):  # one month has ~8,000 distinct names: read the rest only when asked for more
        for meta in listing_records(corpus, files=files):
            for a in meta.authors:
                if a.key and a.key not in seen and not _UNSAFE.search(a.name) and len(a.key.split()) >= 2:
                    seen.add(a.key)
                    out.append(a.name)
                    if len(out) == n:
                        return out
    return out


def initials_form(name: str) -> str:
    """ "Takashi J. Moriya" → "Moriya, T. J." (the surname with its particles, given names as initials)."""
    given, surname = name_parts(author_key(name))
    written = name.split()
    last = " ".join(written[len(written) - len(surname.split()) :]) or surname
    return f"{last}, {' '.join(g[0].upper() + '.' for g in given)}".strip().rstrip(",")


def _bib_entry(key: str, title: str, authors: list[str], year: int, month: int | None = None) -> str:
    month_field = f"  month = {_MONTHS[month - 1]},\n" if month else ""
    return (
        f"@article{{{key},\n  title = {{{title}}},\n  author = {{{' and '.join(authors)}}},\n"
        f"  year = {{{year}}},\n{month_field}  journal = {{Collaboration Reports}}\n}}\n"
    )


def collaboration_bib(corpus: Path, n_authors: int, out: Path, *, twin: bool = True, base: Path | None = None) -> Path:
    """`out`/ref.bib: the entries of `base` (a .bib, e.g. the lab list) plus a `n_authors`-author entry (and its
    initials-only twin). Returns the folder."""
    people = real_people(corpus, n_authors)
    if len(people) < n_authors:
        raise ValueError(f"the listings hold {len(people)} usable distinct names, not {n_authors}")
    out.mkdir(parents=True, exist_ok=True)
    parts = [base.read_text(encoding="utf-8")] if base else []
    parts.append(_bib_entry("collab2024", f"Results of a {n_authors}-author collaboration", people, 2024, 3))
    if twin:
        twin_people = [initials_form(p) for p in people]
        parts.append(_bib_entry("collab2025", "Further results of the collaboration", twin_people, 2025, 1))
    (out / "ref.bib").write_text("\n".join(parts), encoding="utf-8")
    return out


def entries_bib(corpus: Path, n_entries: int, out: Path) -> Path:
    """`out`/ref.bib with `n_entries` real listing records as entries (the listings repeated, with new keys and
    a later year, when more are asked for than they hold). Returns the folder."""
    records = [m for m in listing_records(corpus) if m.authors and not _UNSAFE.search(m.title)]
    entries: list[str] = []
    for i in range(n_entries):
        m = records[i % len(records)]
        names = [a.name for a in m.authors if not _UNSAFE.search(a.name)]
        if not names:
            names = ["Anonymous Author"]
        again = i // len(records)
        title = m.title + (f" (part {again + 1})" if again else "")
        entries.append(_bib_entry(f"e{i}", title, names, m.published.year + again, m.published.month))
    out.mkdir(parents=True, exist_ok=True)
    (out / "ref.bib").write_text("\n".join(entries), encoding="utf-8")
    return out
