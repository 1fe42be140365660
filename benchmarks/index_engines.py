"""SQLite vs DuckDB for the on-disk mirror index, on the same rows and the same queries (why disk.py uses SQLite).

Rows: N synthetic Kaggle records (`mirror_scale.generate`, real corpus fields), parsed and prepared once with the
index's own code (`disk_rows.prepare`), so only the engines differ. Each engine runs in its own process:
1. load: batches of 5,000 with the upsert the index needs (look up which ids exist, then insert), postings
   (categories with prefixes, author surnames) included; then the secondary indexes;
2. queries as `graph update` issues them: month window + categories → sorted ids (the plan disk_query makes),
   surname + one-year window, 1,000 point look-ups by id, and fetching a page of 2,000 compressed records;
3. file size and peak RSS.

    nice python benchmarks/index_engines.py --records 100000
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
BATCH = 5000


def _month(y: int, m: int) -> tuple[int, int]:
    lo = int(datetime(y, m, 1, tzinfo=UTC).timestamp())
    y2, m2 = (y + 1, 1) if m == 12 else (y, m + 1)
    return lo, int(datetime(y2, m2, 1, tzinfo=UTC).timestamp()) - 1


def prepare_rows(n: int, work: Path) -> Path:
    sys.path.insert(0, str(HERE))
    from academiceval.sources.mirror.disk_rows import LINE_FORMATS, parse_line
    from mirror_scale import generate, material

    snap = work / "snap.jsonl"
    pool = material()
    generate(snap, n, pool)
    rows = []
    with snap.open("rb") as f:
        for i, line in enumerate(f, 1):
            p = parse_line(line, LINE_FORMATS["kaggle"], f"x:{i}", 0)
            rows.append(p)
    out = work / "rows.pickle"
    out.write_bytes(pickle.dumps(rows))
    snap.unlink()
    return out


def _queries(rows: list) -> dict[str, list]:
    rng = random.Random(7)
    cats = sorted({c for r in rows for c in r.cats})
    astro = [c for c in cats if c.startswith("astro-ph")]
    months = [(y, m) for y in range(2017, 2026) for m in range(1, 13)]
    windows = []
    for _ in range(60):
        cs = rng.sample(astro, rng.randint(1, len(astro))) + rng.sample(cats, 2)
        windows.append((cs, *_month(*rng.choice(months))))
    surnames = [rng.choice(rng.choice(rows).akeys).split()[-1] for _ in range(200)]
    authors = []
    for s in surnames:
        y, m = rng.choice(months)
        lo, hi = _month(y, m)
        authors.append((s, lo - 365 * 86400, hi))
    ids = [rng.choice(rows).arxiv_id for _ in range(1000)]
    return {"windows": windows, "authors": authors, "ids": ids}


def run_engine(engine: str, rows_path: Path, db: Path) -> dict:
    from academiceval.sources.mirror.disk_rows import posted_categories
    from academiceval.sources.names import surname_of

    rows = pickle.loads(rows_path.read_bytes())
    qs = _queries(rows)
    out: dict = {"engine": engine}
    ddl = [
        "CREATE TABLE rec (rid BIGINT PRIMARY KEY, arxiv_id VARCHAR UNIQUE, pub BIGINT, cats VARCHAR, "
        "akeys VARCHAR, meta BLOB)",
        "CREATE TABLE cat (rid BIGINT, cat VARCHAR, pub BIGINT)",
        "CREATE TABLE author (rid BIGINT, pos INTEGER, skey VARCHAR, pub BIGINT)",
    ]
    index_ddl = ["CREATE INDEX cat_q ON cat(cat, pub)", "CREATE INDEX author_q ON author(skey, pub)",
                 "CREATE INDEX rec_pub ON rec(pub, arxiv_id)"]  # fmt: skip
    if engine == "sqlite":
        import sqlite3

        con = sqlite3.connect(db, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("PRAGMA cache_size=-65536")
        ph = "?"
    else:
        import duckdb

        con = duckdb.connect(str(db))
        con.execute("SET memory_limit='512MB'")
        con.execute("SET threads=1")
        ph = "?"
    for s in ddl:
        con.execute(s)
    t0 = time.perf_counter()
    rid = 0
    for i in range(0, len(rows), BATCH):
        chunk = rows[i : i + BATCH]
        con.execute("BEGIN")
        ids = [r.arxiv_id for r in chunk]
        for j in range(0, len(ids), 900):
            part = ids[j : j + 900]
            con.execute(f"SELECT rid FROM rec WHERE arxiv_id IN ({','.join(ph * len(part))})", part).fetchall()
        recs, cats, auths = [], [], []
        for r in chunk:
            rid += 1
            recs.append((rid, r.arxiv_id, r.pub, " ".join(r.cats), "\x1f".join(r.akeys), r.blob))
            cats += [(rid, c, r.pub) for c in posted_categories(r.cats)]
            auths += [(rid, p, surname_of(k), r.pub) for p, k in enumerate(r.akeys) if k]
        if engine == "sqlite":
            con.executemany("INSERT INTO rec VALUES (?,?,?,?,?,?)", recs)
            con.executemany("INSERT INTO cat VALUES (?,?,?)", cats)
            con.executemany("INSERT INTO author VALUES (?,?,?,?)", auths)
        else:  # DuckDB's fast path: Arrow tables, not executemany (orders of magnitude slower there)
            import pyarrow as pa

            for name, data, cols in (
                ("rec", recs, ["rid", "arxiv_id", "pub", "cats", "akeys", "meta"]),
                ("cat", cats, ["rid", "cat", "pub"]),
                ("author", auths, ["rid", "pos", "skey", "pub"]),
            ):
                tbl = pa.Table.from_pylist([dict(zip(cols, t, strict=True)) for t in data])
                con.register("batch_tbl", tbl)
                con.execute(f"INSERT INTO {name} SELECT * FROM batch_tbl")
                con.unregister("batch_tbl")
        con.execute("COMMIT")
    out["load_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in index_ddl:
        con.execute(s)
    out["index_s"] = time.perf_counter() - t0
    times: dict[str, list[float]] = {"window": [], "author": [], "id": [], "page": []}
    for cs, lo, hi in qs["windows"]:
        cond = " OR ".join("(c.cat = ? AND c.pub BETWEEN ? AND ?)" for _ in cs)
        params = [x for c in cs for x in (c, lo, hi)]
        sql = (
            "SELECT r.rid FROM rec r WHERE r.pub BETWEEN ? AND ? AND "
            f"r.rid IN (SELECT c.rid FROM cat c WHERE {cond}) ORDER BY r.pub, r.arxiv_id"
        )
        t = time.perf_counter()
        con.execute(sql, [lo, hi, *params]).fetchall()
        times["window"].append(time.perf_counter() - t)
    for s, lo, hi in qs["authors"]:
        sql = (
            "SELECT r.rid, r.akeys FROM rec r WHERE r.rid IN "
            "(SELECT a.rid FROM author a WHERE a.skey = ? AND a.pub BETWEEN ? AND ?)"
        )
        t = time.perf_counter()
        con.execute(sql, [s, lo, hi]).fetchall()
        times["author"].append(time.perf_counter() - t)
    for aid in qs["ids"]:
        t = time.perf_counter()
        con.execute("SELECT meta FROM rec WHERE arxiv_id = ?", [aid]).fetchall()
        times["id"].append(time.perf_counter() - t)
    for k in range(20):
        start = (k * 4999) % max(1, len(rows) - 2000)
        t = time.perf_counter()
        con.execute("SELECT meta FROM rec WHERE rid BETWEEN ? AND ?", [start, start + 1999]).fetchall()
        times["page"].append(time.perf_counter() - t)
    con.close()
    for k, v in times.items():
        out[f"{k}_p50_ms"] = statistics.median(v) * 1000
        out[f"{k}_p95_ms"] = statistics.quantiles(v, n=20)[18] * 1000
    out["file_mb"] = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(run_engine(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/academiceval_index_engines"))
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    try:
        rows = prepare_rows(args.records, args.workdir)
        res = {}
        for engine in ("sqlite", "duckdb"):
            db = args.workdir / f"{engine}.db"
            cmd = [sys.executable, __file__, "--child", engine, str(rows), str(db)]
            res[engine] = json.loads(
                subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
            )
        keys = ["load_s", "index_s", "window_p50_ms", "window_p95_ms", "author_p50_ms", "author_p95_ms",
                "id_p50_ms", "id_p95_ms", "page_p50_ms", "page_p95_ms", "file_mb", "rss_mb"]  # fmt: skip
        print(f"{'':16}{'sqlite':>10}{'duckdb':>10}{'duckdb/sqlite':>15}")
        for k in keys:
            a, b = res["sqlite"][k], res["duckdb"][k]
            print(f"{k:16}{a:10.2f}{b:10.2f}{b / a if a else float('nan'):15.2f}")
        print(
            f"index_engines: records {args.records}, "
            + ", ".join(
                f"{k} {res['duckdb'][k] / res['sqlite'][k]:.2f}x"
                for k in ("load_s", "window_p95_ms", "author_p95_ms", "id_p95_ms")
            )
            + " (duckdb/sqlite)"
        )
    finally:
        shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
