"""Import a publication list and its PDFs into the workspace (`academiceval import DIR`).

Order of work:
1. read every list in the folder (`*.bib`, CSL-JSON) → entries + issues (`sources.publist`);
2. find each entry's PDF: its `file` field (relative to the list's folder; a path that leaves the folder is
   refused), else a DOI printed on a PDF's first page, else the parsed title of a PDF no entry names
   (similarity ≥ 0.9);
3. parse each PDF (`papers.parse_pdf`) and check it is the paper its entry names: printed title similar to the
   entry's title (≥ 0.8) or, for a retitled version, its abstract similar to the entry's (≥ 0.85). A PDF that
   fails the check is reported (`title_mismatch`) and not attached;
4. merge name variants on evidence (`sources.namemerge`) and store every dated entry as `PaperMeta` (with its
   date precision; resolved author keys) and every attached PDF as a parsed `Paper` linked to the entry's id.
   Entries without a PDF are metadata only; PDFs no entry claims are reported (`unlisted_pdf`).

Every problem is a `PubIssue` with the file and entry key; nothing stops the batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.sources.namemerge import EvidenceResolver, NameMerge, Refusal
from academiceval.sources.publist import PubEntry, PubIssue, find_lists, read_list

TITLE_MATCH = 0.8  # printed title vs entry title, normalized similarity
ABSTRACT_MATCH = 0.85  # rescues a retitled version whose abstract is the entry's
FUZZY_TITLE = 0.9  # attaching a PDF that no file field names, by its parsed title
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>]+", re.I)


@dataclass
class Attached:
    key: str
    paper_id: str
    pdf: str
    how: str  # "file", "doi", "title"
    title_similarity: float
    stored: bool = True


@dataclass
class PubImportReport:
    lists: list[str] = field(default_factory=list)
    entries: int = 0
    stored_meta: int = 0
    pdfs_found: int = 0
    attached: list[Attached] = field(default_factory=list)
    metadata_only: list[str] = field(default_factory=list)
    issues: list[PubIssue] = field(default_factory=list)
    merges: list[NameMerge] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in self.issues:
            out[i.code] = out.get(i.code, 0) + 1
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "lists": self.lists,
            "entries": self.entries,
            "stored_meta": self.stored_meta,
            "pdfs_found": self.pdfs_found,
            "attached": [a.__dict__ for a in self.attached],
            "metadata_only": self.metadata_only,
            "issues": [i.__dict__ for i in self.issues],
            "merges": [m.__dict__ for m in self.merges],
            "refused": [r.__dict__ for r in self.refused],
        }


def _inside(root: Path, rel: str) -> Path | None:
    """`rel` resolved under `root`, or None when it leaves the folder (absolute, `..`, symlink outside)."""
    cand = (root / rel).resolve() if not Path(rel).is_absolute() else Path(rel).resolve()
    return cand if cand.is_relative_to(root.resolve()) else None


def locate_files(entries: list[PubEntry], root: Path, pdfs: list[Path]) -> tuple[dict[str, Path], list[PubIssue]]:
    """Entry key → PDF named by its `file` field. Looked up relative to the list's folder, then by file name
    among the PDFs under it (lists often name `x.pdf` for `papers/x.pdf`)."""
    by_name: dict[str, list[Path]] = {}
    for p in pdfs:
        by_name.setdefault(p.name.lower(), []).append(p)
    found: dict[str, Path] = {}
    issues: list[PubIssue] = []
    for e in entries:
        for f in e.files:
            if not f.lower().endswith(".pdf"):
                continue
            path = _inside(root, f)
            if path is None:
                issues.append(
                    PubIssue(
                        e.source_file, e.key, "unsafe_file", f"file field {f!r} points outside {root}: refused", e.line
                    )
                )
                continue
            if not path.is_file():
                same = by_name.get(Path(f).name.lower(), [])
                path = same[0] if len(same) == 1 else None
            if path is None:
                issues.append(
                    PubIssue(e.source_file, e.key, "file_missing", f"file {f!r} not found under {root}", e.line)
                )
                continue
            found[e.key] = path
            break
    return found, issues


def _first_page_dois(path: Path) -> set[str]:
    import pymupdf

    try:
        with pymupdf.open(path) as doc:
            text = doc[0].get_text() if doc.page_count else ""
    except Exception:
        return set()
    return {m.group(0).rstrip(".,;)").lower() for m in _DOI.finditer(text)}


def import_publist(
    ws,  # type: ignore[no-untyped-def]  # store.workspace.Workspace
    root: str | Path,
    *,
    category: str | None = None,
    parse: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> PubImportReport:
    """Read the lists in `root` (a folder, or one list file), attach PDFs, store metadata and parsed papers."""
    from academiceval.papers.errors import PaperError
    from academiceval.papers.parse import PARSER_VERSION, parse_pdf, sha256_file
    from academiceval.papers.quality import similarity

    root = Path(root)
    folder = root.parent if root.is_file() else root
    category = category or folder.name
    report = PubImportReport()
    entries: list[PubEntry] = []
    seen: set[str] = set()
    for lst in find_lists(root):
        pl = read_list(lst)
        report.lists.append(str(lst))
        report.issues.extend(pl.issues)
        for e in pl.entries:
            if e.paper_id in seen:
                report.issues.append(
                    PubIssue(e.source_file, e.key, "duplicate_key", f"{e.paper_id} listed twice", e.line)
                )
                continue
            seen.add(e.paper_id)
            entries.append(e)
    report.entries = len(entries)
    pdfs = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    report.pdfs_found = len(pdfs)
    by_file, issues = locate_files(entries, folder, pdfs)
    report.issues.extend(issues)
    how = dict.fromkeys(by_file, "file")
    claimed = {p.resolve() for p in by_file.values()}
    # DOI printed on the first page of a PDF no file field names
    by_doi = {e.doi: e for e in entries if e.doi and e.key not in by_file}
    unclaimed = [p for p in pdfs if p.resolve() not in claimed]
    if by_doi:
        for p in list(unclaimed):
            hit = next((by_doi[d] for d in _first_page_dois(p) if d in by_doi and by_doi[d].key not in by_file), None)
            if hit is not None:
                by_file[hit.key], how[hit.key] = p, "doi"
                claimed.add(p.resolve())
                unclaimed.remove(p)
    parsed: dict[Path, object] = {}

    def parsed_of(p: Path):  # type: ignore[no-untyped-def]
        if p not in parsed:
            sha = sha256_file(p)
            old = ws.get_paper(sha)
            if old is not None and old.parser_version == PARSER_VERSION:
                parsed[p] = old
            else:
                try:
                    parsed[p] = parse_pdf(p, paper_id=sha)
                except PaperError as exc:
                    parsed[p] = exc
        return parsed[p]

    todo = len(by_file) + len(unclaimed)
    done = 0
    if parse:
        # parsed title of a PDF nobody names
        open_entries = {e.key: e for e in entries if e.key not in by_file}
        for p in list(unclaimed):
            paper = parsed_of(p)
            done += 1
            if progress:
                progress("matching PDFs", done, todo)
            if isinstance(paper, Exception) or not open_entries:
                continue
            best = max(open_entries.values(), key=lambda e: similarity(paper.title, e.title))
            if similarity(paper.title, best.title) >= FUZZY_TITLE:
                by_file[best.key], how[best.key] = p, "title"
                unclaimed.remove(p)
                del open_entries[best.key]
    for p in unclaimed:
        report.issues.append(PubIssue(str(p), None, "unlisted_pdf", f"{p.name}: no entry in the list names this PDF"))
    resolver = EvidenceResolver()
    for e in entries:
        resolver.observe(e.paper_id, e.authors)
    resolver.solve()
    report.merges, report.refused = resolver.merges(), resolver.refused()
    metas = []
    for e in entries:
        e.authors = resolver.apply(e.authors)
        metas.append(e.to_meta(category=category))
    report.stored_meta = ws.upsert_meta(metas)
    keyed = {e.key: e for e in entries}
    for key, p in sorted(by_file.items()):
        e = keyed[key]
        if not parse:
            report.attached.append(Attached(key, e.paper_id, str(p), how[key], float("nan"), stored=False))
            continue
        paper = parsed_of(p)
        if how[key] != "title":
            done += 1
            if progress:
                progress("parsing PDFs", done, todo)
        if isinstance(paper, Exception):
            code = getattr(paper, "code", "pdf_error")
            report.issues.append(PubIssue(str(p), key, "pdf_error", f"{p.name}: {code}: {paper}", e.line))
            continue
        ts = similarity(paper.title, e.title)
        if ts < TITLE_MATCH and not (e.abstract and similarity(paper.abstract, e.abstract) >= ABSTRACT_MATCH):
            report.issues.append(
                PubIssue(
                    str(p),
                    key,
                    "title_mismatch",
                    f"{p.name} prints the title {paper.title[:80]!r}, not the entry's {e.title[:80]!r} "
                    f"(similarity {ts:.2f}; abstracts differ too): not attached",
                    e.line,
                )
            )
            continue
        ws.put_paper(paper.model_copy(update={"arxiv_id": e.paper_id}), str(p))
        report.attached.append(Attached(key, e.paper_id, str(p), how[key], round(ts, 3)))
    attached = {a.key for a in report.attached}
    report.metadata_only = sorted(e.key for e in entries if e.key not in attached)
    ws.put_doc(f"publist.import.{category}", report.to_json())
    return report
