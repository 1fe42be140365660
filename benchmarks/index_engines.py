"""The mirror index engine: today's SQLite + zstd `DiskIndex` against DuckDB (a native table, and Parquet files
read by DuckDB), on the same snapshot (issue 27 item 3). Every figure is a median of `--repeats` (≥ 5) runs with
the contenders interleaved (order shuffled per round, each in its own process), and the load average is printed.

A. Build from the snapshot (`mirror_scale.generate`: N Kaggle lines from real corpus fields):
   - `sqlite`: `DiskIndex.update` — the product: parse + merge + postings + FTS + zstd records (1 parse worker);
   - `duckdb-load`: the issue's baseline, `CREATE TABLE AS SELECT * FROM read_json(snapshot)` (2 threads): a raw
     load that computes nothing the index needs (no author keys, postings, merged records).
B. The engines on the same prepared rows (`disk_rows.prepare`, parsed once; the Python parse is the same cost
   whichever engine stores the rows): load in batches of 5,000 with the upsert the index needs, secondary
   indexes, file size, peak RSS; queries as `graph update` issues them (month window + categories → ordered ids;
   surname + 1-year window; point look-ups; a page of 2,000 records fetched and decoded to `PaperMeta`); an
   incremental update of +1% rows. Engines: `sqlite`, `duckdb` (native tables, ART indexes, Arrow inserts — its
   fast path), `parquet` (rows written as Parquet, queried by DuckDB; an update rewrites a file).

    nice python benchmarks/index_engines.py --records 300000
"""

from __future__ import annotations

import argparse
import json
import os
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
from typing import Any

HERE = Path(__file__).resolve().parent
BATCH = 5000
ENGINES = ("sqlite", "duckdb", "parquet")


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def _month(y: int, m: int) -> tuple[int, int]:
    lo = int(datetime(y, m, 1, tzinfo=UTC).timestamp())
    y2, m2 = (y + 1, 1) if m == 12 else (y, m + 1)
    return lo, int(datetime(y2, m2, 1, tzinfo=UTC).timestamp()) - 1


def _hwm_mb() -> float:
    """This process's peak RSS (VmHWM: reset at exec, unlike `ru_maxrss`, which keeps the forking parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _usage() -> dict[str, float]:
    """CPU of this process and its children (the parse worker), peak RSS of this process + its largest child."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
            "rss_mb": _hwm_mb() + kids.ru_maxrss / 1024}  # fmt: skip


# ---- A: builds from the snapshot ----------------------------------------------------------------------------
def build(kind: str, snap: Path, out: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    if kind == "sqlite":
        from academiceval.sources.mirror.disk import DiskIndex

        idx = DiskIndex(out, snap.parent)
        idx.update()
        idx.close()
    else:
        import duckdb

        con = duckdb.connect(str(out))
        con.execute("SET threads=2")
        con.execute(f"CREATE TABLE raw AS SELECT * FROM read_json('{snap}', format='newline_delimited')")
        con.close()
    wall = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in out.parent.glob(out.name + "*"))
    return {"wall_s": wall, **_usage(), "file_mb": size / 1e6}


# ---- B: the engines on prepared rows ------------------------------------------------------------------------
def prepare_rows(snap: Path, out: Path) -> None:
    from academiceval.sources.mirror.disk_rows import LINE_FORMATS, parse_line

    rows = []
    with snap.open("rb") as f:
        for i, line in enumerate(f, 1):
            rows.append(parse_line(line, LINE_FORMATS["kaggle"], f"x:{i}", 0))
    out.write_bytes(pickle.dumps(rows))


def _queries(rows: list) -> dict[str, list]:
    rng = random.Random(7)
    cats = sorted({c for r in rows[:50000] for c in r.cats})
    astro = [c for c in cats if c.startswith("astro-ph")]
    months = [(y, m) for y in range(2017, 2026) for m in range(1, 13)]
    windows = []
    for _ in range(60):
        cs = rng.sample(astro, rng.randint(1, len(astro))) + rng.sample(cats, 2)
        windows.append((cs, *_month(*rng.choice(months))))
    authors = []
    for _ in range(200):
        r = rng.choice(rows)
        s = rng.choice([k for k in r.akeys if k] or ["smith"]).split()[-1]
        lo, hi = _month(*rng.choice(months))
        authors.append((s, lo - 365 * 86400, hi))
    ids = [rng.choice(rows).arxiv_id for _ in range(500)]
    return {"windows": windows, "authors": authors, "ids": ids}


class Engine:
    """One engine's tables: rec(rid, arxiv_id, pub, cats, akeys, meta), cat(rid, cat, pub), author(rid, pos,
    skey, pub) — the disk index's layout — with the same SQL for every engine."""

    def __init__(self, kind: str, path: Path) -> None:
        self.kind, self.path = kind, path
        if kind == "sqlite":
            import sqlite3

            self.con = sqlite3.connect(path, isolation_level=None)
            for p in ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-65536"):
                self.con.execute(f"PRAGMA {p}")
        else:
            import duckdb

            self.con = duckdb.connect(str(path) if kind == "duckdb" else ":memory:")
            self.con.execute("SET threads=2")
        if kind != "parquet":
            for s in ("CREATE TABLE rec (rid BIGINT PRIMARY KEY, arxiv_id VARCHAR UNIQUE, pub BIGINT, cats VARCHAR, "
                      "akeys VARCHAR, meta BLOB)", "CREATE TABLE cat (rid BIGINT, cat VARCHAR, pub BIGINT)",
                      "CREATE TABLE author (rid BIGINT, pos INTEGER, skey VARCHAR, pub BIGINT)"):  # fmt: skip
                self.con.execute(s)
        self.parts = 0

    def q(self, sql: str, params: list) -> list:
        return self.con.execute(sql, params).fetchall()

    def _tables(self, recs: list, cats: list, auths: list) -> dict:
        import pyarrow as pa

        cols = {"rec": ["rid", "arxiv_id", "pub", "cats", "akeys", "meta"], "cat": ["rid", "cat", "pub"],
                "author": ["rid", "pos", "skey", "pub"]}  # fmt: skip
        return {n: pa.table(dict(zip(cols[n], map(list, zip(*d, strict=True)), strict=True)))
                for n, d in (("rec", recs), ("cat", cats), ("author", auths)) if d}  # fmt: skip

    def upsert(self, chunk: list, next_rid: int) -> int:
        """Look up which ids exist (the merge the index does), then insert the batch's rows and postings."""
        from academiceval.sources.mirror.disk_rows import posted_categories
        from academiceval.sources.names import surname_of

        ids = [r.arxiv_id for r in chunk]
        if self.kind != "parquet" or self.parts:
            src = "rec" if self.kind != "parquet" else f"read_parquet('{self.path}/rec-*.parquet')"
            for j in range(0, len(ids), 900):
                part = ids[j : j + 900]
                self.q(f"SELECT rid FROM {src} WHERE arxiv_id IN ({','.join('?' * len(part))})", part)
        recs, cats, auths = [], [], []
        for r in chunk:
            recs.append((next_rid, r.arxiv_id, r.pub, " ".join(r.cats), "\x1f".join(r.akeys), r.blob))
            cats += [(next_rid, c, r.pub) for c in posted_categories(r.cats)]
            auths += [(next_rid, p, surname_of(k), r.pub) for p, k in enumerate(r.akeys) if k]
            next_rid += 1
        if self.kind == "sqlite":
            self.con.execute("BEGIN")
            self.con.executemany("INSERT INTO rec VALUES (?,?,?,?,?,?)", recs)
            self.con.executemany("INSERT INTO cat VALUES (?,?,?)", cats)
            self.con.executemany("INSERT INTO author VALUES (?,?,?,?)", auths)
            self.con.execute("COMMIT")
        elif self.kind == "duckdb":  # Arrow, DuckDB's fast path (executemany is orders of magnitude slower there)
            self.con.execute("BEGIN")
            for name, tbl in self._tables(recs, cats, auths).items():
                self.con.register("batch_tbl", tbl)
                self.con.execute(f"INSERT INTO {name} SELECT * FROM batch_tbl")
                self.con.unregister("batch_tbl")
            self.con.execute("COMMIT")
        else:
            import pyarrow.parquet as pq

            self.path.mkdir(exist_ok=True)
            for name, tbl in self._tables(recs, cats, auths).items():
                pq.write_table(tbl, self.path / f"{name}-{self.parts:05d}.parquet")
            self.parts += 1
        return next_rid

    def finish(self) -> None:
        if self.kind == "parquet":  # views over the files (the ids in one sorted file per table would be next)
            for name in ("rec", "cat", "author"):
                self.con.execute(
                    f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{self.path}/{name}-*.parquet')"
                )
            return
        for s in ("CREATE INDEX cat_q ON cat(cat, pub)", "CREATE INDEX author_q ON author(skey, pub)",
                  "CREATE INDEX rec_pub ON rec(pub, arxiv_id)"):  # fmt: skip
            self.con.execute(s)

    def size_mb(self) -> float:
        if self.kind == "parquet":
            return sum(p.stat().st_size for p in self.path.glob("*.parquet")) / 1e6
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*")) / 1e6


def engine_load(kind: str, rows_path: Path, db: Path) -> dict[str, float]:
    """Runs in a child process: load all rows but the last 1% (kept for the update), build the indexes."""
    rows = pickle.loads(rows_path.read_bytes())
    base = rows[: len(rows) - max(1, len(rows) // 100)]
    eng = Engine(kind, db)
    t0, c0 = time.perf_counter(), time.process_time()
    rid = 1
    for i in range(0, len(base), BATCH):
        rid = eng.upsert(base[i : i + BATCH], rid)
    out = {"load_s": time.perf_counter() - t0, "load_cpu_s": time.process_time() - c0}
    t0 = time.perf_counter()
    eng.finish()
    out["index_s"] = time.perf_counter() - t0
    if kind != "sqlite":
        eng.con.close()
    out["file_mb"] = eng.size_mb()
    out["rss_mb"] = _hwm_mb()
    return out


def engine_queries(rows_path: Path, dbs: dict[str, Path], passes: int) -> dict[str, dict[str, float]]:
    """Runs in a child process: the same queries on every engine, interleaved query by query (engine order
    shuffled each time), `passes` passes; then the update (+1% rows in `passes` slices, interleaved)."""
    import duckdb

    from academiceval.sources.mirror.disk_rows import unpack
    from academiceval.store.paper_models import PaperMeta

    rows = pickle.loads(rows_path.read_bytes())
    grow = max(1, len(rows) // 100)
    base, extra = rows[:-grow], rows[-grow:]
    qs = _queries(base)
    del rows, base
    engines: dict[str, Engine] = {}
    for kind, db in dbs.items():
        eng = Engine.__new__(Engine)
        eng.kind, eng.path, eng.parts = kind, db, 0
        if kind == "sqlite":
            import sqlite3

            eng.con = sqlite3.connect(db, isolation_level=None)
            eng.con.execute("PRAGMA cache_size=-65536")
        else:
            eng.con = duckdb.connect(str(db) if kind == "duckdb" else ":memory:")
            eng.con.execute("SET threads=2")
            if kind == "parquet":
                eng.parts = len(list(db.glob("rec-*.parquet")))
                eng.finish()
        engines[kind] = eng
    rng = random.Random(3)
    times: dict[str, dict[str, list[float]]] = {k: {"window": [], "author": [], "id": [], "page": [], "update": []}
                                                for k in engines}  # fmt: skip

    def each(kind_fn: Any) -> None:
        order = list(engines)
        rng.shuffle(order)
        for k in order:
            kind_fn(k)

    def timed(k: str, what: str, sql: str, params: list, decode: bool = False) -> None:
        t = time.perf_counter()
        got = engines[k].q(sql, params)
        if decode:
            [PaperMeta.model_validate_json(unpack(b)) for (b,) in got]
        times[k][what].append(time.perf_counter() - t)

    for _ in range(passes):
        for cs, lo, hi in qs["windows"]:
            cond = " OR ".join("(c.cat = ? AND c.pub BETWEEN ? AND ?)" for _ in cs)
            sql = (f"SELECT r.rid FROM rec r WHERE r.rid IN (SELECT c.rid FROM cat c WHERE {cond}) "
                   "ORDER BY r.pub, r.arxiv_id")  # fmt: skip
            each(lambda k, sql=sql, cs=cs, lo=lo, hi=hi: timed(k, "window", sql, [x for c in cs for x in (c, lo, hi)]))
        for s, lo, hi in qs["authors"]:
            sql = ("SELECT r.rid, r.akeys FROM rec r WHERE r.rid IN "
                   "(SELECT a.rid FROM author a WHERE a.skey = ? AND a.pub BETWEEN ? AND ?)")  # fmt: skip
            each(lambda k, sql=sql, s=s, lo=lo, hi=hi: timed(k, "author", sql, [s, lo, hi]))
        for aid in qs["ids"][:100]:
            each(lambda k, aid=aid: timed(k, "id", "SELECT meta FROM rec WHERE arxiv_id = ?", [aid]))
        for cs, lo, hi in qs["windows"][:10]:  # a page: the first 2,000 hits, fetched and decoded
            cond = " OR ".join("(c.cat = ? AND c.pub BETWEEN ? AND ?)" for _ in cs)
            sql = (f"SELECT r.meta FROM rec r WHERE r.rid IN (SELECT c.rid FROM cat c WHERE {cond}) "
                   "ORDER BY r.pub, r.arxiv_id LIMIT 2000")  # fmt: skip
            each(lambda k, sql=sql, cs=cs, lo=lo, hi=hi: timed(k, "page", sql, [x for c in cs for x in (c, lo, hi)],
                                                                 True))  # fmt: skip
    step = max(1, len(extra) // passes)
    next_rid = 10**9
    for i in range(passes):  # the update: +1% in `passes` slices, each engine upserting the same slice
        part = extra[i * step : (i + 1) * step]

        def upd(k: str, part: list = part, i: int = i) -> None:
            t = time.perf_counter()
            engines[k].upsert(part, next_rid + i * step)
            times[k]["update"].append(time.perf_counter() - t)

        each(upd)
    out: dict[str, dict[str, float]] = {}
    for k, ts in times.items():
        out[k] = {}
        for what, v in ts.items():
            out[k][f"{what}_p50_ms"] = statistics.median(v) * 1000
            out[k][f"{what}_p95_ms"] = statistics.quantiles(v, n=20)[18] * 1000 if len(v) > 1 else v[0] * 1000
        out[k]["samples"] = len(ts["window"])
    for k in times:  # the share of paired samples (same query, same pass) where the engine beat SQLite
        for what, v in times[k].items():
            base = times["sqlite"][what]
            out[k][f"{what}_wins"] = sum(a < b for a, b in zip(v, base, strict=True)) / max(1, len(v))
    return out


# ---- the driver ---------------------------------------------------------------------------------------------
def child(*args: str) -> dict[str, float]:
    res = subprocess.run([sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def table(title: str, results: dict[str, list[dict[str, float]]], keys: list[str], base: str) -> dict[str, dict]:
    """Medians per contender, and each contender / `base` (> 1 = more than the baseline)."""
    med = {c: {k: statistics.median(r[k] for r in rs) for k in keys} for c, rs in results.items()}
    names = list(results)
    print(f"\n{title} (medians of {len(results[base])} interleaved runs; ratio = contender / {base})")
    print(
        f"{'':16}" + "".join(f"{n:>14}" for n in names) + "".join(f"{n + '/' + base:>20}" for n in names if n != base)
    )
    for k in keys:
        vals = [med[n][k] for n in names]
        ratios = [med[n][k] / med[base][k] if med[base][k] else float("nan") for n in names if n != base]
        print(f"{k:16}" + "".join(f"{v:14.2f}" for v in vals) + "".join(f"{r:20.2f}" for r in ratios))
    return med


def check_ratios(runs: dict[str, list[dict[str, float]]], med: dict[str, dict], base: str, keys: list[str]) -> None:
    """Refuse a median ratio that contradicts the runs: when every run of a contender was below every run of the
    baseline, its ratio must be below 1 (and above 1 in the opposite case)."""
    for name, rs in runs.items():
        for k in keys:
            a, b = [r[k] for r in rs], [r[k] for r in runs[base]]
            ratio = med[name][k] / med[base][k] if med[base][k] else float("nan")
            if (max(a) < min(b) and ratio >= 1) or (min(a) > max(b) and ratio <= 1):
                raise SystemExit(f"refusing the {name}/{base} ratio of {k} ({ratio:.2f}): it contradicts every run")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        what = sys.argv[2]
        if what == "build":
            print(json.dumps(build(sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))))
        elif what == "prepare":
            prepare_rows(Path(sys.argv[3]), Path(sys.argv[4]))
            print(json.dumps(_usage()))
        elif what == "load":
            print(json.dumps(engine_load(sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))))
        else:
            dbs = {k: Path(v) for k, v in json.loads(sys.argv[4]).items()}
            print(json.dumps(engine_queries(Path(sys.argv[3]), dbs, int(sys.argv[5]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--snapshot", type=Path, help="an existing snapshot (else generated)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/academiceval_index_engines"))
    ap.add_argument("--skip-builds", action="store_true", help="only part B")
    args = ap.parse_args()
    if args.repeats < 5:
        raise SystemExit("--repeats must be at least 5")
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    rng = random.Random(11)
    try:
        snap = args.snapshot
        if snap is None:
            sys.path.insert(0, str(HERE))
            from mirror_scale import generate, material

            snap = args.workdir / "snap" / "arxiv-metadata-oai-snapshot.json"
            snap.parent.mkdir()
            generate(snap, args.records, material())
        n = sum(1 for _ in snap.open("rb"))
        print(f"snapshot: {n:,} records, {snap.stat().st_size / 1e6:,.0f} MB ({load()})")
        if not args.skip_builds:
            builds: dict[str, list[dict[str, float]]] = {"sqlite": [], "duckdb-load": []}
            for r in range(args.repeats):
                order = list(builds)
                rng.shuffle(order)
                for kind in order:
                    out = args.workdir / f"build-{kind}.db"
                    for p in args.workdir.glob(out.name + "*"):
                        p.unlink()
                    res = child("build", kind.split("-")[0], str(snap), str(out))
                    builds[kind].append(res)
                    print(f"  build round {r + 1} {kind}: {res['wall_s']:.1f} s wall, {res['cpu_s']:.1f} s CPU, "
                          f"{res['rss_mb']:.0f} MB, {res['file_mb']:.0f} MB ({load()})", flush=True)  # fmt: skip
            med = table("A. build from the snapshot", builds, ["wall_s", "cpu_s", "rss_mb", "file_mb"], "duckdb-load")
            check_ratios(builds, med, "duckdb-load", ["wall_s", "cpu_s", "rss_mb", "file_mb"])
            print(f"index_engines build: records {n}, sqlite/duckdb-load wall "
                  f"{med['sqlite']['wall_s'] / med['duckdb-load']['wall_s']:.2f}x, CPU "
                  f"{med['sqlite']['cpu_s'] / med['duckdb-load']['cpu_s']:.2f}x, peak RSS sqlite "
                  f"{med['sqlite']['rss_mb']:.0f} MB vs {med['duckdb-load']['rss_mb']:.0f} MB ({load()})")  # fmt: skip
        rows = args.workdir / "rows.pickle"
        prep = child("prepare", str(snap), str(rows))
        print(f"\nB. prepared rows (the Python parse, shared by every engine): {prep['cpu_s']:.1f} s CPU ({load()})")
        loads: dict[str, dict[str, float]] = {}
        dbs: dict[str, Path] = {}
        for kind in ENGINES:  # one load each (the repeated build figures are part A's)
            dbs[kind] = args.workdir / f"engine-{kind}.db"
            loads[kind] = child("load", kind, str(rows), str(dbs[kind]))
            ld = loads[kind]
            print(
                f"  {kind}: load {ld['load_s']:.1f} s ({ld['load_cpu_s']:.1f} s CPU), indexes {ld['index_s']:.1f} s, "
                f"{ld['file_mb']:.0f} MB, peak RSS {ld['rss_mb']:.0f} MB (one load; {load()})",
                flush=True,
            )
        res = child("queries", str(rows), json.dumps({k: str(v) for k, v in dbs.items()}), str(args.repeats))
        keys = [k for k in res["sqlite"] if k != "samples" and not k.endswith("_wins")]
        for name in ENGINES[1:]:  # refuse a median ratio that the paired samples contradict
            for what in ("window", "author", "id", "page", "update"):
                ratio = res[name][f"{what}_p50_ms"] / res["sqlite"][f"{what}_p50_ms"]
                wins = res[name][f"{what}_wins"]
                if abs(ratio - 1) > 0.05 and abs(wins - 0.5) > 0.1 and (ratio < 1) != (wins > 0.5):
                    raise SystemExit(f"refusing {name}/sqlite {what} p50 ratio {ratio:.2f}: it won {wins:.0%} of pairs")
        print(f"\nB. queries on the loaded engines ({args.repeats} passes, engines interleaved query by query; "
              f"ratio = engine / sqlite; {load()})")  # fmt: skip
        print(f"{'':18}" + "".join(f"{n:>12}" for n in ENGINES) + "".join(f"{n + '/sqlite':>16}" for n in ENGINES[1:]))
        for k in keys:
            vals = [res[n][k] for n in ENGINES]
            ratios = [res[n][k] / res["sqlite"][k] if res["sqlite"][k] else float("nan") for n in ENGINES[1:]]
            print(f"{k:18}" + "".join(f"{v:12.2f}" for v in vals) + "".join(f"{r:16.2f}" for r in ratios))
        print(
            f"index_engines: records {n}, "
            + ", ".join(f"{k} {res['duckdb'][k] / res['sqlite'][k]:.2f}x"
                        for k in ("window_p95_ms", "author_p95_ms", "id_p95_ms", "page_p95_ms", "update_p50_ms"))
            + f" (duckdb/sqlite, {args.repeats} interleaved passes; {load()})"
        )  # fmt: skip
    finally:
        shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
