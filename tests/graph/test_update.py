"""Live update on the real astro-ph listings: crawl January–March, update with April–June."""

from __future__ import annotations

import shutil
from datetime import timedelta

import networkx as nx
import pytest
from graph_data import CRAWL_UNTIL, UPDATE_SINCE, UPDATE_UNTIL, DiesAfter

from academiceval.errors import ConfigError
from academiceval.graph import collect, history, refine, update
from academiceval.graph.names import author_query, fill_keys
from academiceval.graph.queries import snapshot
from academiceval.store import Workspace


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, mirror, seeds):
    """A refined first-quarter graph, built once; each test works on its own copy."""
    home = tmp_path_factory.mktemp("crawled") / "ws"
    ws = Workspace(home)
    collect(ws, mirror, seeds, max_authors=400, until=CRAWL_UNTIL)
    refine(ws)
    ws.close()
    return home


@pytest.fixture()
def ws(crawled, tmp_path):
    home = tmp_path / "ws"
    shutil.copytree(crawled, home)
    w = Workspace(home)
    yield w
    w.close()


def _visited(ws: Workspace) -> set[str]:
    return {r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE state='visited'")}


def test_node_update_finds_exactly_the_new_papers(ws, mirror, records) -> None:
    authors = _visited(ws)
    truth = {
        m.arxiv_id
        for m in records
        if UPDATE_SINCE <= m.published <= UPDATE_UNTIL and m.authors and m.authors[0].key in authors
    }
    assert len(truth) > 10
    calls0 = mirror.requests_made
    rep = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL)
    assert (
        set(rep.node_papers)
        == truth
        == {r[0] for r in ws.db.execute("SELECT arxiv_id FROM graph_paper WHERE added_by=?", (f"update:{rep.id}",))}
    )
    # the cost: a couple of 2,000-record pages, not one query per author
    assert rep.api_calls == rep.window_calls == mirror.requests_made - calls0
    assert rep.window_calls == -(-rep.window_papers // 2000) <= 2 < len(authors) // 50
    assert rep.author_calls == 0 and rep.authors_added == []

    # the original method (one window query per graph author) finds the very same papers
    per_author: set[str] = set()
    for key, name in ws.db.execute("SELECT key, name FROM graph_author WHERE state='visited'").fetchall():
        for m in mirror.iter_search(author_query(name, since=UPDATE_SINCE, until=UPDATE_UNTIL)):
            if fill_keys(m).authors[0].key == key:
                per_author.add(m.arxiv_id)
    assert per_author == truth

    rec = history(ws)[-1]
    assert rec["papers_added"] == len(truth) and rec["api_calls"] == rep.api_calls and rec["finished_at"]
    assert rec["since"] == UPDATE_SINCE.isoformat() and rec["until"] == UPDATE_UNTIL.isoformat()
    again = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL)  # nothing new the second time
    assert again.papers_added == 0 and again.id != rep.id


def test_node_and_edge_update_adds_new_coauthors(ws, mirror, records) -> None:
    before = _visited(ws)
    by_id = {m.arxiv_id: m for m in records}
    rep = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL, new_papers=len(before) // 4)
    assert rep.authors_added and rep.candidates >= len(rep.authors_added) - 1
    assert rep.papers_added >= len(before) // 4  # expanded until the target was reached
    assert rep.author_calls == len(rep.authors_added)  # one per-author query per new candidate only
    window_coauthors = set()
    for m in records:
        keys = {a.key for a in m.authors}
        if UPDATE_SINCE <= m.published <= UPDATE_UNTIL and keys & before:
            window_coauthors |= keys - before
    assert rep.authors_added[0] in window_coauthors  # the first new authors come from the new papers
    states = dict(ws.db.execute("SELECT key, state FROM graph_author").fetchall())
    assert all(states[k] == "visited" for k in rep.authors_added)
    for pid, key, pub in snapshot(ws)["papers"]:  # node features stay first-author papers, never past `until`
        assert by_id[pid].authors[0].key == key and pub <= UPDATE_UNTIL.isoformat()
    kept = [r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE in_graph=1")]
    g = nx.Graph((a, b) for a, b, _ in snapshot(ws)["edges"])
    assert nx.is_connected(g.subgraph(kept)) and rep.refine and rep.refine.authors == len(kept)


def test_pruning_inactive_authors_and_old_papers(ws, mirror) -> None:
    inactive_after = UPDATE_UNTIL - timedelta(days=45)
    rep = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL, inactive_after=inactive_after, retention=timedelta(days=120))
    assert rep.authors_pruned > 0 and rep.papers_pruned > 0
    last_active = dict(
        ws.db.execute(
            """SELECT s.author_key, MAX(m.published) FROM authorship s JOIN paper_meta m ON m.arxiv_id=s.arxiv_id
               GROUP BY s.author_key"""
        ).fetchall()
    )
    for key in _visited(ws):
        assert last_active[key] >= inactive_after.isoformat()
    cutoff = (UPDATE_UNTIL - timedelta(days=120)).isoformat()
    assert all(pub >= cutoff for _, _, pub in snapshot(ws)["papers"])
    pruned = {r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE state='pruned'")}
    assert len(pruned) == rep.authors_pruned
    assert not any(a in pruned or b in pruned for a, b, _ in snapshot(ws)["edges"])
    assert all(w >= 1 for _, _, w in snapshot(ws)["edges"])
    kept = [r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE in_graph=1")]
    g = nx.Graph((a, b) for a, b, _ in snapshot(ws)["edges"])
    assert kept and nx.is_connected(g.subgraph(kept))


def test_update_refuses_bad_options(ws, mirror, tmp_path) -> None:
    with pytest.raises(ConfigError, match="after"):
        update(ws, mirror, UPDATE_UNTIL, UPDATE_SINCE)
    with pytest.raises(ConfigError, match="collect"):
        update(Workspace(tmp_path / "empty"), mirror, UPDATE_SINCE, UPDATE_UNTIL)


def test_interrupted_update_resumes_to_the_same_graph(ws, mirror, crawled, tmp_path) -> None:
    ref_home = tmp_path / "ref"
    shutil.copytree(crawled, ref_home)
    ref = Workspace(ref_home)
    target = 60
    done = update(ref, mirror, UPDATE_SINCE, UPDATE_UNTIL, new_papers=target)
    assert done.author_calls > 12
    for n in (2, 9, done.author_calls // 2):  # inside the window pages, then inside the expansion
        with pytest.raises(KeyboardInterrupt):
            update(ws, DiesAfter(mirror, n), UPDATE_SINCE, UPDATE_UNTIL, new_papers=target)
        ws.close()
    again = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL, new_papers=target)
    assert snapshot(ws) == snapshot(ref)
    assert again.id == 1 == done.id and again.papers_added == done.papers_added  # one record, resumed
    assert [h["finished_at"] is not None for h in history(ws)] == [True]


def test_update_keeps_the_popularity_control(ws, mirror) -> None:
    refine(ws, max_papers_per_author=1, seed=3)
    rep = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL)
    assert rep.refine and rep.refine.papers_capped > 0
    per_author = ws.db.execute(
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM graph_paper WHERE sampled=1 GROUP BY author_key)"
    ).fetchone()[0]
    assert per_author == 1


def test_large_windows_are_split_without_losing_papers(ws, mirror, crawled, tmp_path) -> None:
    ref_home = tmp_path / "ref"
    shutil.copytree(crawled, ref_home)
    whole = update(Workspace(ref_home), mirror, UPDATE_SINCE, UPDATE_UNTIL)
    split = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL, max_window_results=700)  # forces several halvings
    assert split.window_calls > 4 > whole.window_calls
    assert split.window_papers == whole.window_papers and split.node_papers == whole.node_papers
    assert snapshot(ws) == snapshot(Workspace(ref_home))


def test_update_graph_counts_add_up_and_say_what_refining_removed(ws, mirror) -> None:
    """Issue 14: "authors added 0" beside a graph that grew from 5 to 10 must add up."""
    before = {r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE in_graph=1")}
    rep = update(ws, mirror, UPDATE_SINCE, UPDATE_UNTIL, new_papers=20)
    after = {r[0] for r in ws.db.execute("SELECT key FROM graph_author WHERE in_graph=1")}
    assert (rep.graph_before, rep.graph_after) == (len(before), len(after))
    assert rep.graph_before + rep.joined_new + rep.joined_crawled - rep.left_no_paper - rep.left_component == len(after)
    assert rep.joined_new <= len(rep.authors_added)
    text = rep.graph_change()
    assert text.startswith(f"{len(before)} → {len(after)} (") and "outside the largest component" in text
