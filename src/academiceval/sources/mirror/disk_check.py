"""What a disk index holds, independent of how it was built: for checking that a build killed at any point and
run again equals an uninterrupted one (tests/sources/test_disk_kill.py, benchmarks/mirror_kill.py).

Row ids (`rid`, FTS rowids, the evidence counter) depend on the order rows arrived, so postings are keyed by the
record's arXiv id instead; everything else is compared as stored.
"""

from __future__ import annotations

from typing import Any

Content = dict[str, list[tuple[Any, ...]]]


def index_content(idx: Any) -> Content:
    """Every table of a `DiskIndex` as sorted rows keyed by arXiv id (see the module docstring)."""
    c = idx.conn()
    q: dict[str, str] = {
        "rec": "SELECT arxiv_id, pub, upd, usort, source, cats, akeys, meta, path, fmt FROM rec",
        "cat": "SELECT r.arxiv_id, c.cat, c.pub FROM cat c JOIN rec r ON r.rid = c.rid",
        "author": "SELECT r.arxiv_id, a.pos, a.skey, a.pub FROM author a JOIN rec r ON r.rid = a.rid",
        "title": "SELECT r.arxiv_id, t.title FROM title_fts t JOIN rec r ON r.rid = t.rowid",
        "paper": "SELECT r.arxiv_id, p.json FROM paper p JOIN rec r ON r.rid = p.rid",
        "pdf": "SELECT arxiv_id, version, path FROM pdf",
        "error": "SELECT loc, message, path, code, hint, note FROM error",
        "evidence": "SELECT arxiv_id, authors FROM name_evidence",
        "file": "SELECT path, fmt, size, mtime_ns, head, offset, tail, lines, records, errors, done FROM file",
        "kv": "SELECT k, v FROM kv",
        "orphans": "SELECT 'cat', rid FROM cat WHERE rid NOT IN (SELECT rid FROM rec) UNION ALL "
        "SELECT 'author', rid FROM author WHERE rid NOT IN (SELECT rid FROM rec) UNION ALL "
        "SELECT 'title', rowid FROM title_fts WHERE rowid NOT IN (SELECT rid FROM rec)",
    }
    out: Content = {name: sorted(c.execute(sql).fetchall(), key=repr) for name, sql in q.items()}
    out["indexes"] = sorted(c.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"))
    return out


def differences(a: Content, b: Content, limit: int = 3) -> list[str]:
    """Human-readable differences between two `index_content`s (empty when equal)."""
    out = []
    for table in sorted(set(a) | set(b)):
        ra, rb = a.get(table, []), b.get(table, [])
        if ra != rb:
            only_a = [r for r in ra if r not in rb][:limit]
            only_b = [r for r in rb if r not in ra][:limit]
            out.append(
                f"{table}: {len(ra)} vs {len(rb)} rows; only in first {only_a!r:.300}; only in second {only_b!r:.300}"
            )
    return out
