"""Fixtures for the sources tests: a mirror directory made of symlinks into ../shared/corpus (never copies),
plus a few deliberately broken files written by the tests themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

LISTINGS = ("astro-ph_listing_2018-04.txt",)
PDFS = ("2203.00130v1.pdf", "1111.2011v2.pdf", "0807.3577_JCAP_version.pdf")

BROKEN_ABS = """------------------------------------------------------------------------------
\\\\
From: nobody <x@example.org>
Date: Tue, 16 Sep 1997 14:44:58 GMT   (11kb)

Title: A record without its arXiv id line
Authors: Jane Doe
\\\\
  Nothing.
\\\\
"""


@pytest.fixture(scope="session")
def mirror_dir(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mirror")
    meta = corpus / "metadata"
    (root / "listings").mkdir()
    for name in LISTINGS:
        (root / "listings" / name).symlink_to(meta / "arxiv_browse_astro-ph_listings" / name)
    (root / "abs").symlink_to(meta / "arxiv_browse_abs", target_is_directory=True)
    (root / "kaggle.jsonl").symlink_to(meta / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    (root / "scalar.json").symlink_to(meta / "scalar_iclr2025_metadata.json")
    (root / "scalar_titles.json").symlink_to(meta / "scalar_iclr2025_title_to_arxiv_sim0.8.json")
    (root / "atom").symlink_to(corpus / "arxiv_api" / "arxiv.py_fixtures", target_is_directory=True)
    (root / "unarxive.jsonl").symlink_to(corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl")
    (root / "pdf").mkdir()
    for name in PDFS:
        (root / "pdf" / name).symlink_to(corpus / "pdf" / name)
    bad = root / "bad"
    bad.mkdir()
    (bad / "noid.abs").write_text(BROKEN_ABS)
    good_line = (meta / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl").read_text().splitlines()[0]
    (bad / "truncated.jsonl").write_text(good_line + "\n" + good_line[: len(good_line) // 2] + "\n")
    (bad / "html.xml").write_text("<feed><!DOCTYPE html><html><body>busy</body></html>")
    (bad / "notes.txt").write_text("not arXiv data at all\n")
    return root


@pytest.fixture(scope="session")
def mirror(mirror_dir: Path):
    from academiceval.sources.mirror import MirrorSource

    return MirrorSource(mirror_dir)
