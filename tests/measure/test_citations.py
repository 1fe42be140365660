"""Citation faithfulness metrics: extraction rules, and the two calibrating baselines on real Related Work samples."""

from __future__ import annotations

import pytest

from academiceval.rounds.models import CitedPaper
from academiceval.scores.citations import citation_scores, extract_citations

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
