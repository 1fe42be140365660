"""What a monthly graph update costs in arXiv API requests: one query per graph author vs. date-window queries.

Through `mirror serve` (the real HTTP server and client, on 127.0.0.1) over the real astro-ph listings
(7,779 papers, 2018-01..06): crawl the co-author graph up to the end of March, then find the graph authors' new
first-author papers of April–June two ways and print the requests the server served, the papers each found
(must be the same set) and the wall time each would take at arXiv's 3 s per request.

    python benchmarks/update_cost.py            # full: 150 seeds, up to 1,500 authors
    python benchmarks/update_cost.py --quick    # 40 seeds, up to 400 authors
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LISTINGS = REPO.parent / "shared" / "corpus" / "metadata" / "arxiv_browse_astro-ph_listings"
CRAWL_UNTIL, SINCE, UNTIL = date(2018, 3, 31), date(2018, 4, 1), date(2018, 6, 30)
ARXIV_PACE = 3.0


def hms(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


def seed_authors(n: int) -> list[str]:
    """Real seeds: the first authors of the n earliest papers of the listings (read via the mirror index)."""
    from academiceval.sources.mirror import load_index

    metas = sorted((r.meta for r in load_index(LISTINGS).iter_records()), key=lambda m: (m.published, m.arxiv_id))
    out: list[str] = []
    for m in metas:
        if m.authors and m.published <= CRAWL_UNTIL and m.authors[0].name not in out:
            out.append(m.authors[0].name)
        if len(out) == n:
            break
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small graph (40 seeds, ≤400 authors)")
    ap.add_argument("--seeds", type=int, default=None, help="number of seed authors")
    ap.add_argument("--max-authors", type=int, default=None, help="crawl cap (authors visited)")
    ap.add_argument("--new-papers", type=int, default=50, help="extra papers the node+edge update should add")
    args = ap.parse_args()
    n_seeds = args.seeds or (40 if args.quick else 150)
    cap = args.max_authors or (400 if args.quick else 1500)

    from academiceval.graph import collect, update
    from academiceval.graph.names import author_query, fill_keys
    from academiceval.sources.client import ArxivClient
    from academiceval.sources.server import serve_in_thread
    from academiceval.store import Workspace

    seeds = seed_authors(n_seeds)
    with tempfile.TemporaryDirectory() as tmp, serve_in_thread(LISTINGS) as server:
        client = ArxivClient(server.url, min_interval=0.0)
        ws = Workspace(Path(tmp) / "ws")
        t0 = time.perf_counter()
        crawl = collect(ws, client, seeds, max_authors=cap, until=CRAWL_UNTIL)
        crawl_s = time.perf_counter() - t0
        authors = ws.db.execute("SELECT key, name FROM graph_author WHERE state='visited' ORDER BY queue_pos")
        authors = authors.fetchall()
        print(
            f"graph crawled to {CRAWL_UNTIL}: {crawl.visited_total} authors visited ({crawl.nodes} with a "
            f"first-author paper), {crawl.papers} papers, {crawl.edges} edges; {crawl.api_calls} requests, "
            f"{crawl_s:.1f} s on loopback"
        )

        # (a) the original method: one query per graph author, new papers matched to the author by key
        served0 = server.stats()["api_requests"]
        t0 = time.perf_counter()
        per_author: set[str] = set()
        for key, name in authors:
            for m in client.iter_search(author_query(name, since=SINCE, until=UNTIL), page_size=100):
                m = fill_keys(m)
                if m.authors and m.authors[0].key == key and SINCE <= m.published <= UNTIL:
                    per_author.add(m.arxiv_id)
        req_a = server.stats()["api_requests"] - served0
        time_a = time.perf_counter() - t0

        # (b) ours: date-window pages over the graph's categories, matched locally
        served0 = server.stats()["api_requests"]
        t0 = time.perf_counter()
        rep = update(ws, client, SINCE, UNTIL)
        req_b = server.stats()["api_requests"] - served0
        time_b = time.perf_counter() - t0
        ours = set(rep.node_papers)

        # (c) beyond the comparison: a node+edge update that also brings in new co-authors until N new papers
        served0 = server.stats()["api_requests"]
        grow = update(ws, client, SINCE, UNTIL, new_papers=len(ours) + args.new_papers)
        req_c = server.stats()["api_requests"] - served0

    same = per_author == ours
    print(f"update window {SINCE} .. {UNTIL}; graph authors: {len(authors)}; window categories: {len(rep.categories)}")
    print(f"{'method':<34}{'requests':>10}{'new papers':>12}{'at 3 s/request':>16}{'loopback':>10}")
    print(
        f"{'one query per graph author':<34}{req_a:>10}{len(per_author):>12}{hms(req_a * ARXIV_PACE):>16}"
        f"{time_a:>9.1f}s"
    )
    print(f"{'date-window pages (ours)':<34}{req_b:>10}{len(ours):>12}{hms(req_b * ARXIV_PACE):>16}{time_b:>9.1f}s")
    ratio = req_b / req_a if req_a else float("inf")
    print(
        f"same set of new papers: {same}; requests ours/original = 1/{req_a / max(req_b, 1):.0f} "
        f"(target ≤ 1/50: {'met' if ratio <= 1 / 50 else 'NOT met'}); update recorded as #{rep.id} with "
        f"{rep.api_calls} API calls"
    )
    print(
        f"node+edge update (--new-papers {len(ours) + args.new_papers}): {req_c} requests = {grow.window_calls} "
        f"window pages + {grow.author_calls} queries for {len(grow.authors_added)} new co-authors "
        f"(of {grow.candidates} candidates); {grow.papers_added} papers added; refined graph "
        f"{grow.refine.authors if grow.refine else 0} authors"
    )
    return 0 if same and ratio <= 1 / 50 else 1


if __name__ == "__main__":
    sys.exit(main())
