"""The on-disk mirror index at arXiv's scale: build time, memory and query latency for N Kaggle records.

1. generates a Kaggle-format snapshot of N records (`arxiv-metadata-oai-snapshot.json` lines) by transforming the
   real records of ../shared/corpus/metadata (Kaggle, .abs, listings, SCALAR: 9.2k papers): new ids and v1 dates
   spread over 2007-04 … 2026-10 (a growing monthly volume, like arXiv's), real titles and abstracts, real
   author lists shuffled, real category strings, 30% of papers with a later version; written under /tmp;
2. indexes it with `DiskIndex` in a child process (peak RSS: VmHWM of the writer + `ru_maxrss` of its parse worker);
3. appends 1% more lines and times the incremental update (only the new lines are read);
4. runs the queries `graph update` issues through `MirrorSource` (what collect/update call): date-window +
   category pages of 2,000 records (a month, widened until it holds a full page; oldest first) six ways,
   interleaved query by query in a shuffled order over 5 passes: light entries (`sources.entries.search_entries`,
   what `graph update` scans a window with, reading every hit's date and author keys); the same entries with the
   hits ordered from their `rec` rows (`run_query(from_postings=False)`, the order before `_postings_page`);
   the index part alone (total + the page's ordered ids) both ways; `MirrorSource.search` (a page of
   `PaperMeta`); and the named baseline `search_page` + `.meta` (full `MirrorRecord`s). Both orders must give
   the same totals and pages for every query, or the script stops. Then author queries restricted to a window
   (`author_query`, pages of 100). The load average is printed with every figure.

The last line is exactly
`mirror_scale: records N, index_s S, records_per_s R, peak_rss_mb M, page2000_p95_ms P (…), query_p50_ms Q50,
query_p95_ms Q95 (load average …)` — `page2000_p95_ms` over the window pages as entries (in brackets: the
same pages in the order before, and the PaperMeta page), `query_*` over those and the author queries together;
peak RSS = index writer (VmHWM) + parse worker. `--reuse DIR` runs only step 4 on the snapshot and index a
`--keep` run left in DIR (index_s, records_per_s and peak_rss_mb are then `-`).

    nice python benchmarks/mirror_scale.py --records 100000
    nice python benchmarks/mirror_scale.py --records 2700000 --workdir /tmp/mirror_scale   # deleted afterwards
    nice python benchmarks/mirror_scale.py --records 2700000 --workdir /tmp/ms2700k --keep  # kept, then:
    nice python benchmarks/mirror_scale.py --reuse /tmp/ms2700k                             # queries only
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()
FIRST_MONTH = (2007, 4)
LAST_MONTH = (2026, 10)


def _months() -> list[tuple[int, int]]:
    out, (y, m) = [], FIRST_MONTH
    while (y, m) <= LAST_MONTH:
        out.append((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def material() -> dict[str, list]:
    """Pools of real fields from the corpus' metadata records (read with the project's own readers)."""
    from academiceval.sources.mirror.index import MirrorIndex

    if not (CORPUS / "metadata").is_dir():  # a git worktree has no ../shared beside it
        raise SystemExit(f"corpus not found: {CORPUS}/metadata (set ACADEMICEVAL_CORPUS to the corpus directory)")
    idx = MirrorIndex.build((CORPUS / "metadata").resolve())
    titles, abstracts, authors, cats, comments, journals = [], [], [], [], [], []
    for r in idx.iter_records():
        m = r.meta
        titles.append(m.title)
        if m.abstract:
            abstracts.append(m.abstract)
        if m.authors:
            authors.append([a.name for a in m.authors])
        if m.categories:
            cats.append(" ".join(m.categories))
        if m.comment:
            comments.append(m.comment)
        if m.journal_ref:
            journals.append(m.journal_ref)
    return {"titles": titles, "abstracts": abstracts, "authors": authors, "cats": cats, "comments": comments,
            "journals": journals}  # fmt: skip


def _rfc(dt: datetime) -> str:
    return dt.strftime("%a, %d %b %Y %H:%M:%S GMT")


def generate(path: Path, n: int, pool: dict[str, list], *, seed: int = 13, append: bool = False) -> None:
    """Write a synthetic snapshot of n records; `append`: n more, all in the month after the last (a new month)."""
    rng = random.Random(seed + int(append))
    months = [(2026, 11)] if append else _months()
    weights = [1 + i / len(months) * 2 for i in range(len(months))]  # volume grows ~3x over the span
    total_w = sum(weights)
    # records per month (ids increase with dates, like arXiv's)
    per_month = [max(1, int(w / total_w * n)) for w in weights]
    bounds, acc = [], 0
    for c in per_month:
        acc += c
        bounds.append(acc)
    with path.open("a" if append else "w", encoding="utf-8") as f:
        mi = 0
        for i in range(n):
            while mi < len(bounds) - 1 and i >= bounds[mi]:
                mi += 1
            y, m = months[mi]
            seq = i - (bounds[mi - 1] if mi else 0)
            aid = f"{y % 100:02d}{m:02d}.{seq:05d}" if seq < 100000 else f"{y % 100:02d}{m:02d}.{seq}"
            v1 = datetime(y, m, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(27 * 86400))
            versions = [{"version": "v1", "created": _rfc(v1)}]
            if rng.random() < 0.3:
                versions.append({"version": "v2", "created": _rfc(v1 + timedelta(days=rng.randrange(1, 400)))})
            names = list(rng.choice(pool["authors"]))
            rng.shuffle(names)
            authors = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            rec = {
                "id": aid,
                "submitter": names[0],
                "authors": authors,
                "title": rng.choice(pool["titles"]),
                "comments": rng.choice(pool["comments"]) if rng.random() < 0.7 else None,
                "journal-ref": rng.choice(pool["journals"]) if rng.random() < 0.3 else None,
                "doi": None,
                "report-no": None,
                "categories": rng.choice(pool["cats"]),
                "license": None,
                "abstract": "  " + rng.choice(pool["abstracts"]) + "\n",
                "versions": versions,
                "update_date": (v1.date() + timedelta(days=1)).isoformat(),
                "authors_parsed": [[nm.split()[-1], " ".join(nm.split()[:-1]), ""] for nm in names],
            }
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def child_index(mirror: Path, db: Path, workers: int | None) -> None:
    """Runs in a child process: build (or update) the index, print a JSON line of figures."""
    from academiceval.sources.mirror.disk import DiskIndex

    t0 = time.perf_counter()
    idx = DiskIndex(db, mirror, workers=workers)
    rep = idx.update()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - t0,
                "records": len(idx),
                "lines": rep.lines_read,
                "added": rep.records_added,
                "errors": rep.errors,
                "grown": rep.files_grown,
                "rss_mb": _hwm_mb(),  # not ru_maxrss: it keeps the forking parent's peak across exec
                "worker_rss_mb": kids.ru_maxrss / 1024,
                "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
            }
        )
    )


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def run_duck(snap: Path, out: Path) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    cmd = [sys.executable, str(Path(__file__).resolve().parent / "index_engines.py"), "--child", "build", "duckdb",
           str(snap), str(out)]  # fmt: skip
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_child(mirror: Path, db: Path, workers: int | None) -> dict:
    cmd = [sys.executable, __file__, "--child", str(mirror), str(db), str(-1 if workers is None else workers)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def queries(
    mirror: Path, db: Path, pool: dict[str, list], n_window: int, n_author: int, *, passes: int = 5,
    breakdown: bool = False,
) -> dict[str, list[float]]:  # fmt: skip
    """Window pages of 2,000 records through `MirrorSource.search` (the caller's path: `PaperMeta` decoded, nothing
    else) against the named baseline `search_page` + `.meta` (full `MirrorRecord`s, the path before), interleaved
    query by query in a shuffled order, `passes` passes over the same queries (same N for both); then author
    queries. A window is a month, widened month by month until it holds at least 2,000 papers (a full page)."""
    from academiceval.graph.names import author_query, window_query
    from academiceval.sources.entries import search_entries
    from academiceval.sources.mirror import MirrorSource
    from academiceval.sources.mirror.disk import DiskIndex
    from academiceval.sources.mirror.disk_query import run_query

    src = MirrorSource(mirror, index=DiskIndex(db, mirror))
    rng = random.Random(5)
    months = _months()
    all_cats = sorted({c for s in pool["cats"] for c in s.split()})
    astro = [c for c in all_cats if c.startswith("astro-ph")]
    index_only: list[float] = []  # the same window queries without decoding the page: hits counted and ordered
    window_qs, hits = [], []
    for _ in range(n_window):  # a month (the monthly update's window) over a graph's categories
        y, m = rng.choice(months[len(months) // 2 :])
        since = date(y, m, 1)
        cats = rng.sample(astro, rng.randint(1, len(astro))) + rng.sample(all_cats, rng.randint(0, 3))
        until = (since + timedelta(days=32)).replace(day=1) - timedelta(days=1)
        while True:
            q = window_query(since, until, cats)
            t0 = time.perf_counter()
            total, _ = src.index.search_page(q, start=0, max_results=0, sort_by="submittedDate", sort_order="ascending")
            if total >= 2000 or until.year > 2026:
                break
            until = (until + timedelta(days=32)).replace(day=1) - timedelta(days=1)
        index_only.append(time.perf_counter() - t0)
        window_qs.append(q)
        hits.append(min(total, 2000))

    def via_entries(q: str) -> int:  # what graph update calls now, and what it reads of every hit
        page = search_entries(src, q, start=0, max_results=2000, sort_by="submittedDate", sort_order="ascending")
        return sum(len(e.author_keys) for e in page.items if e.published)

    def via_source(q: str) -> int:  # the protocol's page of PaperMeta
        return len(src.search(q, start=0, max_results=2000, sort_by="submittedDate", sort_order="ascending").items)

    def via_records(q: str) -> int:  # the baseline: full records, then their metadata
        _, page = src.index.search_page(q, start=0, max_results=2000, sort_by="submittedDate", sort_order="ascending")
        return len([r.meta for r in page])

    def ordered(q: str, *, from_postings: bool, decode: Any = list) -> tuple[int, list[Any]]:
        return run_query(src.index, q, start=0, max_results=2000, sort_by="submittedDate", sort_order="ascending",
                         decode=decode, from_postings=from_postings)  # fmt: skip

    def via_entries_rows(q: str) -> int:  # entries, the hits ordered from their rec rows (the order before)
        _, page = ordered(q, from_postings=False, decode=src.index.entries_by_rid)
        return sum(len(e.author_keys) for e in page if e.published)

    for q in window_qs:  # the A/B below compares two orders of the same pages: they must be the same pages
        if ordered(q, from_postings=True) != ordered(q, from_postings=False):
            raise SystemExit(f"the postings order and the rec-row order differ for {q}")
    paths = {"entries (graph update)": via_entries, "entries, rec-row order (before)": via_entries_rows,
             "index only, postings order": functools.partial(ordered, from_postings=True),
             "index only, rec-row order (before)": functools.partial(ordered, from_postings=False),
             "MirrorSource.search": via_source, "search_page records (baseline)": via_records}  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in paths}
    cpu: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(passes):
        for q in window_qs:
            order = list(paths)
            rng.shuffle(order)
            for name in order:
                t0, c0 = time.perf_counter(), time.process_time()
                paths[name](q)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
    author: list[float] = []
    author_hits = 0
    for _ in range(n_author):  # a candidate author's papers in the update window (update step 2)
        name = rng.choice(rng.choice(pool["authors"]))
        y, m = rng.choice(months[len(months) // 2 :])
        since = date(y, m, 1)
        q = author_query(name, since=since - timedelta(days=365), until=since)
        t0 = time.perf_counter()
        author_hits += len(src.search(q, start=0, max_results=100, sort_by="submittedDate").items)
        author.append(time.perf_counter() - t0)
    print(f"  window queries (mean page {statistics.mean(hits):,.0f} records), index only (total + ordered ids): "
          f"wall {_pct(index_only)} ({load()})")  # fmt: skip
    for k in paths:
        print(f"  window pages via {k}: {len(times[k])} ({passes} passes): wall {_pct(times[k])}; CPU {_pct(cpu[k])} "
              f"({load()})")  # fmt: skip
    for k, base in (("entries (graph update)", "search_page records (baseline)"),
                    ("MirrorSource.search", "search_page records (baseline)"),
                    ("entries (graph update)", "entries, rec-row order (before)"),
                    ("index only, postings order", "index only, rec-row order (before)")):  # fmt: skip
        base_runs = times[base]
        ratio = statistics.median(base_runs) / statistics.median(times[k])
        wins = sum(a < b for a, b in zip(times[k], base_runs, strict=True))
        if (ratio > 1) != (wins > len(base_runs) / 2) and abs(ratio - 1) > 0.02:
            raise SystemExit(f"refusing the page speed ratio {ratio:.2f} of {k}: it contradicts the pairwise wins")
        cpu_ratio = statistics.median(cpu[base]) / statistics.median(cpu[k])
        print(f"  speed-up of {k} over {base} (median wall): {ratio:.2f}x (CPU {cpu_ratio:.2f}x); faster in {wins} "
              f"of {len(base_runs)} interleaved pairs")  # fmt: skip
    entries = search_entries(src, window_qs[0], max_results=2000, sort_by="submittedDate", sort_order="ascending")
    t0 = time.perf_counter()
    for e in entries.items[:200]:
        e.meta()
    print(f"  decoding one record on demand (entry.meta(), the papers of graph authors): "
          f"{(time.perf_counter() - t0) / 200 * 1e6:.0f} µs ({load()})")  # fmt: skip
    print(f"  author queries: {len(author)}, mean hits {author_hits / max(1, len(author)):.0f}, wall {_pct(author)} "
          f"({load()})")  # fmt: skip
    if breakdown:
        page_breakdown(src, window_qs)
    return {"window": times["entries (graph update)"], "window_meta": times["MirrorSource.search"],
            "window_before": times["entries, rec-row order (before)"], "author": author}  # fmt: skip


def page_breakdown(src: Any, window_qs: list[Any]) -> None:
    """Where a window page's time goes (`--breakdown`): the same pages with the GC pause of
    `DiskIndex.records_by_rid` and without it; a profile (own time per page of the costliest functions; the GC's
    one pass after a page shows as contextlib's `__exit__`); the record codec, zlib-1 (before) vs zstd-3 (now), on
    2,000 stored records."""
    import contextlib
    import cProfile
    import pstats
    import zlib

    from academiceval.sources.mirror import disk, disk_query
    from academiceval.sources.mirror.disk_rows import pack, unpack

    def pages() -> list[float]:
        out = []
        for q in window_qs:
            t0 = time.perf_counter()
            src.search(q, start=0, max_results=2000, sort_by="submittedDate", sort_order="ascending")
            out.append(time.perf_counter() - t0)
        return out

    paused = pages()
    shipped = disk_query.gc_paused
    disk_query.gc_paused = disk.gc_paused = contextlib.nullcontext
    try:
        running = pages()
    finally:
        disk_query.gc_paused = disk.gc_paused = shipped
    print(f"  window pages with the GC paused while decoding (shipped): wall {_pct(paused)}")
    print(f"  window pages with the GC running while decoding:          wall {_pct(running)}")
    prof = cProfile.Profile()
    prof.enable()
    pages()
    prof.disable()
    n = len(window_qs)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    print("  profile of one pass (own time per page):")
    for (file, line, fn), (_, calls, own, _, _) in sorted(stats.items(), key=lambda kv: -kv[1][2])[:8]:
        print(f"    {own / n * 1000:6.1f} ms  {fn} ({Path(file).name}:{line}), {calls / n:,.0f} calls")
    raws = [unpack(b) for (b,) in src.index.conn().execute("SELECT meta FROM rec LIMIT 2000")]

    def per_record(f: Any, xs: list[bytes]) -> float:
        best = min(_timed(lambda: [f(x) for x in xs]) for _ in range(5))
        return best / len(xs) * 1e6

    size = sum(map(len, raws))
    for name, enc, dec in (("zlib-1", lambda r: zlib.compress(r, 1), zlib.decompress), ("zstd-3", pack, unpack)):
        blobs = [enc(r) for r in raws]
        print(
            f"  codec {name}: {sum(map(len, blobs)) / size:.3f} of the JSON ({size / len(raws):,.0f} B/record), "
            f"compress {per_record(enc, raws):.1f} µs, decompress {per_record(dec, blobs):.1f} µs per record"
        )


def _timed(f: Any) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def _pct(v: list[float]) -> str:
    q = statistics.quantiles(v, n=20) if len(v) > 1 else v * 19
    return f"p50 {statistics.median(v) * 1000:.1f} ms, p95 {q[18] * 1000:.1f} ms, max {max(v) * 1000:.1f} ms"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        w = int(sys.argv[4])
        child_index(Path(sys.argv[2]), Path(sys.argv[3]), None if w < 0 else w)
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/academiceval_mirror_scale"))
    ap.add_argument("--window-queries", type=int, default=40)
    ap.add_argument("--passes", type=int, default=5, help="passes over the window queries (>= 5)")
    ap.add_argument("--author-queries", type=int, default=200)
    ap.add_argument("--workers", type=int, default=None, help="parse workers (default: 1 for files over 64 MB)")
    ap.add_argument("--keep", action="store_true", help="keep the generated snapshot and index")
    ap.add_argument("--duckdb-load", action="store_true", help="also time one raw DuckDB load of the snapshot")
    ap.add_argument(
        "--breakdown", action="store_true", help="also: where a window page's time goes (GC, profile, codecs)"
    )
    ap.add_argument("--reuse", type=Path, default=None, help="only the queries, on the index a --keep run left here")
    args = ap.parse_args()
    if args.passes < 5:
        raise SystemExit("--passes must be at least 5")
    if args.reuse is not None:
        return reuse(args)
    n = args.records
    work = args.workdir
    if REPO in work.resolve().parents:
        print("refusing to write inside the repository; use a /tmp directory", file=sys.stderr)
        return 2
    shutil.rmtree(work, ignore_errors=True)
    mirror = work / "mirror"
    mirror.mkdir(parents=True)
    snap, db = mirror / "arxiv-metadata-oai-snapshot.json", work / "index.sqlite"
    try:
        pool = material()
        t0 = time.perf_counter()
        generate(snap, n, pool)
        size = snap.stat().st_size
        print(f"generated {n:,} records ({size / 1e6:,.0f} MB) in {time.perf_counter() - t0:.1f} s -> {snap}")
        built = run_child(mirror, db, args.workers)
        print(
            f"  index: {built['records']:,} records in {built['seconds']:.1f} s wall, {built['cpu_s']:.1f} s CPU "
            f"(writer + parse workers), {built['errors']} unreadable, peak RSS {built['rss_mb']:.0f} MB "
            f"(parse worker {built['worker_rss_mb']:.0f} MB), index file {db.stat().st_size / 1e6:,.0f} MB "
            f"({db.stat().st_size / size:.2f}x the snapshot) ({load()})"
        )
        if args.duckdb_load:  # the baseline on the same snapshot: one raw DuckDB load (n = 1, no ratio)
            duck = run_duck(snap, work / "raw.duckdb")
            print(
                f"  DuckDB raw load of the same snapshot (read_json -> table, 2 threads; one run): "
                f"{duck['wall_s']:.1f} s wall, {duck['cpu_s']:.1f} s CPU, peak RSS {duck['rss_mb']:.0f} MB, "
                f"{duck['file_mb']:,.0f} MB ({load()})"
            )
        grow = max(1, n // 100)
        generate(snap, grow, pool, append=True)
        upd = run_child(mirror, db, args.workers)
        print(
            f"  incremental: +{grow:,} lines appended -> {upd['lines']:,} lines read, {upd['added']:,} added in "
            f"{upd['seconds']:.1f} s (grown files: {upd['grown']}), peak RSS {upd['rss_mb']:.0f} MB ({load()})"
        )
        times = queries(mirror, db, pool, args.window_queries, args.author_queries, passes=args.passes,
                        breakdown=args.breakdown)  # fmt: skip
        build = (f"{built['seconds']:.1f}", f"{n / built['seconds']:.0f}",
                 f"{built['rss_mb'] + built['worker_rss_mb']:.0f}")  # fmt: skip
        print(last_line(n, build, times))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def reuse(args: argparse.Namespace) -> int:
    """Step 4 alone on the snapshot and index a `--keep` run left in `args.reuse` (a 2.7M build is ~30 min; the
    queries are drawn from the same seeds, so they are the queries of that run)."""
    mirror, db = args.reuse / "mirror", args.reuse / "index.sqlite"
    if not (db.is_file() and (mirror / "arxiv-metadata-oai-snapshot.json").is_file()):
        raise SystemExit(f"no kept run in {args.reuse}: expected index.sqlite and mirror/ (run with --keep first)")
    from academiceval.sources.mirror.disk import DiskIndex

    n = len(DiskIndex(db, mirror))
    print(f"reusing {args.reuse}: {n:,} records, index file {db.stat().st_size / 1e6:,.0f} MB ({load()})")
    times = queries(mirror, db, material(), args.window_queries, args.author_queries, passes=args.passes,
                    breakdown=args.breakdown)  # fmt: skip
    print(last_line(n, ("-", "-", "-"), times))
    return 0


def last_line(n: int, build: tuple[str, str, str], times: dict[str, list[float]]) -> str:
    allq = times["window"] + times["author"]
    q = statistics.quantiles(allq, n=20)
    page95, before95, meta95 = (statistics.quantiles(times[k], n=20)[18] * 1000
                                for k in ("window", "window_before", "window_meta"))  # fmt: skip
    return (
        f"mirror_scale: records {n}, index_s {build[0]}, records_per_s {build[1]}, peak_rss_mb {build[2]}, "
        f"page2000_p95_ms {page95:.1f} (entries; rec-row order before {before95:.1f}; PaperMeta page {meta95:.1f}), "
        f"query_p50_ms {statistics.median(allq) * 1000:.1f}, query_p95_ms {q[18] * 1000:.1f} ({load()})"
    )


if __name__ == "__main__":
    sys.exit(main())
