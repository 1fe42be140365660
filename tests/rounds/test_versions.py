"""Demonstration eligibility by text version (issue 23): a demo's text is dated no later than its target — an
earlier version's text is used when the workspace holds one, else the paper gives no demo to that target."""

from __future__ import annotations

import time
from datetime import date

from academiceval.rounds.audit import demo_text_dates
from academiceval.rounds.build import build_round
from academiceval.rounds.config import BuildConfig
from academiceval.rounds.versions import TextDate, text_date
from academiceval.store.artifacts import load_round

CFG = dict(tasks=["title"], settings=["random:1"], category_level="archive", seed=7)


def test_text_date_rules(uws) -> None:
    meta = next(m for m in uws.iter_meta() if uws.get_paper_by_arxiv(m.arxiv_id) is not None)
    paper = uws.get_paper_by_arxiv(meta.arxiv_id)
    v1 = paper.model_copy(update={"version": 1})
    assert text_date(meta, v1) == TextDate(1, meta.published, meta.date_precision)
    assert text_date(meta, paper.model_copy(update={"version": None})).until == meta.published
    later = date(2023, 6, 1)
    m3 = meta.model_copy(update={"version": 3, "updated": later})
    assert text_date(m3, paper.model_copy(update={"version": 3})) == TextDate(3, later)  # exact
    bound = text_date(m3, paper.model_copy(update={"version": 2}))  # v2: at latest the date of v3
    assert bound.until == later and not bound.exact
    unknown = text_date(m3, paper.model_copy(update={"version": 4}))  # newer than the metadata knows
    assert unknown.until is None and not unknown.not_after(date(2099, 1, 1))
    assert TextDate(2, later).not_after(later) and not TextDate(2, later).not_after(date(2023, 5, 31))


def _demo_counts(rnd) -> dict[str, int]:
    got: dict[str, int] = {}
    for s in rnd.samples():
        for d in s.demos:
            got[d.arxiv_id] = got.get(d.arxiv_id, 0) + 1
    return got


def test_demo_texts_dated_no_later_than_their_target(uws, monkeypatch) -> None:
    """Real unarXive papers; one often-used demo paper is made a v2 text dated after every target: it stops being a
    demonstration (the targets get other demos), until its v1 text is in the workspace, which is then shown."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    m0 = build_round(uws, "before", BuildConfig(**CFG))
    rnd0 = load_round(uws.rounds_dir / "before")
    used = _demo_counts(rnd0)
    star = max(sorted(used), key=lambda a: used[a])
    assert used[star] >= 2
    test_from = m0.windows.test_from
    # its text becomes v2, dated after the test window; the metadata knows v2's date
    after = date(2023, 3, 1)
    meta, paper = uws.get_meta(star), uws.get_paper_by_arxiv(star)
    uws.upsert_meta([meta.model_copy(update={"version": 2, "updated": after})])
    uws.put_paper(paper.model_copy(update={"version": 2}))
    m1 = build_round(uws, "after", BuildConfig(**CFG))
    rnd1 = load_round(uws.rounds_dir / "after")
    assert star not in _demo_counts(rnd1)
    v = m1.build_options["validity"]
    assert v["text_versions"][star] == {"version": 2, "date": "2023-03-01", "exact": True, "paper_id": paper.paper_id}
    excluded = v["demo_text_versions"]["title"]
    assert excluded["candidates excluded: every text dated after the target"] >= used[star]
    assert demo_text_dates(list(rnd1.samples()), v["text_versions"]) == {}  # no demo slot dated after its target
    # the round built before the change shows the slots the audit reports
    old = demo_text_dates(list(rnd0.samples()), {star: {"version": 2, "date": "2023-03-01"}})
    assert sum(x["slots"] for x in old.values()) == used[star] and all(x["max_days"] > 0 for x in old.values())
    # an earlier version's text (v1, dated like the paper) in the workspace: it is shown instead
    v1 = paper.model_copy(update={"version": 1, "paper_id": f"{paper.paper_id}-v1"})
    uws.put_paper(v1)
    time.sleep(1.1)  # parse times are kept to the second
    uws.put_paper(paper.model_copy(update={"version": 2}))  # the v2 text stays the primary (parsed last)
    assert [p.paper_id for p in uws.papers_by_arxiv(star)] == [paper.paper_id, v1.paper_id]
    m2 = build_round(uws, "earlier", BuildConfig(**CFG))
    rnd2 = load_round(uws.rounds_dir / "earlier")
    shown = [d for s in rnd2.samples() for d in s.demos if d.arxiv_id == star]
    assert len(shown) == used[star] and {d.paper_id for d in shown} == {v1.paper_id}
    note = "demo shown with an earlier version's text (the newer is after the target)"
    assert m2.notes["title/random:1"][note] == used[star]
    assert m2.build_options["validity"]["text_versions"][star]["earlier"][0]["paper_id"] == v1.paper_id
    dated = demo_text_dates(list(rnd2.samples()), m2.build_options["validity"]["text_versions"])
    assert all(x["slots"] == x["undated_slots"] == 0 for x in dated.values())
    assert all(s.published < after for s in rnd2.samples() if s.split == "test") and test_from < after
