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

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.errors import ConfigError
from academiceval.papers.errors import PaperError
from academiceval.papers.parse import PARSER_VERSION, parse_pdf
from academiceval.papers.quality import similarity
from academiceval.sources.namemerge import EvidenceResolver, NameMerge, Refusal
from academiceval.sources.publist import PubEntry, PubIssue, find_lists, read_list
from academiceval.store.hashing import sha256_file

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
    """`rel` under `root`, or None when the written path leaves the folder (absolute elsewhere, `..`). Decided on
    the path as written (lexically): a symlink the owner placed inside the folder is theirs to place."""
    base = Path(os.path.normpath(os.path.abspath(root)))
    cand = Path(os.path.normpath(os.path.join(base, os.path.expanduser(rel))))
    return cand if cand.is_relative_to(base) else None


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
                        e.source_file,
                        e.key,
                        "unsafe_file",
                        f"file field {f!r} points outside {root}: refused",
                        e.line,
                        hint="put the PDF inside the list's folder and name it relative to it",
                    )
                )
                continue
            if not path.is_file():
                same = by_name.get(Path(f).name.lower(), [])
                path = same[0] if len(same) == 1 else None
            if path is None:
                issues.append(
                    PubIssue(
                        e.source_file,
                        e.key,
                        "file_missing",
                        f"file {f!r} not found under {root}",
                        e.line,
                        hint="copy the PDF into the folder, or fix the file field",
                    )
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


def _file_identity(p: Path) -> str:
    """The bytes' sha256 (two copies of one PDF are one paper), or the resolved path if it cannot be read."""
    try:
        return sha256_file(p)
    except OSError:
        return str(p.resolve())


def _one_entry_per_pdf(
    chosen: dict[str, tuple[Path, str, float]],
    order: dict[str, int],
    keyed: dict[str, PubEntry],
    report: PubImportReport,
) -> None:
    """Two entries that would get the same PDF (the same file, or a copy of it) used to keep one paper without a
    word (the second replaced the first). The PDF goes to the entry whose title it prints best (then the first
    listed); each other entry keeps its metadata only, and that is reported."""
    groups: dict[str, list[str]] = {}
    for key, (p, _, _) in chosen.items():
        groups.setdefault(_file_identity(p), []).append(key)
    for keys in groups.values():
        if len(keys) < 2:
            continue
        keys.sort(key=lambda k: (-(chosen[k][2] if chosen[k][2] == chosen[k][2] else -1.0), order[k]))
        keep = keys[0]
        for k in keys[1:]:
            p = chosen.pop(k)[0]
            report.issues.append(
                PubIssue(
                    str(p),
                    k,
                    "duplicate_pdf",
                    f"{p.name} is also the PDF of {keep} (attached there): this entry keeps its metadata only",
                    keyed[k].line,
                    hint="give this entry its own PDF, or delete it if it is the same paper",
                )
            )


def _distinct_entries(lists: list[Path], report: PubImportReport) -> list[PubEntry]:
    """The entries of every list, each paper once: a second entry with the same id (arXiv id or key) or the
    same DOI is reported, naming the first, and skipped — never dropped without a word."""
    entries: list[PubEntry] = []
    by_id: dict[str, PubEntry] = {}
    by_key: dict[str, PubEntry] = {}
    by_doi: dict[str, PubEntry] = {}
    for lst in lists:
        pl = read_list(lst)
        report.lists.append(str(lst))
        report.issues.extend(pl.issues)
        for e in pl.entries:
            first = by_id.get(e.paper_id) or by_key.get(e.key)
            what = f"{e.paper_id} is listed again" if e.paper_id in by_id else f"entry key {e.key!r} is used again"
            code = "duplicate_key"
            if first is None and e.doi and e.doi in by_doi:
                first, what, code = by_doi[e.doi], f"DOI {e.doi} is listed again", "duplicate_doi"
            if first is not None:
                where = f"{Path(first.source_file).name}:{first.line}" if first.line else Path(first.source_file).name
                report.issues.append(
                    PubIssue(
                        e.source_file,
                        e.key,
                        code,
                        f"{what} (first as {first.key} at {where}): this entry is skipped",
                        e.line,
                        hint="delete one of the two entries, or give them different ids",
                    )
                )
                continue
            by_id[e.paper_id] = by_key[e.key] = e
            if e.doi:
                by_doi[e.doi] = e
            entries.append(e)
    return entries


def import_publist(
    ws,  # store.workspace.Workspace
    root: str | Path,
    *,
    category: str | None = None,
    parse: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> PubImportReport:
    """Read the lists in `root` (a folder, or one list file), attach PDFs, store metadata and parsed papers."""
    root = Path(root)
    folder = root.parent if root.is_file() else root
    category = category or folder.name
    report = PubImportReport()
    lists = find_lists(root)
    if not lists:
        raise ConfigError(
            "no publication list here (a *.bib or CSL-JSON *.json file)",
            source=str(root),
            hint="put your BibTeX or CSL-JSON export in this folder, or give the list file itself",
        )
    entries = _distinct_entries(lists, report)
    report.entries = len(entries)
    keyed = {e.key: e for e in entries}
    pdfs = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    report.pdfs_found = len(pdfs)
    by_file, issues = locate_files(entries, folder, pdfs)
    report.issues.extend(issues)
    parsed: dict[Path, object] = {}

    def parsed_of(p: Path):
        # heavy (pymupdf and its layout models, ~2 s): imported only when a PDF is parsed, not for --no-parse

        if p not in parsed:
            try:
                sha = sha256_file(p)
            except OSError as exc:  # unreadable (permissions, a broken link): a pdf_error for its entry
                parsed[p] = exc
                return exc
            old = ws.get_paper(sha)
            if old is not None and old.parser_version == PARSER_VERSION:
                parsed[p] = old
            else:
                try:
                    parsed[p] = parse_pdf(p, paper_id=sha)
                except PaperError as exc:
                    parsed[p] = exc
        return parsed[p]

    done = 0
    todo = len(pdfs)

    def tick(stage: str) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(stage, min(done, todo), todo)

    chosen: dict[str, tuple[Path, str, float]] = {}  # entry key -> (pdf, how, title similarity)

    def verify(e: PubEntry, p: Path, how: str) -> bool:
        """Parse the PDF and check it is the entry's paper; record a mismatch or parse failure."""
        if not parse:
            chosen[e.key] = (p, how, float("nan"))
            return True
        paper = parsed_of(p)
        if isinstance(paper, Exception):
            code = getattr(paper, "code", None) or type(paper).__name__
            why = getattr(paper, "strerror", None) or str(paper)
            hint = getattr(paper, "hint", None) or "check the PDF opens; the entry is kept as metadata only"
            report.issues.append(PubIssue(str(p), e.key, "pdf_error", f"{p.name}: {code}: {why}", e.line, hint=hint))
            return False
        ts = similarity(paper.title, e.title)
        if ts < TITLE_MATCH and not (e.abstract and similarity(paper.abstract, e.abstract) >= ABSTRACT_MATCH):
            report.issues.append(
                PubIssue(
                    str(p),
                    e.key,
                    "title_mismatch",
                    f"{p.name} prints the title {paper.title[:80]!r}, not the entry's {e.title[:80]!r} "
                    f"(similarity {ts:.2f}; abstracts differ too): not attached",
                    e.line,
                    hint="name this paper's own PDF in the file field",
                )
            )
            return False
        chosen[e.key] = (p, how, round(ts, 3))
        return True

    taken: set[Path] = set()
    # 1. file fields
    for key, p in sorted(by_file.items()):
        tick("checking PDFs named in the list")
        if verify(keyed[key], p, "file"):
            taken.add(p.resolve())
    pool = [p for p in pdfs if p.resolve() not in taken]  # includes PDFs that failed their entry's check
    # 2. a DOI printed on the first page
    by_doi = {e.doi: e for e in entries if e.doi and e.key not in chosen}
    if by_doi:
        for p in list(pool):
            hit = next((by_doi[d] for d in sorted(_first_page_dois(p)) if d in by_doi), None)
            if hit is not None and hit.key not in chosen and verify(hit, p, "doi"):
                pool.remove(p)
    # 3. the parsed title of a PDF nobody names
    if parse:
        for p in list(pool):
            tick("matching unnamed PDFs by title")
            open_entries = [e for e in entries if e.key not in chosen]
            paper = parsed_of(p)
            if isinstance(paper, Exception) or not open_entries:
                continue
            best = max(open_entries, key=lambda e: similarity(paper.title, e.title))
            if similarity(paper.title, best.title) >= FUZZY_TITLE and verify(best, p, "title"):
                pool.remove(p)
    for p in pool:
        report.issues.append(
            PubIssue(
                str(p),
                None,
                "unlisted_pdf",
                f"{p.name}: no entry in the list names this PDF",
                hint="name it in its entry's file field, or move it out of the folder",
            )
        )
    _one_entry_per_pdf(chosen, {e.key: i for i, e in enumerate(entries)}, keyed, report)
    # 4. names, metadata, papers
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
    for key, (p, how, ts) in sorted(chosen.items()):
        e = keyed[key]
        stored = parse and not isinstance(parsed.get(p), Exception)
        if stored:
            ws.put_paper(parsed[p].model_copy(update={"arxiv_id": e.paper_id}), str(p))
        report.attached.append(Attached(key, e.paper_id, str(p), how, ts, stored=stored))
    attached = {a.key for a in report.attached if a.stored}
    report.metadata_only = sorted(e.key for e in entries if e.key not in attached)
    ws.put_doc(f"publist.import.{category}", report.to_json())
    return report
