"""Citation faithfulness metrics: extraction rules, and the two calibrating baselines on real Related Work samples."""

from __future__ import annotations

import pytest

from academiceval.scores.citations import citation_scores, extract_citations
from academiceval.store.models import CitedPaper

TITLES = [
    "Attention is all you need",
    "Deep residual learning for image recognition",
    "BERT: pre-training of deep bidirectional transformers",
    "Adam: a method for stochastic optimization",
    "Dropout: a simple way to prevent neural networks from overfitting",
]


def test_numeric_marks_groups_and_ranges():
    ex = extract_citations("Transformers [1] and CNNs [2, 4-5] differ; see also [Cited paper 3] and [9].", TITLES)
    assert ex.listed == {1, 2, 3, 4, 5} and ex.unlisted == {"#9"}


def test_author_year_and_titles():
    text = (
        'Smith et al. (2019) and (Lee and Park, 2020; Chen, 2021) studied this. "Deep residual learning for image '
        'recognition" is related, and "A survey of things nobody listed at all" is not. In 2020, we began.'
    )
    ex = extract_citations(text, TITLES)
    assert ex.listed == {2}
    assert {k for k in ex.unlisted if k.startswith("ay:")} == {"ay:smith:2019", "ay:lee:2020", "ay:chen:2021"}
    assert any(k.startswith("title:a survey") for k in ex.unlisted)


def test_scores_precision_recall_unlisted():
    cits = [CitedPaper(title=t, distractor=i >= 3) for i, t in enumerate(TITLES)]  # real: 1..3
    s = citation_scores("We build on [1] and [4], unlike Doe et al. 2018.", cits)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(1 / 3) and s.unlisted == 1
    none = citation_scores("No citations here.", cits)
    assert none.precision is None and none.recall == 0.0 and none.unlisted == 0


def test_copy_marks_baseline_is_exact_and_inventing_one_is_not(tmp_path, corpus):
    """Real Related Work samples (unarXive) → the runner → score_runs: cite-copy has precision 1.0, cite-invent 0."""
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import Layout, load_round
    from academiceval.testing.related_work import ROUND, write_related_work_round

    layout = Layout.of(tmp_path)
    rdir = write_related_work_round(corpus, layout.round_dir(ROUND))
    samples = load_round(rdir).distinct_samples()
    assert len(samples) >= 5 and all(any(not c.distractor for c in s.citations) for s in samples)
    metrics = ["citation-precision", "citation-recall", "citation-unlisted"]
    got = {}
    for b in ("cite-copy", "cite-invent", "lead"):
        run = run_round(layout.runs_dir, rdir, RunConfig(model=f"baseline/{b}"))
        (res,) = score_runs([run.run_dir], ScoreConfig(metrics=metrics), home=tmp_path)
        got[b] = {s.metric: s.main for s in res.summary}
    copy, invent = got["cite-copy"], got["cite-invent"]
    assert copy["citation-precision"].mean == 1.0 and copy["citation-recall"].mean == 1.0
    assert copy["citation-unlisted"].mean == 0.0
    assert invent["citation-precision"].mean == 0.0 and invent["citation-recall"].mean == 0.0
    assert invent["citation-unlisted"].mean >= 6
    # the lead baseline copies the body's own marks: partly in the list by accident, never perfect recall
    assert 0 < got["lead"]["citation-recall"].mean < 1


def test_author_year_citations_of_listed_works_count_as_listed():
    """The list shows surnames and years (issue 25): "Vaswani et al. (2017)" cites the listed Vaswani 2017."""
    cits = [
        CitedPaper(title=TITLES[0], authors=["Ashish Vaswani", "Noam Shazeer"], year=2017),
        CitedPaper(title=TITLES[1], authors=["He, Kaiming"], year=2016, distractor=True),
        CitedPaper(title=TITLES[2], authors=["J. Devlin"], year=2019),
    ]
    s = citation_scores("Vaswani et al. (2017) and (Devlin, 2019; He, 2015) matter; Doe et al. 2020 too.", cits)
    assert s.details["cited_listed"] == [1, 3]
    assert s.unlisted == 2 and s.precision == pytest.approx(2 / 4) and s.recall == 1.0


def test_reference_coverage_weighs_works_by_how_often_the_real_section_cites_them():
    cits = [
        CitedPaper(title=TITLES[0], mentions=6),
        CitedPaper(title=TITLES[1], mentions=1),
        CitedPaper(title=TITLES[2], mentions=1),
        CitedPaper(title=TITLES[3], distractor=True),
    ]
    central = citation_scores("The Transformer [1] changed everything.", cits)
    minor = citation_scores("Residual networks [2] help.", cits)
    assert central.recall == minor.recall == pytest.approx(1 / 3)
    assert central.coverage == pytest.approx(6 / 8) and minor.coverage == pytest.approx(1 / 8)
    old = citation_scores("The Transformer [1].", [CitedPaper(title=t) for t in TITLES])  # a round before issue 25
    assert old.coverage is None and old.recall == pytest.approx(1 / 5)
