"""Metrics are dispatched through the registry: built-ins are registered with what they need, an unknown name
is a clear error listing the known ones, and a newly registered metric is scored by `score_runs` unchanged."""

from __future__ import annotations

import pytest

from academiceval.errors import ConfigError
from academiceval.scores import registry
from academiceval.scores.config import ScoreConfig
from academiceval.scores.registry import Metric, register
from academiceval.scores.rescore import read_scores, score_runs
from academiceval.scores.scorer import Needs, RunJob, SampleScorer, Scored, ScoreItem


def test_builtins_are_registered_with_their_needs():
    assert {"rouge-l", "rouge-1", "rouge-2", "rouge-lsum", "bertscore", "judge"} <= set(registry.names())
    assert registry.get("judge").needs == Needs(reference=True, judge=True)
    assert registry.get("bertscore").needs.batched and not registry.get("rouge-l").needs.batched
    assert all(registry.get(n).summary for n in registry.names())


def test_unknown_metric_is_a_clear_error_listing_known_ones():
    with pytest.raises(ConfigError) as e:
        registry.get("bleu")
    assert "bleu" in str(e.value) and "rouge-l" in str(e.value) and "bertscore" in str(e.value)
    with pytest.raises(ConfigError) as e:
        registry.resolve(["rouge-l", "bleu", "meteor"])
    msg = str(e.value)
    assert "unknown metric(s) bleu, meteor" in msg and all(n in msg for n in registry.names())
    with pytest.raises(ConfigError, match="needs a judge model"):
        registry.resolve(["judge"])  # checked before any run is read
    assert [m.name for m in registry.resolve(["judge"], judge="openai/x")] == ["judge"]


def test_a_name_is_registered_once():
    m = registry.get("rouge-l")
    register(m)  # the same object again: harmless
    with pytest.raises(ConfigError, match="already registered"):
        register(Metric("rouge-l", build=m.build))


class LengthRatio(SampleScorer):
    """A toy metric: output words / reference words (what a new family adds: a scorer and one register call)."""

    metric_name = "length-ratio"

    def __init__(self) -> None:
        self.runs_seen = 0

    def config(self) -> dict:
        return {"metric": "length-ratio", "version": 1}

    def begin(self, job: RunJob) -> dict:
        self.runs_seen += 1
        return self.config()

    def score(self, item: ScoreItem) -> Scored:
        return Scored(values={"ratio": len(item.output.split()) / max(1, len((item.label or "").split()))})


@pytest.fixture()
def length_ratio():
    built: list[LengthRatio] = []

    def build(_opts):
        built.append(LengthRatio())
        return built[-1]

    register(Metric("length-ratio", build=build, summary="output words / reference words"))
    yield built
    registry.unregister("length-ratio")


def test_a_registered_metric_is_scored_summarized_and_resumed(run_home, length_ratio):
    _, run_dir = run_home
    res = score_runs([run_dir], ScoreConfig(metrics=["length-ratio", "rouge-l"]))[0]
    assert res.written == {"length-ratio": 12, "rouge-l": 12} and res.errors == {"length-ratio": 1, "rouge-l": 1}
    recs = [r for r in read_scores(run_dir) if r.metric == "length-ratio"]
    assert len(recs) == 12 and all(r.values["ratio"] > 0 for r in recs if r.error is None)
    summary = next(m for m in res.summary if m.metric == "length-ratio")
    assert summary.primary == "ratio" and summary.n == 11 and summary.errors == 1 and summary.run == res.model
    assert summary.main.ci_low <= summary.main.mean <= summary.main.ci_high
    again = score_runs([run_dir], ScoreConfig(metrics=["length-ratio"]))[0]
    assert again.written == {"length-ratio": 0} and again.skipped == {"length-ratio": 12}
    assert len(length_ratio) == 2 and all(s.runs_seen == 1 for s in length_ratio)  # built once per call


class OutputWords(SampleScorer):
    """Needs no reference: scores every output, also of samples the round does not have."""

    metric_name = "output-words"

    def config(self) -> dict:
        return {"metric": "output-words"}

    def score(self, item: ScoreItem) -> Scored:
        return Scored(values={"words": len(item.output.split())})


def test_needs_reference_decides_whether_a_sample_outside_the_round_is_an_error(run_home):
    import json

    _, run_dir = run_home
    path = run_dir / "abstract-zero-shot.jsonl"
    first = next(json.loads(line) for line in path.read_text().splitlines() if not json.loads(line).get("error"))
    with path.open("a") as fh:  # an answered sample the round does not have
        fh.write(json.dumps(first | {"sample_id": "abstract/zero-shot/9999.99999"}) + "\n")
    register(Metric("output-words", build=lambda _o: OutputWords(), needs=Needs(reference=False)))
    try:
        res = score_runs([run_dir], ScoreConfig(metrics=["output-words", "rouge-l"]))[0]
    finally:
        registry.unregister("output-words")
    assert res.written == {"output-words": 13, "rouge-l": 13}
    assert res.errors == {"output-words": 1, "rouge-l": 2}  # the generation error, + the unknown sample for ROUGE
    by = {(r.metric, r.sample_id): r for r in read_scores(run_dir)}
    assert "not in round" in by[("rouge-l", "abstract/zero-shot/9999.99999")].error
    assert by[("output-words", "abstract/zero-shot/9999.99999")].values["words"] == len(first["output"].split())
