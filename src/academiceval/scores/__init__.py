"""Scoring saved runs: ROUGE, BERTScore, LLM judge; re-scoring without regeneration."""

from academiceval.scores.models import ScoreRecord

__all__ = ["ScoreRecord"]
