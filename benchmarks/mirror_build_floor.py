"""The floor of building the mirror index from a DuckDB parse (issue 27 item 3), against the DuckDB raw load.

The route measured: DuckDB's `read_json` (C++) parses the Kaggle lines of an `arxiv-metadata-oai-snapshot.json`
and hands Arrow batches of only the columns the index needs (v1/last version timestamps computed by DuckDB);
Python does what the index still needs per record, with the project's own functions (id, collapsed fields,
LaTeX title, author split and name keys — cached per distinct name —, category and surname postings, title
tokens); the record's JSON is serialised by pydantic-core from a dict (no model validation), zstd-compressed,
and written with `executemany` per batch of 5,000 into today's schema (`disk.SCHEMA`: `rec`, `cat`, `author`,
`title_fts`, `file`), the secondary indexes (`disk.SECONDARY`) built at the end, as a fresh `DiskIndex` build
does. Nothing else: no merge of records read twice, no error rows, no crash-safe offsets. So it is a floor
(a lower bound) of that design, not an implementation of it.

`--check N` first proves the route computes today's rows: for the first N lines, every row (the zstd'd JSON
decompressed, author keys, categories, FTS title, timestamps) equals `disk_rows.parse_line`'s, byte for byte.

Contenders, each in its own process, interleaved in a shuffled order per round, `--repeats` (≥ 5) rounds, same
lines for all:
- `duckdb-load`, the issue's baseline: `CREATE TABLE AS SELECT * FROM read_json(...)`, 2 threads, as
  `benchmarks/index_engines.py` runs it;
- `route`, DuckDB on 1 thread: the Python side is the bottleneck, and with 1 thread DuckDB parses inside the
  batch fetch, so each component's CPU is its own. Each batch's Python and writes run under `gc_paused`, as the
  index's page decoding does (with the collector running, the per-record Python cost 96 instead of 55 µs a
  record at 300k, notes/scale.md); the collections when each pause ends (and the setup) are printed as
  `gc_after_batch`;
- with `--today`, `DiskIndex.update` (1 parse worker, as `mirror index` runs it).
Printed: CPU µs per record by component, the medians, the ratios to the DuckDB load, and `fixed` = the route's
components but its per-record Python and the collections of its garbage: what no Python tuning can remove.
Load average with every line.

    nice python benchmarks/mirror_build_floor.py --snapshot /tmp/ms300k/mirror/arxiv-metadata-oai-snapshot.json
    nice python benchmarks/mirror_build_floor.py --snapshot ... --lines 60000 --today
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BATCH = 5000
# the columns the index needs; the v1 and last version timestamps computed by DuckDB
ROUTE_SQL = """
SELECT id, authors, title, abstract, categories, doi, "journal-ref" AS jref, comments, len(versions) AS nver,
       epoch(strptime(versions[1].created, '%a, %d %b %Y %H:%M:%S GMT'))::BIGINT AS pub,
       epoch(strptime(versions[-1].created, '%a, %d %b %Y %H:%M:%S GMT'))::BIGINT AS upd
FROM read_json('{snap}', format='newline_delimited',
  columns={{id: 'VARCHAR', authors: 'VARCHAR', title: 'VARCHAR', abstract: 'VARCHAR', categories: 'VARCHAR',
           doi: 'VARCHAR', "journal-ref": 'VARCHAR', comments: 'VARCHAR',
           versions: 'STRUCT(version VARCHAR, created VARCHAR)[]'}})
"""
COMPONENTS = ("duckdb_parse", "to_python", "python", "json", "zstd", "sql_rows", "sql_commit", "indexes")


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def _cpu() -> float:
    """CPU of the whole process (DuckDB's threads included)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class RouteRows:
    """Today's rows of one Kaggle record, from DuckDB's columns, with the project's per-record functions."""

    def __init__(self) -> None:
        from academiceval.sources.ids import parse_arxiv_id
        from academiceval.sources.mirror.disk_rows import posted_categories
        from academiceval.sources.mirror.index import text_tokens
        from academiceval.sources.mirror.records import _cats, _collapse
        from academiceval.sources.mirror.titles import latex_title
        from academiceval.sources.names import author_fields, key_tokens, surname_of

        self.f = (parse_arxiv_id, posted_categories, text_tokens, _cats, _collapse, latex_title, author_fields,
                  key_tokens, surname_of)  # fmt: skip
        self.days: dict[int, date] = {}

    def day(self, t: int) -> date:
        d = self.days.get(t // 86400)
        if d is None:
            d = self.days[t // 86400] = datetime.fromtimestamp(t, UTC).date()
        return d

    def batch(self, cols: list[list[Any]], rid: int) -> tuple[list[dict], list[list], list, list, list]:
        """(metas to serialise, rec rows without blob, cat rows, author rows, fts rows) of one batch."""
        parse_id, posted, tokens, cats_of, collapse, latex_title, author_fields, key_tokens, surname_of = self.f
        metas: list[dict] = []
        rec_rows: list[list] = []
        cat_rows: list[tuple] = []
        au_rows: list[tuple] = []
        fts_rows: list[tuple] = []
        for raw_id, authors, title, abstract, cats_raw, doi, jref, comments, nver, pub, upd in zip(*cols, strict=True):
            aid = parse_id(raw_id)[0]
            ti = latex_title(collapse(title))
            cats = cats_of(cats_raw or "", aid)
            auth = author_fields(authors or "")
            metas.append({
                "arxiv_id": aid, "version": nver, "title": ti, "abstract": collapse(abstract), "authors": auth,
                "primary_category": cats[0] if cats else None, "categories": cats, "published": self.day(pub),
                "date_precision": "day", "updated": self.day(upd), "doi": collapse(doi).split(" ")[0] or None,
                "journal_ref": collapse(jref) or None, "comment": collapse(comments) or None, "pdf_url": None,
                "source": "kaggle",
            })  # fmt: skip
            rid += 1
            akeys = [a["key"] or " ".join(key_tokens(a["name"])) for a in auth]
            rec_rows.append([rid, aid, pub, upd, upd, "kaggle", " ".join(cats), "\x1f".join(akeys), b"", "p", "kaggle"])
            cat_rows += [(rid, c, pub) for c in posted(cats)]
            au_rows += [(rid, i, surname_of(k), pub) for i, k in enumerate(akeys) if k]
            fts_rows.append((rid, " ".join(tokens(ti))))
        return metas, rec_rows, cat_rows, au_rows, fts_rows


def child_duckdb_load(snap: Path, work: Path) -> dict:
    import duckdb

    t0, c0 = time.perf_counter(), _cpu()
    con = duckdb.connect(str(work / "raw.duckdb"))
    con.execute("SET threads=2")
    con.execute(f"CREATE TABLE raw AS SELECT * FROM read_json('{snap}', format='newline_delimited')")
    con.close()
    return {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0, "rss": _hwm_mb()}


def child_route(snap: Path, work: Path) -> dict:
    import duckdb
    import pydantic_core
    import zstandard

    from academiceval.sources.mirror.disk import SCHEMA, SECONDARY
    from academiceval.sources.mirror.disk_query import gc_paused

    rows = RouteRows()
    comp = dict.fromkeys(COMPONENTS, 0.0)
    t0, c0 = time.perf_counter(), _cpu()
    db = sqlite3.connect(work / "route.sqlite", isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-65536"):  # as DiskIndex's writer
        db.execute(f"PRAGMA {pragma}")
    db.executescript(SCHEMA)
    con = duckdb.connect()
    con.execute("SET threads=1")
    reader = con.sql(ROUTE_SQL.format(snap=snap)).to_arrow_reader(BATCH)
    zc = zstandard.ZstdCompressor(level=3)
    to_json = pydantic_core.to_json
    rid = n = 0
    while True:
        c = _cpu()
        try:
            b = reader.read_next_batch()
        except StopIteration:
            comp["duckdb_parse"] += _cpu() - c
            break
        with gc_paused():  # the route at its best (see the module docstring)
            c1 = _cpu()
            cols = [b.column(i).to_pylist() for i in range(b.num_columns)]
            c2 = _cpu()
            metas, rec_rows, cat_rows, au_rows, fts_rows = rows.batch(cols, rid)
            c3 = _cpu()
            blobs = [to_json(m) for m in metas]
            c4 = _cpu()
            for r, blob in zip(rec_rows, blobs, strict=True):
                r[8] = zc.compress(blob)
            c5 = _cpu()
            db.execute("BEGIN IMMEDIATE")
            ids = [r[1] for r in rec_rows]
            for i in range(0, len(ids), 900):  # the look-up of stored ids a merge needs
                chunk = ids[i : i + 900]
                db.execute(f"SELECT rid FROM rec WHERE arxiv_id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
            db.executemany("INSERT OR REPLACE INTO rec VALUES (?,?,?,?,?,?,?,?,?,?,?)", rec_rows)
            db.executemany("INSERT OR REPLACE INTO cat VALUES (?,?,?)", cat_rows)
            db.executemany("INSERT OR REPLACE INTO author VALUES (?,?,?,?)", au_rows)
            db.executemany("INSERT INTO title_fts (rowid, title) VALUES (?,?)", fts_rows)
            db.execute("INSERT OR REPLACE INTO file VALUES ('p','kaggle',0,0,'',?,'',?,?,0,1)", (rid, rid, rid))
            c6 = _cpu()
            db.execute("COMMIT")
            c7 = _cpu()
            rid += len(rec_rows)
            n += len(rec_rows)
            for k, a, z in zip(COMPONENTS, (c, c1, c2, c3, c4, c5, c6), (c1, c2, c3, c4, c5, c6, c7), strict=False):
                comp[k] += z - a
    c = _cpu()
    db.executescript(SECONDARY)
    db.execute("PRAGMA optimize")
    db.close()
    comp["indexes"] += _cpu() - c
    cpu = _cpu() - c0
    comp["gc_after_batch"] = cpu - sum(comp.values())  # the collections as each batch's pause ends (and setup)
    return {"wall": time.perf_counter() - t0, "cpu": cpu, "rss": _hwm_mb(), "n": n, "comp": comp}


def child_today(snap: Path, work: Path) -> dict:
    from academiceval.sources.mirror.disk import DiskIndex

    mirror = work / "mirror"
    mirror.mkdir()
    os.symlink(snap, mirror / "arxiv-metadata-oai-snapshot.json")
    t0 = time.perf_counter()
    idx = DiskIndex(work / "today.sqlite", mirror, workers=1)
    idx.update()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    return {"wall": time.perf_counter() - t0, "cpu": cpu, "rss": _hwm_mb() + kids.ru_maxrss / 1024, "n": len(idx)}


CHILDREN = {"duckdb-load": child_duckdb_load, "route": child_route, "today": child_today}


def check(snap: Path, lines: int) -> int:
    """How many of the first `lines` records the route computes differently from `disk_rows.parse_line`."""
    import duckdb
    import pydantic_core

    from academiceval.sources.mirror.disk_rows import LINE_FORMATS, parse_line, unpack

    con = duckdb.connect()
    got = con.sql(ROUTE_SQL.format(snap=snap) + f" LIMIT {lines}").fetchall()
    metas, rec_rows, _, _, fts_rows = RouteRows().batch([list(c) for c in zip(*got, strict=True)], 0)
    differ = 0
    with snap.open("rb") as f:
        for i, line in enumerate(f):
            if i >= len(got):
                break
            p = parse_line(line, LINE_FORMATS["kaggle"], f"x:{i + 1}", 0)
            r = rec_rows[i]
            ours = (pydantic_core.to_json(metas[i]), r[1], r[2], r[3], r[6], r[7], fts_rows[i][1])
            same = ours == (unpack(p.blob), p.arxiv_id, p.pub, p.upd, " ".join(p.cats), "\x1f".join(p.akeys), p.title)
            differ += not same
    return differ


def run(kind: str, snap: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="mirror-floor-") as work:
        cmd = [sys.executable, __file__, "--child", kind, str(snap), work]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", type=Path, help="a Kaggle snapshot (benchmarks/mirror_scale.py --keep makes one)")
    ap.add_argument("--lines", type=int, default=0, help="use the first N lines only (0: all)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--today", action="store_true", help="also time today's DiskIndex.update (1 parse worker)")
    ap.add_argument("--check", type=int, default=20000, help="lines checked for equal rows first (0: none)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, snap, work = args.child
        print(json.dumps(CHILDREN[kind](Path(snap), Path(work))))
        return 0
    if args.repeats < 5:
        raise SystemExit("--repeats must be at least 5")
    if args.snapshot is None or not args.snapshot.is_file():
        raise SystemExit(f"snapshot not found: {args.snapshot} (make one: benchmarks/mirror_scale.py --keep)")
    tmp = None
    snap = args.snapshot.resolve()
    if args.lines:
        tmp = Path(tempfile.mkdtemp(prefix="mirror-floor-snap-"))
        with snap.open("rb") as src, (tmp / snap.name).open("wb") as dst:
            for i, line in enumerate(src):
                if i >= args.lines:
                    break
                dst.write(line)
        snap = tmp / snap.name
    try:
        return measure(snap, args)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp)


def measure(snap: Path, args: argparse.Namespace) -> int:
    n = sum(1 for _ in snap.open("rb"))
    if args.check:
        differ = check(snap, min(args.check, n))
        print(f"check: route rows vs disk_rows.parse_line, first {min(args.check, n):,} lines: {differ} differ "
              f"({load()})", flush=True)  # fmt: skip
        if differ:
            print("the route does not compute today's rows: no floor printed")
            return 1
    kinds = ["duckdb-load", "route"] + (["today"] if args.today else [])
    res: dict[str, list[dict]] = {k: [] for k in kinds}
    rng = random.Random(3)
    for r in range(1, args.repeats + 1):
        order = kinds[:]
        rng.shuffle(order)
        for kind in order:
            d = run(kind, snap)
            res[kind].append(d)
            parts = " ".join(f"{k} {v / n * 1e6:.1f}" for k, v in d.get("comp", {}).items())
            print(f"round {r} {kind:11s}: {n:,} records, wall {d['wall']:.1f} s, CPU {d['cpu']:.1f} s = "
                  f"{d['cpu'] / n * 1e6:.1f} µs/record, peak RSS {d['rss']:.0f} MB"
                  f"{' [µs/record: ' + parts + ']' if parts else ''} ({load()})", flush=True)  # fmt: skip
    med = {k: statistics.median(d["cpu"] for d in v) / n * 1e6 for k, v in res.items()}
    comp = {c: statistics.median(d["comp"][c] for d in res["route"]) / n * 1e6 for c in (*COMPONENTS, "gc_after_batch")}
    fixed = sum(v for c, v in comp.items() if c not in ("python", "gc_after_batch"))  # what no Python tuning removes
    python = comp["python"] + comp["gc_after_batch"]  # the collector collects the per-record Python's garbage
    base = med["duckdb-load"]
    print("route, median CPU µs/record by component: " + ", ".join(f"{c} {v:.1f}" for c, v in comp.items()))
    if "today" in med:
        print(f"today's build: {med['today']:.1f} µs/record = {med['today'] / base:.2f}x the DuckDB load; "
              f"the route {med['today'] / med['route']:.2f}x cheaper ({load()})")  # fmt: skip
    print(f"mirror_build_floor: records {n}, duckdb_load_us {base:.1f}, route_us {med['route']:.1f} "
          f"({med['route'] / base:.2f}x), fixed_us {fixed:.1f} ({fixed / base:.2f}x, the route without per-record "
          f"Python), python_us {python:.1f} (GC included) ({load()})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
