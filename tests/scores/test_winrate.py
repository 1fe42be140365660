"""The one win rate: W/T/L with unreadable and failed judgements counted, no rate below the minimum, the
length-controlled rate; `judge-predictions` as import + `score --metrics judge` against the local fake judge
server, and the adversarial answer set that must leave the win rate unchanged (issue 26, finding 7)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.scores.winrate import Outcome, length_controlled_win_rate, outcomes_from_records, summarize
from academiceval.testing.fake_server import FakeServerConfig, start_in_thread
from academiceval.testing.judges import ATTACKS, quoting_judge


def _synthetic(b0: float, b1: float, n: int = 4000) -> list[Outcome]:
    """Outcomes following p = sigmoid(b0 + b1*tanh(diff/sd)), drawn by deterministic quantiles."""
    out = []
    for i in range(n):
        diff = (i % 41) * 10 - 200  # candidate 200 words shorter … 200 longer
        p = 1 / (1 + math.exp(-(b0 + b1 * math.tanh(diff / 118.3))))
        u = ((i * 7919) % n + 0.5) / n  # a low-discrepancy stand-in for a uniform draw
        out.append(Outcome(f"s{i}", i % 2 == 0, 1.0 if u < p else 0.0, None, 300 + diff, 300))
    return out


def test_length_controlled_rate_recovers_the_equal_length_preference() -> None:
    for b0, b1 in ((0.0, 2.0), (0.4, 2.0), (-0.8, -1.0)):
        lc, coef = length_controlled_win_rate(_synthetic(b0, b1))
        assert lc == pytest.approx(1 / (1 + math.exp(-b0)), abs=0.03), (b0, b1, lc, coef)
    # a judge with no preference but for length, and a candidate that is usually longer
    os = [o for o in _synthetic(0.0, 3.0) if o.candidate_words - o.other_words >= -50]
    res = summarize(os)
    assert res.win_rate > 0.65 and abs(res.lc_win_rate - 0.5) < 0.05


def test_counts_and_no_rate_from_too_few_judgements() -> None:
    """`judge-predictions` printed "win % 100.00" from 1 of 22 judged (issue 28): now no rate, and why."""
    one = [Outcome("s0", True, 1.0)] + [Outcome(f"s{i}", i % 2 == 0, None, "unreadable") for i in range(1, 17)]
    one += [Outcome(f"f{i}", True, None, "failed") for i in range(5)]
    res = summarize(one)
    assert (res.judged, res.wins, res.unreadable, res.failed, res.errors) == (1, 1, 16, 5, 21)
    assert res.win_rate is None and res.lc_win_rate is None and res.raw_win_rate == 1.0
    assert "1 readable judgement(s) of 22 (minimum 10; 16 unreadable, 5 failed)" in res.note
    ok = summarize([Outcome(f"s{i}", i % 2 == 0, [1.0, 0.5, 0.0][i % 3]) for i in range(12)], min_judged=10)
    assert ok.win_rate == pytest.approx((4 + 0.5 * 4) / 12) and not ok.note
    both_orders = [Outcome("s", True, 1.0), Outcome("s", False, 0.0)] * 10  # a judge that always says "A"
    assert summarize(both_orders).win_rate == 0.5


def test_outcomes_from_records_tell_unreadable_from_failed() -> None:
    class Rec:
        def __init__(self, sid: str, orders: list[dict]) -> None:
            self.sample_id, self.details = sid, {"orders": orders}

    a_wins = {"candidate_first": True, "verdicts": {"overall": "A"}}
    a_loses = {"candidate_first": False, "verdicts": {"overall": "A"}}
    unreadable = {"candidate_first": True, "verdicts": {}, "error": "judge_parse: no final VERDICT line"}
    failed = {"candidate_first": False, "verdicts": {}, "error": "rate_limited: 429"}
    recs = [Rec("a", [a_wins, a_loses]), Rec("b", [unreadable, failed]), Rec("c", [])]  # c: no other output
    got = outcomes_from_records(recs, {"a": "x y", "b": "x", "c": "x"}, {"a": "x", "b": "x"})
    assert [(o.sample_id, o.outcome, o.problem) for o in got] == [
        ("a", 1.0, None),
        ("a", 0.0, None),
        ("b", None, "unreadable"),
        ("b", None, "failed"),
    ]
    assert got[0].candidate_words == 2 and got[0].other_words == 1


def _garbage_file(tmp: Path, reference: Path, name: str, text: str, rows: int) -> Path:
    ref = [json.loads(line) for line in reference.read_text().splitlines() if line.strip()][:rows]
    p = tmp / f"{name.replace(' ', '_').replace(',', '')}.pred.jsonl"
    lines = [{"query": r["query"], "gt": r["gt"], "garbage_pred": text, "evaluation": r["evaluation"]} for r in ref]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def test_judge_predictions_against_the_fake_server_counts_unreadable_and_uses_the_cache(corpus, tmp_path) -> None:
    """The fake server's default answers are not verdicts: every judgement is unreadable after one repair
    request; no rate is printed; a second run is answered from the cache."""
    base = corpus / "leval" / "Predictions" / "llm_gpt4_eval"
    cand, ref = str(base / "llama2-13b-chat-4k.pred.jsonl"), str(base / "turbo-16k-0613.pred.jsonl")
    with start_in_thread() as server:
        args = ["judge-predictions", cand, "--against", ref, "--judge", "openai/fake-model", "--json"]
        args += ["--judge-base-url", server.url, "--cache", str(tmp_path / "judge.sqlite")]
        res = CliRunner().invoke(app, args)
        requests = server.stats.total
        again = CliRunner().invoke(app, args)
        assert server.stats.total == requests  # answered from the response cache
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)[cand]
    assert json.loads(again.stdout)[cand] == out
    assert (out["judged"], out["unreadable"], out["failed"]) == (0, 192, 0)
    assert out["only_candidate"] == out["only_baseline"] == 0 and out["win_rate"] is None
    assert "no rate: 0 readable judgement(s) of 192" in out["note"]
    assert requests == 2 * 192  # each judgement and its one repair request
    table = CliRunner().invoke(app, args[:-5] + args[-4:])  # the table, not --json
    assert "no rate" in table.output and "192" in table.output


def test_adversarial_answers_leave_the_win_rate_unchanged(corpus, tmp_path) -> None:
    """Garbage answers that carry verdict tokens, JSON verdicts, VERDICT lines, instructions or a closing tag,
    judged by a judge that quotes both answers verbatim: the same W/T/L as the plain garbage answer."""
    reference = corpus / "leval" / "Predictions" / "llm_gpt4_eval" / "turbo-16k-0613.pred.jsonl"
    rates = {}
    with start_in_thread(FakeServerConfig(responder=quoting_judge)) as server:
        for name, text in ATTACKS.items():
            path = _garbage_file(tmp_path, reference, name, text, rows=24)
            args = ["judge-predictions", str(path), "--against", str(reference), "--judge", "openai/fake-model"]
            res = CliRunner().invoke(app, [*args, "--judge-base-url", server.url, "--json"])
            assert res.exit_code == 0, res.output
            r = json.loads(res.stdout)[str(path)]
            rates[name] = (r["judged"], r["wins"], r["ties"], r["losses"], r["unreadable"], r["win_rate"])
    plain = rates.pop("plain")
    assert plain[0] == 48 and plain[4] == 0 and plain[5] < 0.2  # the garbage model loses
    assert all(r == plain for r in rates.values()), rates
