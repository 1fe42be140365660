"""Pairwise judging against a fixed reference run, L-Eval style, with a length-controlled win rate.

Protocol (L-Eval's `llm_eval.py`, described in `../shared/research/scalar_leval_elaip_anchor.md` §2.6): for every
sample both runs answered, the judge sees the question, the reference answer and the two outputs — not the long
document — and ends with a verdict token: `[[A]]`, `[[B]]` or `[[C]]` (tie). Each pair is judged twice, once with
the candidate shown first and once second; both judgments count. Win rate = (wins + ½·ties) / judged, with wins,
ties, losses and unreadable verdicts all reported.

Verdict parsing (`parse_verdict`), and what it accepted is recorded per judgment:
- `leval-compatible`: L-Eval's substring test in its order — "[[A]]" anywhere wins, else "[[B]]", else "[[C]]";
- `strict`: exactly one distinct verdict token in the answer; none or several (e.g. "[[A]] … [[B]]") is an error.

Length control: judges prefer longer answers (and L-Eval found length drives n-gram metrics too). Like
length-controlled AlpacaEval, `length_controlled_win_rate` fits a logistic regression of the candidate's outcome
on the standardised length difference (tanh-squashed, so outliers do not dominate) and the display position, and
reports the predicted win rate at equal length, averaged over both positions.

The template below is written in our own words; L-Eval's own wording can be passed as `template=` (it must have
the fields {question}, {reference}, {answer_a}, {answer_b}), and its sha256 is part of `config()`.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

VerdictProtocol = Literal["leval-compatible", "strict"]
TOKENS = {"A": "[[A]]", "B": "[[B]]", "C": "[[C]]"}

TEMPLATE = """You are judging two assistants' answers to a question about a long document that you are not shown. \
A reference answer written by a person is given instead. Compare each answer with the reference: what matters \
most is agreeing with it and avoiding factual mistakes; details the reference does not contain earn no credit. \
Ignore which answer comes first, how long each one is and what the assistants are called.

[Question]
{question}

[Reference answer]
{reference}

[Answer of assistant A]
{answer_a}

[Answer of assistant B]
{answer_b}

Explain your comparison briefly, then finish with exactly one verdict: [[A]] if A is better, [[B]] if B is \
better, [[C]] if they are equally good."""


@dataclass(frozen=True)
class Verdict:
    winner: Literal["A", "B", "tie"] | None  # None: unreadable under the protocol
    rule: str  # e.g. "[[A]]", "first-of:[[A]],[[B]]", "none", "ambiguous"


def parse_verdict(text: str | None, protocol: VerdictProtocol = "leval-compatible") -> Verdict:
    text = text or ""
    present = [k for k, tok in TOKENS.items() if tok in text]
    if not present:
        return Verdict(None, "none")
    if protocol == "strict":
        if len(present) > 1:
            return Verdict(None, "ambiguous:" + ",".join(TOKENS[k] for k in present))
        k = present[0]
        return Verdict("tie" if k == "C" else k, TOKENS[k])  # type: ignore[arg-type]
    k = present[0]  # L-Eval checks A, then B, then C
    rule = TOKENS[k] if len(present) == 1 else "first-of:" + ",".join(TOKENS[p] for p in present)
    return Verdict("tie" if k == "C" else k, rule)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Judgment:
    sample_id: str
    candidate_first: bool
    verdict: Verdict
    candidate_words: int
    reference_words: int
    raw: str = ""

    @property
    def outcome(self) -> float | None:
        """1 candidate wins, 0.5 tie, 0 reference run wins, None unreadable."""
        w = self.verdict.winner
        if w is None:
            return None
        if w == "tie":
            return 0.5
        return 1.0 if (w == "A") == self.candidate_first else 0.0


@dataclass
class WinRate:
    judged: int
    wins: int
    ties: int
    losses: int
    errors: int
    win_rate: float | None
    lc_win_rate: float | None = None
    lc_coefficients: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def win_rate(judgments: Sequence[Judgment]) -> WinRate:
    outcomes = [j.outcome for j in judgments]
    wins = sum(o == 1.0 for o in outcomes)
    ties = sum(o == 0.5 for o in outcomes)
    losses = sum(o == 0.0 for o in outcomes)
    judged = wins + ties + losses
    rate = (wins + 0.5 * ties) / judged if judged else None
    return WinRate(judged, wins, ties, losses, len(outcomes) - judged, rate)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def length_controlled_win_rate(judgments: Sequence[Judgment], *, l2: float = 1.0) -> tuple[float | None, dict]:
    """Win rate at equal length from a logistic fit of outcome ~ 1 + tanh(Δlen / sd) + position.

    Ties enter as half a win and half a loss (fractional outcomes in the likelihood). A unit L2 penalty on the
    slopes (features lie in [-1, 1]) keeps the fit finite when the data are separable (e.g. the longer answer
    always wins); with n ≥ a few hundred judgments it barely moves a real slope."""
    import numpy as np
    from scipy.optimize import minimize

    rows = [(j.outcome, j.candidate_words - j.reference_words, 1.0 if j.candidate_first else -1.0) for j in judgments]
    rows = [r for r in rows if r[0] is not None]
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


@dataclass(frozen=True)
class PairInput:
    sample_id: str
    question: str
    reference: str
    candidate: str
    baseline: str


def render(pair: PairInput, *, candidate_first: bool, template: str = TEMPLATE) -> str:
    a, b = (pair.candidate, pair.baseline) if candidate_first else (pair.baseline, pair.candidate)
    return template.format(question=pair.question, reference=pair.reference, answer_a=a, answer_b=b)


def pairs_by_sample(
    candidate: dict[str, str], baseline: dict[str, str], questions: dict[str, str], references: dict[str, str]
) -> tuple[list[PairInput], dict[str, int]]:
    """Pairs for the samples both runs answered; counts of samples only one side has (reported, not judged)."""
    both = sorted(set(candidate) & set(baseline))
    pairs = [PairInput(s, questions.get(s, ""), references.get(s, ""), candidate[s], baseline[s]) for s in both]
    missing = {
        "only_candidate": len(set(candidate) - set(baseline)),
        "only_baseline": len(set(baseline) - set(candidate)),
    }
    return pairs, missing


async def judge_pairs(
    pairs: Sequence[PairInput],
    ask: Callable[[str], Awaitable[str]],
    *,
    protocol: VerdictProtocol = "leval-compatible",
    template: str = TEMPLATE,
    concurrency: int = 8,
) -> list[Judgment]:
    """Judge every pair in both orders with `ask(prompt) -> judge text` (any backend's generate path)."""
    sem = asyncio.Semaphore(concurrency)

    async def one(pair: PairInput, first: bool) -> Judgment:
        async with sem:
            try:
                raw = await ask(render(pair, candidate_first=first, template=template))
                verdict = parse_verdict(raw, protocol)
            except Exception as e:
                raw, verdict = "", Verdict(None, f"error:{type(e).__name__}")
        return Judgment(pair.sample_id, first, verdict, len(pair.candidate.split()), len(pair.baseline.split()), raw)

    return list(await asyncio.gather(*(one(p, first) for p in pairs for first in (True, False))))


def summarize(judgments: Sequence[Judgment]) -> WinRate:
    result = win_rate(judgments)
    result.lc_win_rate, result.lc_coefficients = length_controlled_win_rate(judgments)
    return result


def config(template: str = TEMPLATE, protocol: VerdictProtocol = "leval-compatible") -> dict[str, str]:
    return {"template_sha256": hashlib.sha256(template.encode()).hexdigest(), "verdict_protocol": protocol}


def asker(caller: object, *, max_tokens: int = 2048) -> Callable[[str], Awaitable[str]]:
    """`ask(prompt)` over a backend or a `models.generate.Generator`: temperature 0, 2048 tokens (L-Eval's)."""
    from academiceval.models.base import GenerationOptions

    options = GenerationOptions(temperature=0.0, max_tokens=max_tokens)

    from academiceval.models.generate import text_of

    async def ask(prompt: str) -> str:
        return text_of(await caller.generate(prompt, options))  # type: ignore[attr-defined]

    return ask


def leval_file_pairs(candidate_file: str, baseline_file: str) -> tuple[list[PairInput], dict[str, int]]:
    """Pairs from two L-Eval prediction files, keyed by query + gt as L-Eval's `llm_eval.py` does."""
    from academiceval.scores.leval import prediction_key, read_prediction_file

    def load(path: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        rows, _ = read_prediction_file(path)
        key = prediction_key(rows[0]) if rows else ""
        preds, questions, refs = {}, {}, {}
        for r in rows:
            sid = f"{r.get('query', '')}\x1f{r.get('gt', '')}"
            preds[sid], questions[sid], refs[sid] = str(r.get(key) or ""), str(r.get("query", "")), str(r.get("gt", ""))
        return preds, questions, refs

    cand, questions, refs = load(candidate_file)
    base, _, _ = load(baseline_file)
    return pairs_by_sample(cand, base, questions, refs)


def judgments_from_score_records(
    scores: Sequence[object], outputs: dict[str, str], others: dict[str, str], *, aspect: str = "overall"
) -> list[Judgment]:
    """Judgments back from the project judge's ScoreRecords (`details.orders`: candidate_first + verdicts per
    aspect, as `scores.builtin` writes them), with word counts of the candidate output and the other text."""
    out: list[Judgment] = []
    for rec in scores:
        details = getattr(rec, "details", {}) or {}
        sid = getattr(rec, "sample_id", "")
        if getattr(rec, "error", None) or sid not in outputs or sid not in others:
            continue
        for order in details.get("orders", []):
            given = (order.get("verdicts") or {}).get(aspect)
            winner = given if given in ("A", "B", "tie") and not order.get("error") else None
            verdict = Verdict(winner, "project-judge" if winner else f"error:{order.get('error') or 'none'}")
            first = bool(order.get("candidate_first"))
            out.append(Judgment(sid, first, verdict, len(outputs[sid].split()), len(others[sid].split())))
    return out


def run_length_control(run_dir: str, *, home: str | None = None, aspect: str = "overall") -> dict[str, WinRate]:
    """Per judge metric of a scored run directory (`academiceval score --metrics judge`): W/T/L, win rate and the
    length-controlled win rate against what it was judged against (the round's reference or another run)."""
    from pathlib import Path

    from academiceval.store.artifacts import load_round, load_run, locate_round

    run = load_run(run_dir)
    outputs = {sid: r.output for sid, r in run.records.items() if not r.error}
    by_metric: dict[str, list[object]] = {}
    for (_, metric, _), rec in sorted(run.scores.items()):
        if metric.startswith("judge-"):
            by_metric.setdefault(metric, []).append(rec)
    results: dict[str, WinRate] = {}
    labels: dict[str, str] | None = None
    for metric, recs in by_metric.items():
        against = str((getattr(recs[0], "config", {}) or {}).get("against", "reference"))
        if against == "reference":
            if labels is None:
                where = locate_round(run.spec.round, home=home, run_dir=run_dir)
                if where is None:
                    raise ValueError(f"round {run.spec.round} of {run_dir} not found (pass home=)")
                labels = {s.sample_id: s.label for s in load_round(where).distinct_samples()}
            others = labels
        else:
            others = {sid: r.output for sid, r in load_run(Path(against)).records.items() if not r.error}
        results[metric] = summarize(judgments_from_score_records(recs, outputs, others, aspect=aspect))
    return results
