"""Front matter on PDFs the parser was not developed on: title / abstract / section accuracy (issue 23 item 10).

The ground truth is `benchmarks/frontmatter_unseen.json`: 48 arXiv PDFs from two public paper-collection
repositories, read by hand (title, first sentence of the abstract, top-level section headings of the main body).
No PDF is kept in the repository or used by a test: each entry names the repository, commit and path the PDF came
from and its sha256. The PDFs are looked for in `--pdfs DIR` (default /tmp/frontmatter-pdfs) by file name; a
missing one is extracted from a local git snapshot of its repository (`--mirror DIR`, laid out as
`OWNER+NAME/repo`, the way the search tool's `fetch` leaves it) with `git cat-file` and checked by sha256.

The 48 PDFs of set A were split into a tuning half and a held-out half (sorted by sha256, alternating) before any
result was looked at; parser changes were made looking at the tuning half only (and at the titles of the other
~300 PDFs of the tuning repository, outside this file). Set B ("heldout-b": 24 PDFs of August 2026 from three
more repositories) was fetched and labelled (titles and first abstract sentences) after the changes were made.

Measures, per half:
  * title: normalized similarity (`papers.quality.similarity`) >= 0.95
  * abstract: the parsed abstract starts with the first sentence (similarity >= 0.90 over that many characters)
  * sections: every ground-truth heading found among the parsed level-1 headings up to the references
    (similarity >= 0.85), and no other level-1 heading in the main body (unnumbered acknowledgement, limitation,
    ethics, impact and contribution boxes are not counted either way)

`--baseline-src DIR` also runs a second parser tree (e.g. main's `src`, extracted with
`git archive COMMIT src | tar -x -C DIR/..`) in a subprocess on the same PDFs and prints both side by side.

Usage: python benchmarks/frontmatter_unseen.py [--pdfs DIR] [--mirror DIR] [--half tuning|heldout]
           [--baseline-src DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRUTH = REPO / "benchmarks" / "frontmatter_unseen.json"
NOT_COUNTED = ("acknowledg", "limitation", "ethic", "impact", "contribution", "reproducib", "author", "funding")


def locate(entry: dict, pdfs: Path, mirror: Path) -> Path | None:
    """The PDF of one entry: from `pdfs`, else extracted from the repository snapshot; None if neither has it."""
    path = pdfs / entry["file"]
    if not path.exists():
        gitdir = mirror / entry["repo"].replace("/", "+") / "repo"
        if not gitdir.exists():
            return None
        out = subprocess.run(
            ["git", "--git-dir", str(gitdir), "cat-file", "blob", entry["git_blob"]], capture_output=True, check=False
        )
        if out.returncode != 0:
            return None
        pdfs.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out.stdout)
    if hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
        return None
    return path


def parse_all(paths: list[str]) -> dict[str, dict]:
    """Title, abstract and main-body level-1 headings (up to the references) of each PDF, parsed by the importable
    parser."""
    from academiceval.papers import parse_pdf  # the tree on sys.path: ours, or the baseline's in a subprocess

    out: dict[str, dict] = {}
    for p in paths:
        try:
            paper = parse_pdf(p)
        except Exception as exc:  # a parser failure is a miss on every measure, not a crash of the benchmark
            out[Path(p).name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        heads: list[str] = []
        for s in paper.sections:
            role = s.role.value if s.role is not None else None
            if role == "appendix":
                continue  # not the main body (an appendix may come before the references)
            if s.level == 1:
                heads.append(s.heading)
            if role == "references":
                break
        out[Path(p).name] = {"title": paper.title, "abstract": paper.abstract, "sections": heads}
    return out


def score(entry: dict, got: dict) -> dict:
    from academiceval.papers.quality import normalize, similarity

    if "error" in got:
        return {"title": False, "abstract": False, "sections": False, "recall": 0.0, "extra": [], "missed": []}
    title_ok = similarity(got["title"], entry["title"]) >= 0.95
    first = normalize(entry["abstract_first_sentence"])
    abstract_ok = similarity(first, normalize(got["abstract"])[: len(first)]) >= 0.90
    truth = entry["sections"] or []  # None: headings not labelled for this PDF (set B)
    found = [h for h in got["sections"] if h.strip()]
    missed = [g for g in truth if not any(_same(g, h) for h in found)]
    extra = [h for h in found if not any(_same(g, h) for g in truth) and not any(w in h.lower() for w in NOT_COUNTED)]
    if not truth:
        extra = []
    recall = 1 - len(missed) / len(truth) if truth else 1.0
    return {
        "title": title_ok,
        "abstract": abstract_ok,
        "sections": not missed and not extra,
        "recall": recall,
        "missed": missed,
        "extra": extra,
    }


def _same(truth: str, parsed: str) -> bool:
    from academiceval.papers.quality import normalize, similarity

    a, b = normalize(truth), normalize(parsed)
    return bool(a) and (similarity(a, b) >= 0.85 or (len(a) >= 12 and b.startswith(a)))


def run_baseline(src: Path, paths: list[str]) -> dict[str, dict]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run(
        [sys.executable, __file__, "--emit-json", *paths], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout)


def summary(name: str, entries: list[dict], results: dict[str, dict]) -> dict[str, str]:
    rows = [score(e, results.get(e["file"], {"error": "not parsed"})) for e in entries]
    n = len(rows)
    labelled = [(r, e) for r, e in zip(rows, entries, strict=True) if e["sections"]]
    need = sum(len(e["sections"]) for _, e in labelled)
    hit = sum(round(r["recall"] * len(e["sections"])) for r, e in labelled)
    return {
        "parser": name,
        "title": f"{sum(r['title'] for r in rows)}/{n}",
        "abstract": f"{sum(r['abstract'] for r in rows)}/{n}",
        "sections": f"{sum(r['sections'] for r, _ in labelled)}/{len(labelled)}" if labelled else "-",
        "headings": f"{hit}/{need}" if labelled else "-",
        "extra": str(sum(len(r["extra"]) for r, _ in labelled)) if labelled else "-",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, default=Path("/tmp/frontmatter-pdfs"))
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--half", choices=("tuning", "heldout", "heldout-b"), default=None)
    ap.add_argument("--baseline-src", type=Path, default=None, help="another parser's src/ dir, run in a subprocess")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--emit-json", nargs="*", help=argparse.SUPPRESS)  # internal: the baseline subprocess
    args = ap.parse_args()
    if args.emit_json is not None:
        json.dump(parse_all(args.emit_json), sys.stdout)
        return 0
    truth = json.loads(TRUTH.read_text())["papers"]
    entries, missing = [], []
    for e in truth:
        if args.half and e["half"] != args.half:
            continue
        path = locate(e, args.pdfs, args.mirror)
        (entries if path else missing).append((e, path))
    if missing:
        print(f"{len(missing)} PDFs not available (neither in {args.pdfs} nor in a snapshot under {args.mirror}):")
        for e, _ in missing:
            print(f"  {e['file']}: {e['repo']} {e['commit'][:10]} {e['path']}")
    paths = [str(p) for _, p in entries]
    ours = parse_all(paths)
    parsers = [("this tree", ours)]
    if args.baseline_src:
        parsers.insert(0, (f"baseline ({args.baseline_src})", run_baseline(args.baseline_src, paths)))
    if args.verbose:
        for e, _ in entries:
            for name, res in parsers:
                got = res.get(e["file"], {"error": "not parsed"})
                r = score(e, got)
                flags = "".join(c if r[k] else "-" for c, k in (("T", "title"), ("A", "abstract"), ("S", "sections")))
                print(f"{e['half']:9} {e['file']:18} {flags} [{name[:8]}]", end="")
                if "error" in got:
                    print(f" ERROR {got['error']}")
                    continue
                print()
                if not r["title"]:
                    print(f"    title: {got['title'][:110]!r}\n    truth: {e['title'][:110]!r}")
                if not r["abstract"]:
                    print(f"    abstract: {got['abstract'][:110]!r}")
                if r["missed"] or r["extra"]:
                    print(f"    missed: {r['missed']}  extra: {r['extra']}")
    print()
    print(f"{'half':9} {'parser':44} {'title':>7} {'abstract':>8} {'sections':>8} {'headings':>9} {'extra':>5}")
    for half in ("tuning", "heldout", "heldout-b"):
        sel = [e for e, _ in entries if e["half"] == half]
        if not sel:
            continue
        for name, res in parsers:
            s = summary(name, sel, res)
            print(
                f"{half:9} {name[:44]:44} {s['title']:>7} {s['abstract']:>8} {s['sections']:>8} "
                f"{s['headings']:>9} {s['extra']:>5}"
            )
    print("title: similarity >= 0.95; abstract: starts with the first sentence; sections: all headings, no extra;")
    print("headings: ground-truth headings found; extra: other level-1 headings before the references")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
