"""The hand-checked reference sample: gold fields for 99 real bibliography entries, and how a parser scores on it.

`tests/papers/data/reference_gold.jsonl` names each entry by where it lives in the corpus (a PDF and its
reference index, an unarXive paper and bib key, a SCALAR paper object and bib id, a LaTeX file and cite key) and
gives the fields a careful reader takes from it: title (None when the style prints none, as physics and
astronomy journals do), first author, year, arXiv id, DOI. The raw text stays in the corpus; `load_gold` reads it
from there. Used by `benchmarks/reference_parsing.py` (contenders side by side) and `tests/papers` (the chosen
readers hold their measured accuracy).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz

from academiceval.papers.bib_latex import bibitems
from academiceval.papers.bib_markdown import markdown_bibliography
from academiceval.papers.bibliography import BibEntry, norm_title, surname
from academiceval.papers.parse import parse_pdf
from academiceval.papers.refstring import parse_reference_string

FIELDS = ("title", "first_author", "year", "arxiv_id", "doi")


@dataclass
class GoldItem:
    kind: str  # pdf, unarxive, markdown, bibitem
    locator: str
    gold: dict[str, object]
    raw: str  # the entry as one line of text (what a free-string parser is given)
    structured: BibEntry  # what the project's reader for this kind returns


def load_gold(gold_file: Path, corpus: Path) -> list[GoldItem]:
    """Every gold entry with its raw text and our reader's entry, read from the corpus."""
    rows = [json.loads(line) for line in gold_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    pdfs: dict[str, list] = {}
    unarxive: dict[str, dict] = {}
    md: dict[str, list[BibEntry]] = {}
    tex: dict[str, dict[str, BibEntry]] = {}
    out: list[GoldItem] = []
    for r in rows:
        kind, f = r["kind"], r["file"]
        gold = {k: r[k] for k in FIELDS}
        if kind == "pdf":
            if f not in pdfs:
                pdfs[f] = parse_pdf(corpus / f).references
            ref = pdfs[f][r["index"]]
            out.append(GoldItem(kind, f"{f}#{r['index']}", gold, ref.raw, parse_reference_string(ref.raw)))
        elif kind == "unarxive":
            if not unarxive:
                for line in (corpus / f).read_text(encoding="utf-8").splitlines():
                    d = json.loads(line)
                    unarxive[d["paper_id"]] = d
            raw = " ".join(str(unarxive[r["paper"]]["bib_entries"][r["bib"]].get("bib_entry_raw") or "").split())
            out.append(GoldItem(kind, f"{r['paper']}#{r['bib'][:8]}", gold, raw, parse_reference_string(raw)))
        elif kind == "markdown":
            if f not in md:
                md[f] = markdown_bibliography(json.loads((corpus / f).read_text(encoding="utf-8"))["markdown_content"])
            e = md[f][int(r["bib"].removeprefix("bib.bib")) - 1]
            out.append(GoldItem(kind, f"{Path(f).name}#{r['bib']}", gold, e.raw, e))
        elif kind == "bibitem":
            if f not in tex:
                tex[f] = {e.key or "": e for e in bibitems((corpus / f).read_text(encoding="utf-8", errors="replace"))}
            e = tex[f][r["key"]]
            out.append(GoldItem(kind, f"{f}#{r['key']}", gold, e.raw, e))
    return out


def field_ok(name: str, gold: object, got: object) -> bool | None:
    """Whether a parsed field is right; None when the gold says nothing checkable (an organisation as author)."""
    if name == "first_author":
        if gold is None:
            return None
        return bool(got) and surname(str(gold)) == surname(str(got))
    if name == "title":
        if gold is None:
            return got is None
        if not got:
            return False
        return fuzz.ratio(norm_title(str(gold)), norm_title(str(got))) >= 95
    return (gold or None) == (got or None)


def entry_fields(e: BibEntry) -> dict[str, object]:
    return {
        "title": e.title,
        "first_author": e.authors[0] if e.authors else None,
        "year": e.year,
        "arxiv_id": e.arxiv_id,
        "doi": e.doi,
    }


@dataclass
class Score:
    """Share of entries with each field right, per source kind and overall."""

    right: dict[tuple[str, str], int]
    checked: dict[tuple[str, str], int]
    misses: list[tuple[str, str, object, object]]  # locator, field, gold, got

    def rate(self, kind: str, name: str) -> float | None:
        n = self.checked.get((kind, name), 0)
        return self.right.get((kind, name), 0) / n if n else None


def score(items: Iterable[GoldItem], parse: Callable[[GoldItem], dict[str, object]]) -> Score:
    right: Counter[tuple[str, str]] = Counter()
    checked: Counter[tuple[str, str]] = Counter()
    misses: list[tuple[str, str, object, object]] = []
    for it in items:
        got = parse(it)
        for name in FIELDS:
            ok = field_ok(name, it.gold[name], got.get(name))
            if ok is None:
                continue
            for kind in (it.kind, "all"):
                checked[(kind, name)] += 1
                right[(kind, name)] += int(ok)
            if not ok:
                misses.append((it.locator, name, it.gold[name], got.get(name)))
    return Score(dict(right), dict(checked), misses)


def by_kind(items: Iterable[GoldItem]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for it in items:
        out[it.kind] += 1
    return dict(out)
