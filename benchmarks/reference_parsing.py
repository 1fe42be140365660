"""Reference parsers side by side on the hand-checked sample (tests/papers/data/reference_gold.jsonl).

Contenders, all given the same entries:
- `baseline`: the free-string parser as it is on a git ref (default `main`: `papers.references.parse_reference`
  before issue 25), loaded from that commit's source, on every entry's one-line text;
- `refstring`: `papers.refstring.parse_reference_string` on the same one-line text;
- `readers`: what the project uses per kind — `refstring` for PDF and unarXive strings, the block readers for
  SCALAR markdown (`bib_markdown`) and LaTeX `\\bibitem`s (`bib_latex`);
- `refextract` (INSPIRE's rule-based extractor, GPL-2.0-or-later, so not a dependency of this Apache-2.0 package):
  measured only when importable, e.g. `pip install --target /tmp/x refextract` and `PYTHONPATH=/tmp/x`.

Prints, per contender and source kind, the share of entries whose title / first author / year / arXiv id / DOI is
right (title: normalised similarity >= 0.95 with the hand-checked one, or none where the style prints none).

    python benchmarks/reference_parsing.py [--corpus ../shared/corpus] [--baseline-ref main] [--misses readers]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from academiceval.papers.bibliography import BibEntry, clean_title, find_doi
from academiceval.papers.refstring import parse_reference_string
from academiceval.testing.reference_gold import FIELDS, GoldItem, by_kind, entry_fields, load_gold, score

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "papers" / "data" / "reference_gold.jsonl"
KINDS = ("pdf", "unarxive", "markdown", "bibitem", "all")


def baseline_parser(ref: str) -> Callable[[GoldItem], dict[str, object]]:
    """`parse_reference` from papers/references.py at a git ref, run against the installed package's imports."""
    src = subprocess.run(
        ["git", "show", f"{ref}:src/academiceval/papers/references.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mod = types.ModuleType("baseline_references")
    exec(compile(src, f"{ref}:papers/references.py", "exec"), mod.__dict__)

    def parse(it: GoldItem) -> dict[str, object]:
        r = mod.parse_reference(0, None, it.raw)
        return {
            "title": r.title,
            "first_author": r.authors[0] if r.authors else None,
            "year": r.year,
            "arxiv_id": r.arxiv_id,
            "doi": getattr(r, "doi", None),
        }

    return parse


def refextract_parser() -> Callable[[GoldItem], dict[str, object]] | None:
    if importlib.util.find_spec("refextract") is None:
        return None
    from refextract import extract_references_from_string  # GPL; only when the user installed it for this run

    def parse(it: GoldItem) -> dict[str, object]:
        got = extract_references_from_string(it.raw)
        r = got[0] if got else {}
        title = (r.get("title") or [None])[0]
        author = (r.get("author") or [None])[0]
        year = (r.get("year") or [None])[0]
        rep = " ".join(r.get("reportnumber") or [])
        arxiv = parse_reference_string(rep).arxiv_id if rep else None
        doi = find_doi(" ".join(r.get("doi") or []))
        first = author.split(",")[0].split(" and ")[0].strip() if author else None
        return {
            "title": clean_title(title),
            "first_author": first,
            "year": int(year) if year and str(year).isdigit() else None,
            "arxiv_id": arxiv,
            "doi": doi,
        }

    return parse


def scalar_pairs(corpus: Path) -> list[tuple[str, BibEntry]]:
    """(SCALAR's title, our markdown entry) for every bib id SCALAR resolved, aligned by position and marker."""
    import json

    from academiceval.papers.bib_markdown import markdown_bibliography

    out = []
    for f in sorted(corpus.glob("samples/scalar_paper_obj_*/*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        entries = markdown_bibliography(d.get("markdown_content") or "")
        for bib, r in ((d.get("references") or {}).get("data") or {}).items():
            if not bib.removeprefix("bib.bib").isdigit():
                continue
            n = int(bib.removeprefix("bib.bib")) - 1
            if r.get("title") and 0 <= n < len(entries) and _same_marker(r.get("citation", ""), entries[n].key):
                out.append((str(r["title"]), entries[n]))
    return out


def _same_marker(a: str, b: str | None) -> bool:
    norm = lambda x: " ".join(x.replace("\\", "").split())  # noqa: E731
    return bool(b) and norm(a) == norm(b or "")


def title_ok(gold: str, got: object) -> bool:
    from academiceval.testing.reference_gold import field_ok

    return bool(field_ok("title", clean_title(gold), got))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--corpus", type=Path, default=Path(os.environ.get("ACADEMICEVAL_CORPUS", ROOT.parent / "shared" / "corpus"))
    )
    ap.add_argument("--baseline-ref", default="main")
    ap.add_argument("--misses", default=None, help="print the wrong fields of this contender")
    args = ap.parse_args()
    t0 = time.perf_counter()
    items = load_gold(GOLD, args.corpus)
    print(f"hand-checked entries: {len(items)} {by_kind(items)} (read in {time.perf_counter() - t0:.1f}s)")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    contenders: dict[str, Callable[[GoldItem], dict[str, object]]] = {
        f"baseline ({args.baseline_ref})": baseline_parser(args.baseline_ref),
        "refstring": lambda it: entry_fields(parse_reference_string(it.raw)),
        "readers": lambda it: entry_fields(it.structured),
    }
    rx = refextract_parser()
    if rx is not None:
        contenders["refextract"] = rx
    else:
        print("refextract: not importable here (GPL-2.0-or-later; install it into a separate --target to compare)")
    header = f"{'contender':22} {'kind':9} " + " ".join(f"{f:>12}" for f in FIELDS) + f" {'seconds':>8}"
    print(header)
    results = {}
    for name, parse in contenders.items():
        t = time.perf_counter()
        sc = score(items, parse)
        dt = time.perf_counter() - t
        results[name] = sc
        for kind in KINDS:
            cells = []
            for f in FIELDS:
                r = sc.rate(kind, f)
                cells.append(f"{r:12.2f}" if r is not None else f"{'-':>12}")
            print(f"{name:22} {kind:9} " + " ".join(cells) + (f" {dt:8.2f}" if kind == "all" else ""))
    print()
    print("held-out check: titles against SCALAR's own `references.data` titles (entries SCALAR linked to arXiv)")
    pairs = scalar_pairs(args.corpus)
    for name, parse in contenders.items():
        if name == "readers":
            ok = sum(title_ok(gold, e.title) for gold, e in pairs)
        else:
            ok = sum(title_ok(gold, parse(GoldItem("markdown", "", {}, e.raw, e)).get("title")) for gold, e in pairs)
        print(f"{name:22} titles right {ok}/{len(pairs)} = {ok / max(1, len(pairs)):.2f}")
    if args.misses:
        sc = results[next(k for k in results if k.startswith(args.misses))]
        for loc, f, g, got in sc.misses:
            print(f"  miss {loc} {f}: gold={g!r} got={got!r}")
    _ = BibEntry  # re-exported type for readers of this script
    sys.stdout.flush()


if __name__ == "__main__":
    main()
