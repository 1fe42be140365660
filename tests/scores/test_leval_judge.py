"""Pairwise judge vs a fixed reference run: both orders, W/T/L, exact verdict parsing, length-controlled rate."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from academiceval.scores import leval_judge as lj


def _run(path: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    key = next(k for k in rows[0] if "_pred" in k)
    ids = [f"{r['query']}\x1f{r['gt']}" for r in rows]  # L-Eval keys a pair by query + gt
    return (
        {i: r[key] for i, r in zip(ids, rows, strict=True)},
        {i: r["query"] for i, r in zip(ids, rows, strict=True)},
        {i: r["gt"] for i, r in zip(ids, rows, strict=True)},
    )


@pytest.fixture(scope="module")
def pairs(corpus: Path) -> list[lj.PairInput]:
    base = corpus / "leval" / "Predictions" / "llm_gpt4_eval"
    cand, questions, refs = _run(base / "claude-100k.pred.jsonl")
    ref_run, _, _ = _run(base / "turbo-16k-0613.pred.jsonl")
    out, missing = lj.pairs_by_sample(cand, ref_run, questions, refs)
    assert len(out) == 96 and missing == {"only_candidate": 0, "only_baseline": 0}
    return out


def _answers(prompt: str) -> tuple[str, str]:
    a = re.search(r"\[Answer of assistant A\]\n(.*?)\n\n\[Answer of assistant B\]", prompt, re.S).group(1)
    b = re.search(r"\[Answer of assistant B\]\n(.*?)\n\nExplain", prompt, re.S).group(1)
    return a, b


def test_parse_verdict_protocols() -> None:
    assert lj.parse_verdict("so [[B]]").winner == "B"
    assert lj.parse_verdict("[[C]]").winner == "tie"
    both = "A is not better, so not [[A]]; final: [[B]]"
    assert lj.parse_verdict(both) == lj.Verdict("A", "first-of:[[A]],[[B]]")  # L-Eval's substring order
    assert lj.parse_verdict(both, "strict") == lj.Verdict(None, "ambiguous:[[A]],[[B]]")
    assert lj.parse_verdict("A is better.") == lj.Verdict(None, "none")


def test_length_biased_judge_on_real_pairs(pairs: list[lj.PairInput]) -> None:
    async def longer_wins(prompt: str) -> str:
        a, b = _answers(prompt)
        return "[[A]]" if len(a.split()) > len(b.split()) else "[[B]]" if len(b.split()) > len(a.split()) else "[[C]]"

    judgments = asyncio.run(lj.judge_pairs(pairs, longer_wins))
    assert len(judgments) == 192 and {j.candidate_first for j in judgments} == {True, False}
    res = lj.summarize(judgments)
    assert res.judged == 192 and res.errors == 0 and res.wins + res.ties + res.losses == 192
    assert res.win_rate == pytest.approx((res.wins + 0.5 * res.ties) / 192)
    longer = sum(len(p.candidate.split()) > len(p.baseline.split()) for p in pairs)
    same = sum(len(p.candidate.split()) == len(p.baseline.split()) for p in pairs)
    assert res.win_rate == pytest.approx((longer + 0.5 * same) / 96)  # the raw rate only measures length
    assert res.lc_coefficients["length"] > 3 and abs(res.lc_coefficients["position"]) < 1e-6


def _synthetic(b0: float, b1: float, n: int = 4000) -> list[lj.Judgment]:
    """Judgments whose outcome follows p = sigmoid(b0 + b1*tanh(diff/sd)); outcomes by deterministic quantiles."""
    import math

    out = []
    for i in range(n):
        diff = (i % 41) * 10 - 200  # candidate 200 words shorter … 200 longer
        x = math.tanh(diff / 118.3)
        p = 1 / (1 + math.exp(-(b0 + b1 * x)))
        u = ((i * 7919) % n + 0.5) / n  # a low-discrepancy stand-in for a uniform draw
        win = "A" if u < p else "B"
        first = i % 2 == 0
        verdict = win if first else {"A": "B", "B": "A"}[win]
        out.append(lj.Judgment(f"s{i}", first, lj.Verdict(verdict, "[[A]]"), 300 + diff, 300))
    return out


def test_length_controlled_rate_recovers_the_equal_length_preference() -> None:
    import math

    for b0, b1 in ((0.0, 2.0), (0.4, 2.0), (-0.8, -1.0)):
        js = _synthetic(b0, b1)
        raw = lj.win_rate(js).win_rate
        lc, coef = lj.length_controlled_win_rate(js)
        assert lc == pytest.approx(1 / (1 + math.exp(-b0)), abs=0.03), (b0, b1, raw, lc, coef)
    # a judge with no preference but for length, and a candidate that is usually longer
    js = [j for j in _synthetic(0.0, 3.0) if j.candidate_words - j.reference_words >= -50]
    raw, (lc, _) = lj.win_rate(js).win_rate, lj.length_controlled_win_rate(js)
    assert raw > 0.65 and abs(lc - 0.5) < 0.05


def test_position_biased_and_failing_judges(pairs: list[lj.PairInput]) -> None:
    async def always_first(prompt: str) -> str:
        return "Both fine. [[A]]"

    res = lj.summarize(asyncio.run(lj.judge_pairs(pairs, always_first)))
    assert (res.wins, res.losses, res.win_rate) == (96, 96, 0.5)  # both orders cancel the position bias
    assert res.lc_win_rate == pytest.approx(0.5, abs=1e-3) and res.lc_coefficients["position"] > 3

    calls = 0

    async def flaky(prompt: str) -> str:
        nonlocal calls
        calls += 1
        if calls % 4 == 0:
            raise TimeoutError("judge timed out")
        return "[[A]] [[B]]" if calls % 4 == 1 else "[[C]]"

    js = asyncio.run(lj.judge_pairs(pairs, flaky, protocol="strict", concurrency=1))
    res = lj.win_rate(js)
    assert res.errors == 96 and res.ties == 96 and res.win_rate == 0.5
    assert sum(j.verdict.rule == "error:TimeoutError" for j in js) == 48


def test_judge_predictions_cli_against_a_fake_judge_server(corpus: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app
    from academiceval.models.fake_server import start_in_thread

    base = corpus / "leval" / "Predictions" / "llm_gpt4_eval"
    cand, ref = str(base / "llama2-13b-chat-4k.pred.jsonl"), str(base / "turbo-16k-0613.pred.jsonl")
    with start_in_thread() as server:
        args = ["judge-predictions", cand, "--against", ref, "--judge", "openai/fake-model", "--json"]
        args += ["--judge-base-url", server.url, "--cache", str(tmp_path / "judge.sqlite")]
        res = CliRunner().invoke(app, args)
        again = CliRunner().invoke(app, args)  # answered from the response cache
        requests = server.stats.total
    assert again.exit_code == 0 and json.loads(again.stdout) == json.loads(res.stdout)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)[cand]
    assert out["judged"] + out["errors"] == 192 and out["only_candidate"] == out["only_baseline"] == 0
    assert out["wins"] + out["ties"] + out["losses"] == out["judged"]
    if out["judged"]:
        assert out["win_rate"] == pytest.approx((out["wins"] + 0.5 * out["ties"]) / out["judged"])
    assert out["verdict_protocol"] == "leval-compatible" and len(out["template_sha256"]) == 64
    assert requests == 192
