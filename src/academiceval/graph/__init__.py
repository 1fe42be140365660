"""The co-author graph: breadth-first crawl, refinement to the largest component, live update and pruning.

Public API:
    collect(ws, source, seed_authors, *, max_authors, ...) -> CrawlReport   (resumable BFS crawl)
    refine(ws, *, max_papers_per_author=None, seed=0) -> RefineReport      (largest component)
    update(ws, source, since, until=None, new_papers=None, inactive_after=None, retention=None) -> UpdateReport
    stats(ws) -> GraphStats
    queries.coauthors(ws, author_key), queries.coauthor_papers(ws, arxiv_id, k)
"""

from academiceval.graph.crawl import CrawlReport, collect
from academiceval.graph.queries import GraphStats, coauthor_papers, coauthors, first_author_papers, stats
from academiceval.graph.refine import RefineReport, refine
from academiceval.graph.update import UpdateReport, history, update

__all__ = [
    "CrawlReport",
    "GraphStats",
    "RefineReport",
    "UpdateReport",
    "coauthor_papers",
    "coauthors",
    "collect",
    "first_author_papers",
    "history",
    "refine",
    "stats",
    "update",
]
