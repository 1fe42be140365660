"""The one win rate and the one length-controlled win rate of pairwise judgements.

Every pairwise judge result — `score --metrics judge` (against the reference or another run), `judge-predictions`
(imported prediction files, the same metric), `judge-length-control` — is reduced here, from `Outcome`s: one per
judgement (each pair is judged in both orders), from the candidate's side.

- win rate = (wins + ½ ties) / judged. A judgement whose answer could not be read (after the repair request) is
  `unreadable`; one whose request failed is `failed`; both are counted and reported, never guessed, and never in
  the denominator.
- A rate rests on `judged` judgements; with fewer than `min_judged` (default `MIN_JUDGED`) no rate is given
  (`win_rate` is None and `note` says why), so "100 %" from 1 of 22 judged is never printed.
- length control (like length-controlled AlpacaEval): a logistic regression of the outcome on the standardised
  length difference (tanh-squashed, so outliers do not dominate) and the display position; the rate predicted at
  equal length, averaged over both positions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from academiceval.scores.config import MIN_JUDGED, stored_option
from academiceval.store.artifacts import ArtifactError, load_round, load_run, locate_round

__all__ = ["MIN_JUDGED", "Outcome", "WinRate", "length_controlled_win_rate", "pooled", "summarize"]


@dataclass(frozen=True)
class Outcome:
    """One judgement of one pair in one order, from the candidate's side."""

    sample_id: str
    candidate_first: bool
    outcome: float | None  # 1 win, 0.5 tie, 0 loss; None: no verdict (see `problem`)
    problem: str | None = None  # None, "unreadable" (no verdict in the judge's answer) or "failed" (no answer)
    candidate_words: int = 0
    other_words: int = 0


@dataclass
class WinRate:
    judged: int
    wins: int
    ties: int
    losses: int
    unreadable: int
    failed: int
    win_rate: float | None
    lc_win_rate: float | None = None
    lc_coefficients: dict[str, float] = field(default_factory=dict)
    min_judged: int = MIN_JUDGED
    raw_win_rate: float | None = None  # the rate even below min_judged (for JSON readers who want it)
    note: str = ""

    @property
    def errors(self) -> int:
        """Judgements without a verdict (unreadable + failed)."""
        return self.unreadable + self.failed

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "errors": self.errors}

    def shown(self, value: float | None, digits: int = 2) -> str:
        """A rate as a percentage for a table, or "-" (with the note telling why)."""
        return "-" if value is None else f"{100 * value:.{digits}f}"


def summarize(outcomes: Sequence[Outcome], *, min_judged: int = MIN_JUDGED, length_control: bool = True) -> WinRate:
    """W/T/L, unreadable and failed counts, the win rate and (when asked) the length-controlled one."""
    judged = [o for o in outcomes if o.outcome is not None]
    wins = sum(o.outcome == 1.0 for o in judged)
    ties = sum(o.outcome == 0.5 for o in judged)
    losses = sum(o.outcome == 0.0 for o in judged)
    unreadable = sum(o.outcome is None and o.problem != "failed" for o in outcomes)
    failed = sum(o.outcome is None and o.problem == "failed" for o in outcomes)
    n = len(judged)
    raw = (wins + 0.5 * ties) / n if n else None
    res = WinRate(n, wins, ties, losses, unreadable, failed, raw, min_judged=min_judged, raw_win_rate=raw)
    if length_control:
        res.lc_win_rate, res.lc_coefficients = length_controlled_win_rate(outcomes)
    if n < min_judged:
        res.win_rate = res.lc_win_rate = None
        res.note = (
            f"no rate: {n} readable judgement(s) of {len(outcomes)} (minimum {min_judged}; "
            f"{unreadable} unreadable, {failed} failed)"
        )
    return res


def pooled(values: Iterable[dict[str, float]], aspect: str = "overall") -> tuple[float | None, int]:
    """Pooled (wins + ½ ties) / judged over judge ScoreRecord values (`<aspect>_wins/_ties/_n`); (None, 0) when
    nothing was judged."""
    wins = ties = n = 0.0
    for v in values:
        wins += v.get(f"{aspect}_wins", 0.0)
        ties += v.get(f"{aspect}_ties", 0.0)
        n += v.get(f"{aspect}_n", 0.0)
    return ((wins + 0.5 * ties) / n if n else None), int(n)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def length_controlled_win_rate(outcomes: Sequence[Outcome], *, l2: float = 1.0) -> tuple[float | None, dict]:
    """Win rate at equal length from a logistic fit of outcome ~ 1 + tanh(Δlen / sd) + position.

    Ties enter as half a win and half a loss (fractional outcomes in the likelihood). A unit L2 penalty on the
    slopes (features lie in [-1, 1]) keeps the fit finite when the data are separable (e.g. the longer answer
    always wins); with n ≥ a few hundred judgements it barely moves a real slope."""
    from scipy.optimize import minimize  # scipy's optimizer: loaded only when a length-controlled rate is asked for

    rows = [
        (o.outcome, o.candidate_words - o.other_words, 1.0 if o.candidate_first else -1.0)
        for o in outcomes
        if o.outcome is not None
    ]
    if len(rows) < 2:
        return None, {}
    y = np.array([r[0] for r in rows], dtype=float)
    diff = np.array([r[1] for r in rows], dtype=float)
    sd = float(diff.std()) or 1.0
    x_len = np.tanh(diff / sd)
    x_pos = np.array([r[2] for r in rows], dtype=float)
    both_positions = len(set(x_pos.tolist())) > 1  # else the position term is the intercept again
    design = np.column_stack([np.ones_like(y), x_len, x_pos if both_positions else np.zeros_like(y)])

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ beta
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        nll = -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        penalty = l2 * float(beta[1:] @ beta[1:])
        grad = design.T @ (p - y)
        grad[1:] += 2 * l2 * beta[1:]
        return float(nll + penalty), grad

    fit = minimize(loss, np.zeros(3), jac=True, method="L-BFGS-B")
    b0, b_len, b_pos = (float(v) for v in fit.x)
    lc = 0.5 * (_sigmoid(b0 + b_pos) + _sigmoid(b0 - b_pos))
    return lc, {"intercept": b0, "length": b_len, "position": b_pos, "length_sd_words": sd, "n": len(rows)}


def outcomes_from_records(
    records: Iterable[Any], outputs: dict[str, str], others: dict[str, str], *, aspect: str = "overall"
) -> list[Outcome]:
    """Outcomes back from judge ScoreRecords (`details.orders`: candidate_first, verdicts per aspect, error — as
    the judge metric writes them), with word counts of the candidate output and the other text. A record whose
    pair could not be formed at all (no output of the other run) holds no judgement and gives none."""
    out: list[Outcome] = []
    for rec in records:
        sid = getattr(rec, "sample_id", "")
        details = getattr(rec, "details", {}) or {}
        if sid not in outputs or sid not in others:
            continue
        for order in details.get("orders", []):
            given = (order.get("verdicts") or {}).get(aspect)
            error = order.get("error")
            outcome, problem = None, None
            if error:
                problem = "unreadable" if str(error).startswith("judge_parse") else "failed"
            elif given in ("A", "B", "tie"):
                first = bool(order.get("candidate_first"))
                outcome = 0.5 if given == "tie" else 1.0 if (given == "A") == first else 0.0
            else:
                problem = "unreadable"
            out.append(
                Outcome(
                    sid,
                    bool(order.get("candidate_first")),
                    outcome,
                    problem,
                    len(outputs[sid].split()),
                    len(others[sid].split()),
                )
            )
    return out


def run_judge_summaries(
    run_dir: str | Path,
    *,
    home: str | Path | None = None,
    aspect: str = "overall",
    min_judged: int = MIN_JUDGED,
    metric: str | None = None,
) -> dict[str, WinRate]:
    """Per judge metric of a scored run directory (`score --metrics judge`, `judge-predictions`): W/T/L, unreadable
    and failed counts, the win rate and the length-controlled one against what it was judged against (the
    round's reference or another run, as stored in the records' config)."""
    run = load_run(run_dir)
    outputs = {sid: r.output for sid, r in run.records.items() if not r.error}
    by_metric: dict[str, list[Any]] = {}
    for (_, name, _), rec in sorted(run.scores.items()):
        if name.startswith("judge-") and (metric is None or name == metric):
            by_metric.setdefault(name, []).append(rec)
    results: dict[str, WinRate] = {}
    labels: dict[str, str] | None = None
    for name, recs in by_metric.items():
        against = str(stored_option(getattr(recs[0], "config", None), "judge", "against", "reference"))
        if against == "reference":
            if labels is None:
                where = locate_round(run.spec.round, home=home, run_dir=run_dir)
                if where is None:
                    raise ArtifactError(
                        f"round {run.spec.round} of {run_dir} not found", hint="pass --home of its workspace"
                    )
                labels = {s.sample_id: s.label for s in load_round(where).distinct_samples()}
            others = labels
        else:
            others = {sid: r.output for sid, r in load_run(Path(against)).records.items() if not r.error}
        outcomes = outcomes_from_records(recs, outputs, others, aspect=aspect)
        results[name] = summarize(outcomes, min_judged=min_judged)
    return results
