"""L-Eval scoring on L-Eval's own data: equal to L-Eval's own code, file by file and answer by answer."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import random
import re
import shutil
import string
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from academiceval.families.leval.scoring import TASKS, score_file, score_rows, task_id
from academiceval.scores import leval_text as lt

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "leval_reference.json").read_text())
LEVAL_GIT = Path(os.environ.get("LEVAL_GIT", "/work/.mirror/OpenLMLab+LEval/repo"))


@pytest.fixture(scope="module")
def predictions(corpus: Path) -> Path:
    return corpus / "leval" / "Predictions"


# ------------------------------------------------------------------ file level: L-Eval's printed numbers


def test_reference_covers_every_prediction_file(predictions: Path) -> None:
    on_disk = {
        p.relative_to(predictions).as_posix()
        for g in ("exam_eval", "ngram_eval")
        for p in (predictions / g).glob("*/*")
    }
    assert on_disk == set(REFERENCE["files"]), "regenerate with tests/scores/data/make_leval_reference.py"
    assert len(on_disk) == 57


@pytest.mark.parametrize("rel", sorted(REFERENCE["files"]))
def test_equals_leval_auto_eval(predictions: Path, rel: str) -> None:
    """Every number L-Eval's auto_eval.py printed (rounded to 4 decimals there) is reproduced exactly."""
    ref = REFERENCE["files"][rel]["reference"]
    result = score_file(predictions / rel)
    assert result.protocol == "leval-compatible"
    expected = {k: v for k, v in ref.items() if k != "rouge/rougeLsum"}
    assert {k: result.metrics[k] for k in expected} == expected


def test_rouge_does_not_depend_on_the_sentence_split() -> None:
    """Why an untrained punkt model is good enough for the reference: rouge1/2/L equal with no split at all."""
    n = 0
    for entry in REFERENCE["files"].values():
        if "reference_nosplit" in entry:
            for key in ("rouge/rouge1", "rouge/rouge2", "rouge/rougeL"):
                assert entry["reference"][key] == entry["reference_nosplit"][key]
            n += 1
    assert n == 21


# ------------------------------------------------------------------ answer level: L-Eval's functions


def _leval_source(corpus: Path, path: str) -> str:
    """L-Eval's own file at the commit of its data: the copy in the corpus (`leval/Evaluation`, `leval/Tools`),
    else a git snapshot named by LEVAL_GIT (for another commit)."""
    if os.environ.get("LEVAL_GIT") is None and (corpus / "leval" / path).is_file():
        return (corpus / "leval" / path).read_text(encoding="utf-8")
    if shutil.which("git") is None or not LEVAL_GIT.exists():
        pytest.fail(f"no copy of L-Eval's {path} in the corpus and no git snapshot at {LEVAL_GIT}")
    return subprocess.run(
        ["git", "--git-dir", str(LEVAL_GIT), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def leval(corpus: Path) -> SimpleNamespace:
    """L-Eval's answer processors and metrics, loaded from its repository at test time (never vendored)."""
    ns: dict = {"re": re, "args": SimpleNamespace(pred_file="")}
    tree = ast.parse(_leval_source(corpus, "Evaluation/auto_eval.py"))
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("process_")]
    exec(compile(ast.Module(body=funcs, type_ignores=[]), "auto_eval.py", "exec"), ns)
    em: dict = {}
    exec(_leval_source(corpus, "Evaluation/em.py"), em)
    f1: dict = {}
    exec(_leval_source(corpus, "Evaluation/f1.py"), f1)

    def quiet_em(pred: str, gold: str) -> float:
        with contextlib.redirect_stdout(io.StringIO()):
            return em["exact_match_score"](pred, gold)

    def mc(response: str, multi: bool) -> str:
        ns["args"].pred_file = "coursera.pred.jsonl" if multi else "quality.pred.jsonl"
        return ns["process_output_mc"](response)

    return SimpleNamespace(em=quiet_em, f1=f1["f1_score"], mc=mc, **{k: ns[k] for k in ns if k.startswith("process_")})


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("rel", [r for r in sorted(REFERENCE["files"]) if r.startswith("exam_eval/")])
def test_every_exam_answer_equals_leval(predictions: Path, leval: SimpleNamespace, rel: str) -> None:
    rows = _rows(predictions / rel)
    key = next(k for k in rows[0] if "_pred" in k)
    task = task_id(rel)
    result = score_file(predictions / rel)
    assert len(result.items) == len(rows)
    for item, row in zip(result.items, rows, strict=True):
        gold, pred = row["gt"], row[key]
        if task in ("coursera", "quality", "tpo"):
            theirs_pred, theirs_gold = leval.mc(pred, task == "coursera"), leval.process_gt_mc(gold)
        elif task == "gsm100":
            theirs_pred, theirs_gold = leval.process_math(pred), leval.process_math(gold)
        elif task == "codeU":
            theirs_pred, theirs_gold = leval.process_output_code(pred, gold), leval.process_gt_code(gold)
        else:
            theirs_pred, theirs_gold = pred, gold
        assert item.compared == [theirs_pred], (rel, item.row)
        assert item.scores["exact_match"] == leval.em(theirs_pred, theirs_gold), (rel, item.row)


@pytest.mark.parametrize("rel", [r for r, e in sorted(REFERENCE["files"].items()) if "f1" in e["reference"]])
def test_every_f1_answer_equals_leval(predictions: Path, leval: SimpleNamespace, rel: str) -> None:
    """(ROUGE files are checked at file level: L-Eval's ROUGE is rouge-score, which FastRouge equals.)"""
    rows = _rows(predictions / rel)
    key = next(k for k in rows[0] if "_pred" in k)
    result = score_file(predictions / rel)
    for item, row in zip(result.items, rows, strict=True):
        assert item.scores["f1"] == leval.f1(row[key], row["gt"])


def test_choice_parser_equals_leval_on_random_answers(leval: SimpleNamespace) -> None:
    """10,000 random answers built from the characters that steer L-Eval's parser."""
    rng = random.Random(11)
    pieces = ["A", "B", "C", "D", "E", "I", "a", "b", " ", ".", ")", "(", "\n", ",", "Question", "The answer is ", "x"]
    for _ in range(10_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        for multi in (False, True):
            assert lt.compat_choice(text, multi=multi)[0] == leval.mc(text, multi), repr(text)


def test_math_em_and_f1_equal_leval_on_random_text(leval: SimpleNamespace) -> None:
    rng = random.Random(12)
    alphabet = "0123456789 .,$-\nab" + "The answer is "
    words = ["the", "a", "an", "The", "cat", "Cat.", "B", "AB", "ABC", "3", "3.0", "1e3", ",", "!"]
    for _ in range(5_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert lt.compat_math(text) == leval.process_math(text), repr(text)
        pred = " ".join(rng.choice(words) for _ in range(rng.randint(0, 5)))
        gold = " ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
        assert lt.compat_exact_match(pred, gold) == leval.em(pred, gold), (pred, gold)
        if gold.strip():
            assert lt.token_f1(pred, gold) == leval.f1(pred, gold), (pred, gold)


def test_scifi_and_code_processors_equal_leval(corpus: Path, leval: SimpleNamespace) -> None:
    rng = random.Random(13)
    for doc in _rows(corpus / "leval" / "LEval-data" / "Closed-ended-tasks" / "sci_fi.jsonl"):
        for gold in doc["outputs"]:
            assert list(lt.scifi_gold(gold)) == leval.process_gt_judge(gold)
            noisy = gold.replace("True", rng.choice(["true.", "It is TRUE", "untrue", "False"]))
            assert list(lt.scifi_answer(noisy)) == leval.process_output_judge(noisy)
    for _ in range(2_000):
        text = "".join(
            rng.choice(["[", "]", " ", "1", ",", "'", "is", "this", ".0", "the final output", "x"]) for _ in range(15)
        )
        gold = "".join(rng.choice(["[", "]", " ", "1", "2"]) for _ in range(rng.randint(1, 8)))
        assert lt.compat_code_output(text, gold) == leval.process_output_code(text, gold)
        assert lt.code_gold(text) == leval.process_gt_code(text)


# ------------------------------------------------------------------ dispatch, strict protocol, sci_fi


def test_dispatch_is_by_task_id_not_substring(predictions: Path, tmp_path: Path) -> None:
    """L-Eval issue #7: a path that merely contains a task name must not change how a file is scored."""
    src = predictions / "exam_eval" / "gpt4-32k" / "topic_retrieval_longchat.pred.jsonl"
    odd = tmp_path / "sci_fi_gsm_coursera" / "topic_retrieval_longchat.pred.jsonl"
    odd.parent.mkdir()
    odd.write_bytes(src.read_bytes())
    assert score_file(odd).metrics == score_file(src).metrics
    assert task_id("x/gsm100_rerun.pred.jsonl") == "gsm100_rerun"
    renamed = tmp_path / "gsm100_rerun.pred.jsonl"
    renamed.write_bytes((predictions / "exam_eval" / "gpt4-32k" / "gsm100.pred.jsonl").read_bytes())
    unknown = score_file(renamed)
    assert not unknown.task_known and unknown.task == "gsm100_rerun"
    assert score_file(renamed, task="gsm100").metrics["exact_match"] == 96.0
    assert set(TASKS) >= {"coursera", "gsm100", "codeU", "sci_fi", "narrative_qa", "paper_assistant"}


def test_strict_protocol_does_not_guess() -> None:
    rows = [
        {"query": "q", "gt": "C", "m_pred": "Based on the passage, the answer is C.", "evaluation": "exam"},
        {"query": "q", "gt": "B", "m_pred": "(B) because ...", "evaluation": "exam"},
        {"query": "q", "gt": "A", "m_pred": "I cannot tell.", "evaluation": "exam"},
        {"query": "q", "gt": "D", "m_pred": "", "evaluation": "exam"},
    ]
    compat = score_rows(rows, "quality")
    strict = score_rows(rows, "quality", "strict")
    assert [it.compared[0] for it in compat.items] == ["B", "B", "A", "None"]  # first capital anywhere; guess "A"
    assert [it.compared[0] for it in strict.items] == ["C", "B", "", ""]
    assert compat.metrics["exact_match"] == 50.0 and strict.metrics["exact_match"] == 50.0
    assert (compat.protocol, strict.protocol) == ("leval-compatible", "strict")
    assert strict.unparsed == 2 and compat.unparsed == 2
    assert lt.strict_choice("The correct answers are A, C and D.", multi=True) == "ACD"
    assert lt.strict_choice("A or B", multi=False) is None
    assert lt.strict_math("so 3,000 - 12.5 = 2987.5. The answer is -2,987.5 dollars") == -2987.5


def test_coursera_partial_credit_both_protocols() -> None:
    rows = [{"query": "q", "gt": "ABD", "m_pred": p, "evaluation": "exam"} for p in ("ABD", "AD", "AC", "answer: B")]
    assert [it.scores["exact_match"] for it in score_rows(rows, "coursera").items] == [1, 0.25, 0, 0.25]
    assert [it.scores["exact_match"] for it in score_rows(rows, "coursera", "strict").items] == [1, 0.25, 0, 0.25]


def test_scifi_gold_scores_100_and_parts_are_named(corpus: Path) -> None:
    rows = []
    for doc in _rows(corpus / "leval" / "LEval-data" / "Closed-ended-tasks" / "sci_fi.jsonl"):
        for q, a in zip(doc["instructions"], doc["outputs"], strict=True):
            rows.append({"query": q, "gt": a, "gold_pred": a, "evaluation": doc["evaluation"]})
    for protocol in ("leval-compatible", "strict"):
        m = score_rows(rows, "sci_fi", protocol).metrics
        assert m == {"loyalty/exact_match": 100.0, "fact/exact_match": 100.0, "average_loyalty_fact/exact_match": 100.0}
    rows[0]["gold_pred"] = "True"  # no "[fact:" part: L-Eval crashes here; we count it as unparsed
    assert score_rows(rows, "sci_fi").unparsed == 1


def test_strict_on_real_files_reports_unparsed(predictions: Path) -> None:
    compat = score_file(predictions / "exam_eval" / "Claude-100k" / "quality.pred.jsonl")
    strict = score_file(predictions / "exam_eval" / "Claude-100k" / "quality.pred.jsonl", protocol="strict")
    assert strict.protocol == "strict" and strict.scored == compat.scored == 202
    assert 0 < strict.metrics["exact_match"] <= 100 and strict.unparsed >= compat.unparsed
    punct = set(string.punctuation)
    assert all(set(it.compared[0]) <= set("ABCD") | punct for it in strict.items)


def test_strict_reads_option_lists_for_multi_answer_tasks() -> None:
    listed = "A. Encourage change\nC. Help solve problems"
    assert lt.strict_choice(listed, multi=True) == "AC"
    assert lt.strict_choice(listed, multi=False) is None
    assert lt.compat_choice("A, B, C", multi=True) == ("A", False)  # L-Eval misses comma-separated lists
    assert lt.strict_choice("A, B, C", multi=True) == "ABC"


def test_strict_codeu_reads_the_final_statement() -> None:
    rows = [
        {
            "query": "q",
            "gt": "2",
            "m_pred": "final_output is the result of operation2, which is False.",
            "evaluation": "exam",
        },
        {
            "query": "q",
            "gt": "[-3  6 -3]",
            "m_pred": "the final output is:\n```\nc = [-3, 6, -3]\n```",
            "evaluation": "exam",
        },
    ]
    compat, strict = score_rows(rows, "codeU"), score_rows(rows, "codeU", "strict")
    assert [it.scores["exact_match"] for it in compat.items] == [1, 0]  # "2" found inside "operation2"
    assert [it.scores["exact_match"] for it in strict.items] == [0, 1]
