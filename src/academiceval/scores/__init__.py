"""Scoring saved runs: ROUGE, BERTScore, LLM judge; re-scoring without regeneration; knowledge-cutoff windows.

Public API (imported lazily so that `import academiceval.scores` stays light — no torch):
    score_runs(run_dirs, ScoreConfig(...), ...)     academiceval.scores.rescore    (config: scores.config)
    aggregate(score_records, after=None)             academiceval.scores.aggregate  -> list[MetricSummary]
    bootstrap_mean(values, seed=...)                 academiceval.scores.aggregate  -> Estimate
    register, Metric                                 academiceval.scores.registry   (metrics by name)
    SampleScorer, BatchScorer, AsyncScorer, score_job, Needs academiceval.scores.scorer (the one scoring loop)
    summarize, WinRate, MIN_JUDGED                   academiceval.scores.winrate    (the one win rate)
    FastRouge, rouge                                 academiceval.scores.rouge
    BertScorer                                       academiceval.scores.bertscore
    Judge, parse_verdict, win_rate                   academiceval.scores.judge
    Window, resolve_window, load_model_info          academiceval.scores.windows
"""

from __future__ import annotations

from typing import Any

from academiceval.scores.models import Estimate, MetricSummary
from academiceval.store.models import ScoreRecord

_LAZY = {
    "score_runs": "academiceval.scores.rescore",
    "aggregate": "academiceval.scores.aggregate",
    "bootstrap_mean": "academiceval.scores.aggregate",
    "register": "academiceval.scores.registry",
    "Metric": "academiceval.scores.registry",
    "Needs": "academiceval.scores.scorer",
    "SampleScorer": "academiceval.scores.scorer",
    "BatchScorer": "academiceval.scores.scorer",
    "AsyncScorer": "academiceval.scores.scorer",
    "score_job": "academiceval.scores.scorer",
    "summarize": "academiceval.scores.winrate",
    "WinRate": "academiceval.scores.winrate",
    "MIN_JUDGED": "academiceval.scores.winrate",
    "FastRouge": "academiceval.scores.rouge",
    "rouge": "academiceval.scores.rouge",
    "BertScorer": "academiceval.scores.bertscore",
    "Judge": "academiceval.scores.judge",
    "parse_verdict": "academiceval.scores.judge",
    "win_rate": "academiceval.scores.judge",
    "Window": "academiceval.scores.windows",
    "resolve_window": "academiceval.scores.windows",
    "load_model_info": "academiceval.scores.windows",
}

__all__ = ["Estimate", "MetricSummary", "ScoreRecord", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
