"""A private round from a publication list: the lab's BibTeX list with a subset of its real PDFs (symlinks),
co-author and mixed settings on real data, dates known only to the year respected everywhere."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from academiceval.rounds.split import assign
from academiceval.store.models import SplitWindows

# 3 PDFs per year over 2019-2025: enough for train/val/test windows and co-author demos (the lab head is on all)
SUBSET = [
    "bryngelson-IJMF-19.pdf", "bryngelson-PRE-19.pdf", "bryngelson-EJM-19.pdf",
    "trummler-JFM-20.pdf", "bryngelson-IJMF-20.pdf", "schmidmayer-JCP-20.pdf",
    "spratt-JMPS-21.pdf", "rodriguez-CAV-21.pdf", "spratt-CAV-21.pdf",
    "bryngelson-CTR-22.pdf", "radhakrishnan-SC-22.pdf", "rodriguez-SNH-22.pdf",
    "firouznia-JCP-23.pdf", "radhakrishnan-ICMF-23.pdf", "leberre-ICMF-23.pdf",
    "radhakrishnan-CPC-24.pdf", "wilfong-SC-24.pdf", "bati-CPC-24.pdf",
    "chu-cm-25.pdf", "song-caf-25.pdf", "wilfong-SC-HPCTESTS-25.pdf",
]  # fmt: skip


@pytest.fixture(scope="module")
def lab_round(corpus: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from academiceval.graph.names import graph_from_list
    from academiceval.rounds.build import build_round
    from academiceval.rounds.config import BuildConfig
    from academiceval.sources.publist_import import import_publist
    from academiceval.store import Workspace
    from academiceval.store.artifacts import load_round

    lab = corpus / "lab_publications" / "comp-physics"
    root = tmp_path_factory.mktemp("lab") / "comp-physics"
    (root / "papers").mkdir(parents=True)
    (root / "ref.bib").symlink_to(lab / "ref.bib")
    for name in SUBSET:
        (root / "papers" / name).symlink_to(lab / "papers" / name)
    ws = Workspace(tmp_path_factory.mktemp("lab-ws"))
    rep = import_publist(ws, root)
    assert len(rep.attached) == len(SUBSET)
    graph_from_list(ws, [m for m in ws.iter_meta() if m.source == "publist"])
    config = BuildConfig(
        val_from=date(2024, 1, 1),
        test_from=date(2025, 1, 1),
        settings=["zero-shot", "random:1", "coauthor:2", "mixed:1+1"],
        tasks=["title", "abstract"],
        fetch=False,
    )
    manifest = build_round(ws, "lab", config)
    loaded = load_round(ws.rounds_dir / "lab")
    samples = list(loaded.samples())
    once = build_round(ws, "lab1", config.model_copy(update={"coauthor_cap": 1}))
    ws.close()
    return manifest, samples, loaded, once, load_round(ws.rounds_dir / "lab1")


def test_coauthor_and_mixed_samples_on_real_data(lab_round) -> None:  # type: ignore[no-untyped-def]
    _manifest, samples, *_ = lab_round
    settings = {s.setting for s in samples}
    assert {"coauthor:2", "mixed:1+1"} <= settings
    co = [s for s in samples if s.setting == "coauthor:2"]
    assert {s.split for s in co} >= {"train", "val", "test"}
    for s in co:
        assert s.date_precision == "year"
        assert len(s.demos) == 2 and all(d.origin == "coauthor" for d in s.demos)
        for d in s.demos:
            assert d.paper_id and d.date_precision == "year" and d.shared_authors
            assert d.published.year < s.published.year  # same-year demos are not known to be older
    mixed = [s for s in samples if s.setting == "mixed:1+1"]
    assert mixed and all(sorted(d.origin for d in s.demos) == ["coauthor", "random"] for s in mixed)


def test_coauthor_demos_spread_over_the_candidates(lab_round) -> None:  # type: ignore[no-untyped-def]
    """Issue 23: ranked by shared authors, then closeness in time, ties by the sample's seed; one paper serves at
    most `coauthor_cap` (3) times per config and split. `stats` reports the spread."""
    from collections import Counter

    from academiceval.rounds.stats import coauthor_spread

    manifest, samples, loaded, once, loaded1 = lab_round
    assert manifest.config["coauthor_cap"] == 3
    uses: Counter[tuple[str, str, str, str]] = Counter()
    for s in samples:
        co = [d for d in s.demos if d.origin == "coauthor"]
        uses.update((s.task, s.setting, s.split, d.arxiv_id) for d in co)
        shared = [len(d.shared_authors) for d in co]
        assert shared == sorted(shared, reverse=True)  # most shared authors first
    assert max(uses.values()) == 3
    spread = coauthor_spread(loaded)
    assert {(d.config, d.split) for d in spread} >= {("title-coauthor2", "train"), ("abstract-mixed1-1", "test")}
    for d in spread:
        info = loaded.manifest.configs[d.config]
        want = sum(n for (t, st, sp, _), n in uses.items() if (t, st, sp) == (info.task, info.setting, d.split))
        assert d.top_uses <= 3 and d.slots == want
    # a cap of 1: each paper serves once per config and split; a target left without an unused candidate is
    # skipped with the reason
    spread1 = {(d.config, d.split): d for d in coauthor_spread(loaded1)}
    assert spread1 and all(d.top_uses == 1 and d.distinct == d.slots for d in spread1.values())
    capped = "fewer than 2 co-author demos under the cap (a paper serves at most 1 times per config and split)"
    assert once.skipped["title/coauthor:2"][capped] >= 1


def test_year_dates_respect_the_windows(lab_round) -> None:  # type: ignore[no-untyped-def]
    _, samples, *_ = lab_round
    for s in samples:
        want = "test" if s.published.year >= 2025 else "val" if s.published.year == 2024 else "train"
        assert s.split == want


def test_assign_with_precision() -> None:
    w = SplitWindows(val_from=date(2024, 1, 1), test_from=date(2024, 6, 1))
    assert assign(date(2024, 1, 1), w, "year") is None  # 2024 straddles 2024-06-01
    assert assign(date(2024, 1, 1), w, "day") == "val"
    assert assign(date(2024, 7, 1), w, "month") == "test"
    assert assign(date(2024, 5, 1), w, "month") == "val"
    assert assign(date(2023, 1, 1), w, "year") == "train"


def test_knowledge_cutoff_window_respects_precision() -> None:
    from academiceval.scores.windows import Window, in_window

    for f in (in_window, lambda d, after, p="day": Window(after=after).contains(d, p)):
        assert not f(date(2024, 1, 1), date(2024, 6, 1), "year")  # a 2024 paper is not after 2024-06-01
        assert f(date(2024, 7, 1), date(2024, 6, 1), "month")
        assert f(date(2024, 1, 1), date(2023, 12, 31), "year")
        assert f(date(2024, 6, 2), date(2024, 6, 1))  # exact days: strictly after, as before
        assert not f(date(2024, 6, 1), date(2024, 6, 1))
