"""What the sources stage costs on real data: indexing a mirror, answering queries in-process vs. over HTTP, and
how many extra requests a fault-injecting server costs the client (all figures as ratios measured in this run).

Over ../shared/corpus (the whole corpus, or only the astro-ph listings with --quick):
1. index build: records/s of the real formats;
2. the same author queries answered by `MirrorSource` in-process (baseline) and by `ArxivClient` through
   `mirror serve` on 127.0.0.1 with pacing off: time ratio = protocol overhead (Atom writing + HTTP + parsing);
3. the same run against a server injecting 10% 429 (Retry-After 0.01 s), 5% 500, 3% truncated, 3% empty pages:
   requests per answered query (the price of faults) and whether the answers are identical.

    python benchmarks/sources_mirror.py           # whole corpus, 300 author queries
    python benchmarks/sources_mirror.py --quick   # listings only, 80 author queries
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="listings only, 80 queries")
    ap.add_argument("--queries", type=int, default=None, help="number of author queries")
    args = ap.parse_args()
    root = CORPUS / "metadata" / "arxiv_browse_astro-ph_listings" if args.quick else CORPUS
    n_queries = args.queries or (80 if args.quick else 300)

    from academiceval.sources.client import ArxivClient
    from academiceval.sources.mirror import MirrorSource
    from academiceval.sources.mirror.index import MirrorIndex
    from academiceval.sources.query import au
    from academiceval.sources.server import FaultConfig, serve_in_thread

    t0 = time.perf_counter()
    idx = MirrorIndex.build(root.resolve())
    build_s = time.perf_counter() - t0
    n_records = sum(s.records for f, s in idx.stats.items() if f != "pdf")
    print(
        f"index build: {n_records} records from {sum(s.files for s in idx.stats.values())} files in {build_s:.1f} s "
        f"= {n_records / build_s:,.0f} records/s; {len(idx)} distinct papers; {len(idx.errors)} unreadable records"
    )

    mirror = MirrorSource(root)  # reuses the cached index
    names: list[str] = []
    for rec in mirror.index.iter_records():
        if rec.meta.authors and rec.meta.authors[0].name not in names:
            names.append(rec.meta.authors[0].name)
        if len(names) == n_queries:
            break
    queries = [str(au(n)) for n in names]

    t0 = time.perf_counter()
    local = [[m.arxiv_id for m in mirror.iter_search(q, page_size=100)] for q in queries]
    local_s = time.perf_counter() - t0

    with serve_in_thread(root) as server:
        client = ArxivClient(server.url, min_interval=0.0)
        t0 = time.perf_counter()
        served = [[m.arxiv_id for m in client.iter_search(q, page_size=100)] for q in queries]
        served_s = time.perf_counter() - t0
        clean_requests = client.requests_made

        faults = FaultConfig(
            rate_429=0.10, rate_500=0.05, rate_truncate=0.03, rate_empty=0.03, retry_after=0.01, seed=7
        )
        server.set_faults(faults)
        before = server.stats()
        faulty = ArxivClient(server.url, min_interval=0.0, backoff_base=0.01, backoff_max=0.05, max_retries=10, seed=1)
        t0 = time.perf_counter()
        under_faults = [[m.arxiv_id for m in faulty.iter_search(q, page_size=100)] for q in queries]
        faulty_s = time.perf_counter() - t0
        after = server.stats()

    injected = {
        k: after["faults"][k] - before["faults"][k] for k in after["faults"] if after["faults"][k] - before["faults"][k]
    }
    print(f"{len(queries)} author queries, {sum(map(len, local))} hits")
    print(f"in-process (baseline): {local_s:.2f} s = {len(queries) / local_s:,.0f} queries/s")
    print(
        f"served over HTTP:      {served_s:.2f} s = {len(queries) / served_s:,.0f} queries/s; "
        f"ratio {served_s / local_s:.1f}x the in-process time; {clean_requests} requests; "
        f"same answers: {served == local}"
    )
    print(
        f"with faults {injected}: {faulty.requests_made} requests for {clean_requests} pages "
        f"= {faulty.requests_made / clean_requests:.2f} requests per page; {faulty.retries} retries; "
        f"{faulty_s:.2f} s ({faulty_s / served_s:.1f}x clean); same answers: {under_faults == local}"
    )
    print(f"at arXiv's 3 s pacing these {clean_requests} requests would take {clean_requests * 3 / 60:.1f} min")
    return 0 if served == local == under_faults else 1


if __name__ == "__main__":
    sys.exit(main())
