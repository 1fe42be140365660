"""Ground truth for judging the parser: metadata titles/abstracts and LaTeX structure of corpus papers.

Used by `benchmarks/ingest_quality.py` and the quality tests. It reads the real-data corpus layout
(`SOURCES.tsv`, `PDF_CHECK.tsv`, Atom responses, arXiv `.abs` records, SCALAR/Kaggle metadata, LaTeX
sources) and compares a parsed `Paper` against it. Similarity is rapidfuzz's normalized Indel ratio over
lower-cased alphanumeric text, so punctuation, ligatures and line breaks do not count.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import ElementTree
from rapidfuzz import fuzz

ATOM = "{http://www.w3.org/2005/Atom}"
_NEW_ID = re.compile(r"(\d{4}\.\d{4,5})(?:v\d+)?")


def normalize(text: str) -> str:
    text = re.sub(r"\$[^$]*\$", " ", text)  # inline LaTeX math in metadata abstracts
    text = re.sub(r"\\[a-zA-Z]+", " ", text)
    return re.sub(r"\s+", " ", re.sub(r"[^0-9a-z]+", " ", text.lower())).strip()


def similarity(a: str, b: str) -> float:
    """Normalized similarity in [0, 1] (1 = same words in the same order)."""
    na, nb = normalize(a), normalize(b)
    if not na or not nb:
        return 0.0
    return fuzz.ratio(na, nb) / 100.0


def versionless(arxiv_id: str) -> str:
    m = _NEW_ID.fullmatch(arxiv_id.strip())
    return m.group(1) if m else re.sub(r"v\d+$", "", arxiv_id.strip())


@dataclass
class Truth:
    """What the corpus says about one PDF."""

    path: Path
    arxiv_id: str | None
    kind: str
    title: str | None = None
    abstract: str | None = None
    abstract_source: str | None = None
    check: dict[str, str] = field(default_factory=dict)  # PDF_CHECK.tsv row
    latex_sections: list[str] = field(default_factory=list)
    latex_references: int | None = None


def _atom_records(corpus: Path) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for f in sorted((corpus / "arxiv_api").rglob("*.xml")):
        try:
            root = ElementTree.parse(f).getroot()
        except Exception:
            continue
        for e in root.iter(f"{ATOM}entry"):
            eid = (e.findtext(f"{ATOM}id") or "").rsplit("/abs/", 1)[-1]
            title, summary = e.findtext(f"{ATOM}title") or "", e.findtext(f"{ATOM}summary") or ""
            if eid and summary.strip():
                out[versionless(eid)] = (title, summary)
    return out


def _abs_records(corpus: Path, wanted: set[str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for f in (corpus / "metadata" / "arxiv_browse_abs").rglob("*.abs"):
        text = f.read_text(errors="replace")
        m = re.search(r"^arXiv:(\S+)", text, re.M)
        if not m or versionless(m.group(1)) not in wanted:
            continue
        title = re.search(r"^Title:\s*(.+?)\n(?=\w+:)", text, re.M | re.S)
        parts = text.split("\\\\")
        out[versionless(m.group(1))] = (title.group(1) if title else "", parts[2] if len(parts) > 2 else "")
    return out


def _json_records(corpus: Path) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    scalar = corpus / "metadata" / "scalar_iclr2025_metadata.json"
    if scalar.exists():
        for row in json.loads(scalar.read_text()):
            meta = row.get("metadata") or {}
            if row.get("arxiv_id") and meta.get("abstract"):
                out[versionless(row["arxiv_id"])] = (meta.get("title", ""), meta["abstract"])
    kaggle = corpus / "metadata" / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"
    if kaggle.exists():
        for line in kaggle.read_text().splitlines():
            row = json.loads(line)
            out.setdefault(versionless(row["id"]), (row.get("title", ""), row.get("abstract", "")))
    return out


def _latex_truth(corpus: Path, arxiv_id: str) -> tuple[list[str], int | None, str | None]:
    """\\section titles (in order, \\input files followed), bibliography size and abstract from LaTeX."""
    base = None
    for d in (corpus / "latex").glob("*/*"):
        if d.is_dir() and versionless(d.name.removeprefix("arXiv-")) == arxiv_id:
            base = d
    if base is None:
        return [], None, None
    main = base / "main.tex"
    if not main.exists():
        texs = sorted(base.glob("*.tex"))
        if not texs:
            return [], None, None
        main = texs[0]

    def expand(path: Path, depth: int = 0) -> str:
        text = re.sub(r"(?<!\\)%.*", "", path.read_text(errors="replace"))
        if depth > 3:
            return text

        def sub(m: re.Match[str]) -> str:
            p = base / m.group(1)
            p = p if p.suffix == ".tex" else p.with_suffix(".tex")
            return expand(p, depth + 1) if p.exists() else ""

        return re.sub(r"\\(?:input|include)\{([^}]+)\}", sub, text)

    text = expand(main)
    sections = [re.sub(r"\\[a-zA-Z]+|[{}]", "", s).strip() for s in re.findall(r"\\section\*?\{([^}]*)\}", text)]
    bib = len(re.findall(r"\\bibitem", text))
    if not bib:
        bbl = base / "main.bbl"
        bib = len(re.findall(r"\\bibitem", bbl.read_text(errors="replace"))) if bbl.exists() else 0
    m = re.search(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", text, re.S)
    return sections, bib or None, (m.group(1).strip() if m else None)


def load_truth(corpus: Path) -> list[Truth]:
    """One `Truth` per PDF in `corpus/pdf` (partial page subsets included, kind says so)."""
    with open(corpus / "SOURCES.tsv") as f:
        sources = {r["path"]: r for r in csv.DictReader(f, delimiter="\t")}
    with open(corpus / "PDF_CHECK.tsv") as f:
        checks = {r["path"]: r for r in csv.DictReader(f, delimiter="\t")}
    rows = [r for p, r in sources.items() if p.startswith("pdf/") and p.endswith(".pdf")]
    ids = {versionless(r["arxiv_id"]) for r in rows if r.get("arxiv_id")}
    records = _json_records(corpus)
    records.update(_abs_records(corpus, ids))
    records.update(_atom_records(corpus))
    out: list[Truth] = []
    for r in sorted(rows, key=lambda r: r["path"]):
        aid = versionless(r["arxiv_id"]) if r.get("arxiv_id") else None
        title = re.sub(r"\s*\((first \d+ pages only|pages? [\d\-]+ only|page \d+ only)\)$", "", r["title"]).strip()
        t = Truth(corpus / r["path"], aid, r.get("kind", ""), title=title or None, check=checks.get(r["path"], {}))
        if aid and aid in records and ids:
            t.abstract, t.abstract_source = records[aid][1], "metadata"
        if aid:
            t.latex_sections, t.latex_references, latex_abstract = _latex_truth(corpus, aid)
            if latex_abstract and not t.abstract:
                t.abstract, t.abstract_source = latex_abstract, "latex"
        out.append(t)
    return out


def expected_roles(check: dict[str, str]) -> set[str]:
    """Roles PDF_CHECK.tsv says the paper has (Background counts as related work, Discussion/Summary as
    conclusion — the same mapping the parser uses)."""
    want: set[str] = set()
    if check.get("introduction") == "yes":
        want.add("introduction")
    if check.get("related_work") in {"yes", "background_only"}:
        want.add("related_work")
    if check.get("conclusion") in {"yes", "discussion/summary_only"}:
        want.add("conclusion")
    if check.get("references") == "yes":
        want.add("references")
    return want
