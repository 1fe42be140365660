"""Parser quality over the real PDFs in ../shared/corpus/pdf, against metadata and LaTeX ground truth.

Prints one line per paper (title similarity, abstract similarity, canonical sections found vs PDF_CHECK.tsv,
references parsed, LaTeX headings/bibliography where available) and then the totals against the targets:
  * normalized title similarity >= 0.95 on >= 90% of the arXiv PDFs
  * abstract similarity >= 0.90 wherever a metadata (or LaTeX) abstract exists
  * Introduction found in every paper that has one (PDF_CHECK.tsv)
  * reference counts within 10% of the LaTeX bibliography

With the lab publication list (`--lab`, default on; `--only lab|arxiv`): the 54 journal-layout PDFs of
../shared/corpus/lab_publications/comp-physics against their BibTeX entries (title, abstract; read with
`sources.publist`, which the parser never sees), and whether an Introduction heading was found where the PDF's
text has an "Introduction" line. Targets: titles >= 0.95 on >= 52/54, abstracts >= 0.90 on >= 90% of the
entries that have one, Introduction found wherever present.

Usage: python benchmarks/ingest_quality.py [--corpus DIR] [--quick] [--verbose] [--only lab|arxiv]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from academiceval.papers import parse_pdf
from academiceval.papers.errors import PaperError
from academiceval.papers.quality import expected_roles, load_truth, similarity

REPO = Path(__file__).resolve().parents[1]
ROLES = ("introduction", "related_work", "conclusion", "references")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--quick", action="store_true", help="only the first 12 PDFs")
    ap.add_argument("--verbose", action="store_true", help="print misses in detail")
    ap.add_argument("--only", choices=("lab", "arxiv"), default=None, help="only one of the two PDF sets")
    args = ap.parse_args()
    if args.only != "arxiv":
        lab(args.corpus / "lab_publications" / "comp-physics", quick=args.quick, verbose=args.verbose)
        if args.only == "lab":
            return 0
        print()
    truths = [t for t in load_truth(args.corpus) if t.kind != "pdf:partial"]
    if args.quick:
        truths = truths[:12]
    t0 = time.perf_counter()
    title_rows: list[float] = []
    abstract_rows: list[float] = []
    intro_need = intro_hit = 0
    role_need = role_hit = 0
    latex_rows: list[tuple[str, float, int, int]] = []
    failures = 0
    print("sections: 'intro' found as PDF_CHECK.tsv expects, 'INTRO!' expected but missed, 'relat+' found where")
    print("PDF_CHECK.tsv has none, '-' neither; title/abstr = normalized similarity to metadata (nan: none known)")
    print(f"{'paper':44} {'title':>5} {'abstr':>5} {'sections (found/PDF_CHECK)':28} {'refs':>4} warnings")
    for t in truths:
        name = t.path.name
        try:
            paper = parse_pdf(t.path)
        except PaperError as exc:
            failures += 1
            print(f"{name:44} FAILED {exc.code}: {exc.message}")
            continue
        ts = similarity(paper.title, t.title) if t.title else float("nan")
        if t.title and t.arxiv_id:
            title_rows.append(ts)
        ab = float("nan")
        if t.abstract:
            ab = similarity(paper.abstract, t.abstract)
            abstract_rows.append(ab)
        want = expected_roles(t.check)
        have = {s.role.value for s in paper.sections if s.role}
        role_need += len(want)
        role_hit += len(want & have)
        if "introduction" in want:
            intro_need += 1
            intro_hit += "introduction" in have
        marks = " ".join(
            (r[:5] if r in have else r[:5].upper() + "!") if r in want else (r[:5] + "+" if r in have else "-")
            for r in ROLES
        )
        print(f"{name:44} {ts:5.2f} {ab:5.2f} {marks:28} {len(paper.references):4} {len(paper.warnings)}")
        if args.verbose and (ts < 0.95 or (t.abstract and ab < 0.9) or want - have):
            print(f"    title: {paper.title!r}\n    truth: {t.title!r}")
            if t.abstract and ab < 0.9:
                print(f"    abstract: {paper.abstract[:160]!r}")
            print(f"    headings: {[s.heading[:30] for s in paper.sections if s.level == 1]}")
        if t.latex_sections or t.latex_references:
            found = [s.heading for s in paper.sections]
            hits = sum(1 for h in t.latex_sections if max((similarity(h, f) for f in found), default=0) >= 0.9)
            ratio = len(paper.references) / t.latex_references if t.latex_references else float("nan")
            latex_rows.append((name, ratio, hits, len(t.latex_sections)))
            print(
                f"    LaTeX: headings {hits}/{len(t.latex_sections)} \\section titles found; references "
                f"{len(paper.references)} parsed vs {t.latex_references} bibliography entries (ratio {ratio:.2f})"
            )
    elapsed = time.perf_counter() - t0
    n_title_ok = sum(1 for s in title_rows if s >= 0.95)
    title_share = n_title_ok / len(title_rows) if title_rows else 0.0
    abs_ok = sum(1 for s in abstract_rows if s >= 0.90)
    ref_ok = sum(1 for _, r, _, _ in latex_rows if abs(r - 1) <= 0.10)
    head_hits = sum(h for _, _, h, _ in latex_rows)
    head_all = sum(n for _, _, _, n in latex_rows)
    print()
    print(f"papers parsed: {len(truths) - failures}/{len(truths)} in {elapsed:.1f}s")
    print(
        f"title similarity >= 0.95 on {n_title_ok}/{len(title_rows)} arXiv PDFs = {title_share:.0%} "
        f"(target >= 90%): {'MET' if title_share >= 0.9 else 'NOT MET'}"
    )
    print(
        f"abstract similarity >= 0.90 on {abs_ok}/{len(abstract_rows)} papers with a metadata/LaTeX abstract "
        f"(target: all): {'MET' if abs_ok == len(abstract_rows) else 'NOT MET'}"
    )
    print(
        f"introduction found in {intro_hit}/{intro_need} papers that have one (target: all): "
        f"{'MET' if intro_hit == intro_need else 'NOT MET'}"
    )
    print(
        f"canonical sections (intro/related/conclusion/references) found: {role_hit}/{role_need} = "
        f"{role_hit / max(role_need, 1):.0%}"
    )
    print(
        f"LaTeX papers: \\section headings found {head_hits}/{head_all}; reference counts within 10% on "
        f"{ref_ok}/{len(latex_rows)} (target: all): {'MET' if ref_ok == len(latex_rows) else 'NOT MET'}"
    )
    return 0


_INTRO_LINE = re.compile(r"^\s*(?:\d{1,2}\.?|[IV]{1,3}\.)?\s*introduction\s*$", re.I | re.M)


def _has_intro(path: Path) -> bool:
    """Ground truth for "has an Introduction": a line of the PDF's own text reading "(1.) Introduction"."""
    import pymupdf

    with pymupdf.open(path) as doc:
        return any(_INTRO_LINE.search(doc[i].get_text()) for i in range(min(4, doc.page_count)))


def lab(folder: Path, *, quick: bool = False, verbose: bool = False) -> None:
    """The lab publication list: journal layouts against the list's own titles and abstracts."""
    from academiceval.sources.publist import find_lists, read_list

    entries = {}
    for lst in find_lists(folder):
        for e in read_list(lst).entries:
            for f in e.files:
                entries.setdefault(Path(f).name, e)
    pdfs = sorted((folder / "papers").glob("*.pdf"))
    if quick:
        pdfs = pdfs[:12]
    print(f"lab publication list {folder.name}: {len(pdfs)} PDFs (ground truth: the list's BibTeX entries)")
    print(f"{'paper':30} {'title':>5} {'abstr':>5} intro")
    t0 = time.perf_counter()
    n_title = n_abs = abs_ok = intro_need = intro_hit = 0
    misses: list[str] = []
    for p in pdfs:
        e = entries.get(p.name)
        if e is None:
            print(f"{p.name:30} (no entry names this PDF)")
            continue
        try:
            paper = parse_pdf(p)
        except PaperError as exc:
            print(f"{p.name:30} FAILED {exc.code}")
            continue
        ts = similarity(paper.title, e.title)
        n_title += ts >= 0.95
        ab = float("nan")
        if e.abstract:
            ab = similarity(paper.abstract, e.abstract)
            n_abs += 1
            abs_ok += ab >= 0.90
        has = _has_intro(p)
        found = any(s.role and s.role.value == "introduction" for s in paper.sections)
        intro_need += has
        intro_hit += has and found
        mark = ("intro" if found else "INTRO!") if has else ("intro+" if found else "-")
        print(f"{p.stem:30} {ts:5.2f} {ab:5.2f} {mark}")
        if ts < 0.95:
            misses.append(f"    {p.stem}: printed {paper.title!r}\n    {'':{len(p.stem)}}  entry   {e.title!r}")
        if verbose and e.abstract and ab < 0.9:
            print(f"    abstract: {paper.abstract[:160]!r}")
    total = len(pdfs)
    print(f"\nlab papers parsed in {time.perf_counter() - t0:.1f}s")
    print(
        f"title similarity >= 0.95 on {n_title}/{total} (target >= {total - 2}/{total}): "
        f"{'MET' if n_title >= total - 2 else 'NOT MET'}"
    )
    if misses:
        print("  titles below 0.95 (the parser's title vs the list's):")
        print("\n".join(misses))
    share = abs_ok / n_abs if n_abs else 0.0
    print(
        f"abstract similarity >= 0.90 on {abs_ok}/{n_abs} entries with an abstract = {share:.0%} (target >= 90%): "
        f"{'MET' if share >= 0.9 else 'NOT MET'}"
    )
    print(
        f"introduction found in {intro_hit}/{intro_need} PDFs whose text has an Introduction line (target: all): "
        f"{'MET' if intro_hit == intro_need else 'NOT MET'}"
    )


if __name__ == "__main__":
    sys.exit(main())
