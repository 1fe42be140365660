"""The Related-Work citation corpus: resolution through a real mirror source, shuffling, distractors."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from academiceval.rounds.citations import CitationResolver, cited_in_related_work, title_similarity
from academiceval.rounds.config import BuildConfig
from academiceval.rounds.prompts import render_prompt
from academiceval.store.paper_models import PaperMeta, Reference


@pytest.fixture(scope="module")
def abs_source(corpus: Path):
    from academiceval.sources.mirror import MirrorSource

    return MirrorSource(corpus / "metadata" / "arxiv_browse_abs")


def test_resolve_by_id_and_by_fuzzy_title_through_the_source(workspace, abs_source) -> None:
    metas = [m for m in abs_source.iter_search("cat:hep-th", limit=40) if len(m.title) > 40][:6]
    assert len(metas) >= 4
    by_id = Reference(index=0, raw="x", arxiv_id=metas[0].arxiv_id)
    # a title as a reference list prints it: other case, punctuation dropped, one character wrong
    t = metas[1].title
    garbled = (t[:10] + ("x" if t[10] != "x" else "y") + t[11:]).upper().replace(":", "")
    assert title_similarity(garbled, t) >= 0.9
    by_title = Reference(index=1, raw="y", title=garbled)
    wrong = Reference(index=2, raw="z", title="An entirely different paper about cooking pasta at home")
    r = CitationResolver(workspace, abs_source)
    found, st = r.resolve([by_id, by_title, wrong])
    assert [m.arxiv_id for m in found] == [metas[0].arxiv_id, metas[1].arxiv_id]
    assert st.resolved == {"id-mirror": 1, "title-mirror": 1} and sum(st.unresolved.values()) == 1
    # cached, misses included: the same references resolve again without a single mirror query
    asked = abs_source.requests_made
    again = CitationResolver(workspace, abs_source)
    found2, st2 = again.resolve([by_id, by_title, wrong])
    assert [m.arxiv_id for m in found2] == [m.arxiv_id for m in found]
    assert sum(st2.unresolved.values()) == 1 and abs_source.requests_made == asked
    assert again.resolve([by_id], exclude=metas[0].arxiv_id)[1].unresolved == {"cites the target itself": 1}


def test_related_work_samples_with_shuffled_corpus_and_distractors(uws, tmp_path) -> None:
    """Real unarXive papers whose related-work sections cite arXiv papers; the cited papers' records are made
    from the paper's own bib entries (the offline corpus has no metadata for them)."""
    from academiceval.rounds.build import build_round
    from academiceval.store.artifacts import load_round

    cited_ids: set[str] = set()
    targets = []
    for meta in uws.iter_meta():
        paper = uws.get_paper_by_arxiv(meta.arxiv_id)
        refs = [r for r in cited_in_related_work(paper) if r.arxiv_id]
        if refs:
            targets.append(meta.arxiv_id)
        for r in refs:
            if r.arxiv_id not in cited_ids and uws.get_meta(r.arxiv_id) is None:
                cited_ids.add(r.arxiv_id)
                uws.upsert_meta(
                    [
                        PaperMeta(
                            arxiv_id=r.arxiv_id,
                            title=r.raw[:200],
                            published=date(2020, 1, 1),
                            primary_category="math.PR",
                            abstract=f"Abstract of {r.arxiv_id}.",
                        )
                    ]
                )
    # two, not three: since issue 16 a "Related works" subsection of the Introduction (2212.11826) is part of the
    # introduction (role inheritance), so it no longer yields a related-work target
    assert len(targets) >= 2
    m = build_round(
        uws,
        "rw",
        BuildConfig(settings=["zero-shot"], tasks=("related_work",), distractors=3, seed=5),
        out_dir=tmp_path / "rw",
    )
    rnd = load_round(tmp_path / "rw")
    samples = [s for c in rnd.configs() for s in rnd.samples(c)]
    assert samples and {s.task for s in samples} == {"related_work"}
    assert m.build_options["citations"]["resolved: id-workspace"] >= len(samples)
    cited_first_everywhere = True
    for s in samples:
        real = [c for c in s.citations if not c.distractor]
        fake = [c for c in s.citations if c.distractor]
        assert real and len(fake) == 3
        # resolved cited works are the stored records; the others stay, with their reference's title and no abstract
        assert all(c.arxiv_id in cited_ids for c in real if c.resolved) and any(c.resolved for c in real)
        assert all(not c.abstract and c.title and c.found_by == "" for c in real if not c.resolved)
        assert not any(c.arxiv_id in {s.arxiv_id} for c in fake)
        # distractors: older than the target, each with an abstract (shown, or withheld as often as cited works
        # lack one), recorded with the pool they came from
        for c in fake:
            meta = uws.get_meta(c.arxiv_id)
            assert meta is not None and meta.published < s.published and meta.abstract
            assert c.found_by in ("same-category", "same-archive", "any-category")
            assert bool(c.abstract) != c.abstract_withheld
        flags = [c.distractor for c in s.citations]
        if flags != sorted(flags):
            cited_first_everywhere = False
        prompt = render_prompt(s, templates_dir=rnd.templates_dir)
        assert all(c.title in prompt for c in s.citations) and "distractor" not in prompt.lower()
    assert not cited_first_everywhere  # position does not reveal the cited papers
    again = build_round(
        uws,
        "rw",
        BuildConfig(settings=["zero-shot"], tasks=("related_work",), distractors=3, seed=5),
        out_dir=tmp_path / "rw2",
    )
    assert again.files == m.files
    man = json.loads((tmp_path / "rw" / "manifest.json").read_text())
    assert "related_work" in man["skipped"]
