"""Constants shared by the graph tests (a module with a unique name: tests/ has no packages)."""

from __future__ import annotations

from datetime import date

LISTINGS = ("metadata", "arxiv_browse_astro-ph_listings")
CRAWL_UNTIL = date(2018, 3, 31)  # crawl the first quarter ...
UPDATE_SINCE = date(2018, 4, 1)  # ... then update with the second
UPDATE_UNTIL = date(2018, 6, 30)
N_SEEDS = 20
