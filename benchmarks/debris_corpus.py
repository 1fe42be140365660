"""Every debris detector over every section of every paper in the corpus, per source, before and after cleaning.

Sources: `pdf` (../shared/corpus/pdf, parsed), `lab-pdf` (the lab publication list's 54 PDFs), `unarxive` (the
unarXive sample), `scalar` (SCALAR question papers) and `scalar-ref` (the cited papers inside the objects),
`metadata` (titles and abstracts of the arXiv `.abs`, Kaggle and SCALAR metadata records: the title and abstract
labels), `latex-src` (paragraphs of the LaTeX sources, raw: the recall check of `latex_markup`).

What is scanned is what becomes labels and inputs: the body sections (roles as `papers.roles.assign_roles`
gives them; references, acknowledgements and appendices left out), plus abstracts and titles. "raw" is the text
as stored; "clean" is `papers.clean.clean_text` with the paper's source, the word check against the paper's own
vocabulary (as `rounds.tasks.prepare_paper` does). Cells: texts with the kind / occurrences.

Usage:
  python benchmarks/debris_corpus.py [--corpus DIR] [--cache FILE.json]          # the table
  python benchmarks/debris_corpus.py --samples KIND [--source S] [--after] [--n 20] # hits to read (precision)
  python benchmarks/debris_corpus.py --grep REGEX [--source S] [--n 20]            # raw matches (recall)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pickle
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from academiceval.papers.clean import DEBRIS_KINDS, clean_text, debris_counts, vocabulary
from academiceval.papers.roles import assign_roles
from academiceval.store.paper_models import NON_BODY_ROLES

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("pdf", "lab-pdf", "unarxive", "scalar", "scalar-ref", "metadata", "latex-src")


def _paper_texts(paper, src: str) -> list[dict]:
    paper, _ = assign_roles(paper)
    body = [s for s in paper.sections if s.role not in NON_BODY_ROLES and s.text.strip()]
    vocab = vocabulary([s.text for s in body] + [paper.abstract or ""])
    out = [
        {
            "src": src,
            "paper": paper.arxiv_id or paper.paper_id,
            "where": s.heading[:40],
            "family": paper.source,
            "text": s.text,
            "vocab": None,
        }
        for s in body
    ]
    if paper.abstract and src in ("pdf", "lab-pdf"):  # PDF-only papers: the abstract label is read from the page
        out.append(
            {
                "src": src,
                "paper": paper.arxiv_id or paper.paper_id,
                "where": "abstract",
                "family": paper.source,
                "text": paper.abstract,
                "vocab": None,
            }
        )
    for o in out:
        o["_vocab"] = vocab
    return out


def load(corpus: Path) -> list[dict]:
    from academiceval.papers import parse_pdf
    from academiceval.papers.errors import PaperError
    from academiceval.sources.mirror.scalar_papers import paper_object_to_records
    from academiceval.sources.mirror.unarxive import read_unarxive_lines

    texts: list[dict] = []
    for f in sorted((corpus / "samples" / "unarXive_sample").glob("*.jsonl")):
        with f.open() as fh:
            for r in read_unarxive_lines(iter(fh), path=str(f)):
                if getattr(r, "paper", None) is not None:
                    texts += _paper_texts(r.paper, "unarxive")
    for f in sorted(glob.glob(str(corpus / "samples" / "scalar_paper_obj_*" / "*.json"))):
        for r in paper_object_to_records(json.loads(Path(f).read_bytes()), path=f):
            if getattr(r, "paper", None) is not None:
                texts += _paper_texts(r.paper, "scalar" if r.paper.source == "scalar" else "scalar-ref")
    pdfs = (("pdf", "pdf/*.pdf"), ("pdf", "pdf/partial/*.pdf"), ("lab-pdf", "lab_publications/*/papers/*.pdf"))
    for src, pattern in pdfs:
        for f in sorted(corpus.glob(pattern)):
            try:
                texts += _paper_texts(parse_pdf(f), src)
            except PaperError:
                continue
    for t in _metadata(corpus):
        texts.append({**t, "src": "metadata", "family": "text", "_vocab": None})
    for t in _latex_sources(corpus):
        texts.append({**t, "src": "latex-src", "family": "text", "_vocab": None})
    return texts


def _metadata(corpus: Path) -> list[dict]:
    out = []
    for f in sorted((corpus / "metadata" / "arxiv_browse_abs").rglob("*.abs")):
        raw = f.read_text(errors="replace")
        title = re.search(r"^Title:\s*(.+?)\n(?=\w+:)", raw, re.M | re.S)
        parts = raw.split("\\\\")
        abstract = parts[2] if len(parts) >= 3 else ""
        if title:
            out.append({"paper": f.stem, "where": "title", "text": " ".join(title.group(1).split())})
        if abstract.strip():
            out.append({"paper": f.stem, "where": "abstract", "text": abstract.strip()})
    kaggle = corpus / "metadata" / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"
    for line in kaggle.read_text().splitlines():
        d = json.loads(line)
        out += [{"paper": d["id"], "where": k, "text": d[k].strip()} for k in ("title", "abstract") if d.get(k)]
    for d in json.loads((corpus / "metadata" / "scalar_iclr2025_metadata.json").read_text()):
        if isinstance(d, dict):
            out += [
                {"paper": str(d.get("arxiv_id") or d.get("id")), "where": k, "text": str(d[k]).strip()}
                for k in ("title", "abstract")
                if d.get(k)
            ]
    return out


def _latex_sources(corpus: Path) -> list[dict]:
    out = []
    for f in sorted((corpus / "latex").rglob("*.tex")):
        raw = re.sub(r"(?<!\\)%.*", "", f.read_text(errors="replace"))
        body = raw.split("\\begin{document}", 1)[-1]
        for i, para in enumerate(p for p in re.split(r"\n\s*\n", body) if len(p.split()) >= 30):
            out.append({"paper": f"{f.parent.name}/{f.name}", "where": f"para {i}", "text": para})
    return out


def scan(texts: list[dict]) -> tuple[dict, dict]:
    raw: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (source, kind) -> texts/occurrences
    after: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for t in texts:
        cleaned = clean_text(t["text"], t["_vocab"], source=t["family"]).text
        t["clean"] = cleaned
        for store, text in ((raw, t["text"]), (after, cleaned)):
            for kind, n in debris_counts(text, t["_vocab"]).items():
                if n:
                    store[(t["src"], kind)]["texts"] += 1
                    store[(t["src"], kind)]["n"] += n
    return raw, after


def table(texts: list[dict], raw: dict, after: dict) -> None:
    per_src = Counter(t["src"] for t in texts)
    print("texts scanned: " + " · ".join(f"{s} {per_src[s]}" for s in SOURCES if per_src[s]))
    print("cells: texts with the kind / occurrences, raw → after cleaning")
    head = f"{'kind':18}" + "".join(f"{s:>26}" for s in SOURCES if per_src[s])
    print(head)
    for kind in DEBRIS_KINDS:
        row = f"{kind:18}"
        for s in SOURCES:
            if not per_src[s]:
                continue
            a, b = raw.get((s, kind), Counter()), after.get((s, kind), Counter())
            row += f"{a['texts']}/{a['n']} → {b['texts']}/{b['n']}".rjust(26)
        print(row)


def samples(texts: list[dict], kind: str, source: str | None, use_after: bool, n: int, seed: int) -> None:
    from academiceval.papers import clean as C

    hits = []
    for t in texts:
        if source and t["src"] != source:
            continue
        text = t["clean"] if use_after else t["text"]
        if debris_counts(text, t["_vocab"]).get(kind):
            hits.append((t, text))
    print(f"{len(hits)} texts with {kind} ({'after' if use_after else 'raw'})")
    random.Random(seed).shuffle(hits)
    for t, text in hits[:n]:
        spots = _spots(C, kind, text)
        print(f"--- {t['src']} {t['paper']} [{t['where']}]")
        for s in spots[:3]:
            print("    " + repr(s))


def _spots(C, kind: str, text: str) -> list[str]:
    """Where a detector fires, as ±70 characters of context (by bisecting paragraphs)."""
    paras = [p for p in text.split("\n\n") if C.debris_counts(p).get(kind)]
    out = []
    for p in paras:
        out.append(p[:300])
    return out or [text[:300]]


def grep(texts: list[dict], pattern: str, source: str | None, n: int, seed: int) -> None:
    rx = re.compile(pattern)
    hits = []
    for t in texts:
        if source and t["src"] != source:
            continue
        for m in rx.finditer(t["clean"]):
            hits.append((t, t["clean"][max(0, m.start() - 70) : m.end() + 70]))
    print(f"{len(hits)} matches of {pattern!r} after cleaning")
    random.Random(seed).shuffle(hits)
    for t, ctx in hits[:n]:
        print(f"--- {t['src']} {t['paper']} [{t['where']}]  {ctx!r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("ACADEMICEVAL_CORPUS", "/work/shared/corpus")))
    ap.add_argument("--samples", metavar="KIND", help="print texts where KIND fires")
    ap.add_argument("--grep", metavar="REGEX", help="print matches of REGEX in the cleaned texts")
    ap.add_argument("--source", choices=SOURCES)
    ap.add_argument("--after", action="store_true", help="samples after cleaning (what is left)")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, help="keep the loaded texts here (a pickle outside the repo) for reruns")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if args.cache and args.cache.exists():
        texts = pickle.loads(args.cache.read_bytes())
    else:
        texts = load(args.corpus)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(texts))
    t1 = time.perf_counter()
    if args.samples or args.grep:
        texts = [t for t in texts if args.source in (None, t["src"])]
        for t in texts:
            t["clean"] = clean_text(t["text"], t["_vocab"], source=t["family"]).text
    else:
        raw, after = scan(texts)
    t2 = time.perf_counter()
    if args.samples:
        samples(texts, args.samples, args.source, args.after, args.n, args.seed)
    elif args.grep:
        grep(texts, args.grep, args.source, args.n, args.seed)
    else:
        table(texts, raw, after)
    chars = sum(len(t["text"]) for t in texts)
    print(
        f"load {t1 - t0:.1f}s · detect+clean {t2 - t1:.1f}s for {chars / 1e6:.1f}M characters "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
