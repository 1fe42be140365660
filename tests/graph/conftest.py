"""Fixtures for the graph tests: the real astro-ph listings (7,779 papers, 2018-01..06) as a mirror."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_data import CRAWL_UNTIL, LISTINGS, N_SEEDS


@pytest.fixture(scope="session")
def listings(corpus: Path) -> Path:
    return corpus.joinpath(*LISTINGS)


@pytest.fixture(scope="session")
def mirror(listings: Path):
    """The in-process mirror over the listings (indexed once per test session)."""
    from academiceval.sources.mirror import MirrorSource

    return MirrorSource(listings)


@pytest.fixture(scope="session")
def records(mirror) -> list:
    """Every record of the mirror, oldest first (ground truth computed without the graph code)."""
    metas = [r.meta for r in mirror.index.iter_records()]
    return sorted(metas, key=lambda m: (m.published, m.arxiv_id))


@pytest.fixture(scope="session")
def seeds(records) -> list[str]:
    """Real seed authors: the first authors of the earliest papers (deterministic, taken from the data)."""
    out: list[str] = []
    for m in records:
        if m.authors and m.published <= CRAWL_UNTIL and m.authors[0].name not in out:
            out.append(m.authors[0].name)
        if len(out) == N_SEEDS:
            break
    return out
