"""ElaipBench-format rows (written here in that schema; the data set is not in the corpus): import, strict
set-match scoring (the same reading as the `accuracy` metric), unparsed answers, and intra-paper retrieval
settings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from academiceval.families.elaip import items as elaip
from academiceval.families.elaip.retrieval import retrieval_for
from academiceval.families.elaip.samples import gold_label
from academiceval.families.elaip.scoring import score_answer
from academiceval.scores.mcq import score_response


@pytest.fixture(scope="module")
def paper(corpus: Path) -> str:
    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            text = "\n\n".join(p["text"] for p in d["body_text"])
            if len(text.split()) > 4000:
                return text
    raise AssertionError("no long paper in the sample")


def _question(stem: str, opts: list[str]) -> str:
    return stem + "\n" + "\n".join(f"{letter}. {o}" for letter, o in zip("ABCD", opts, strict=True))


@pytest.fixture(scope="module")
def rows(paper: str) -> list[dict]:
    evidence = elaip.sentences(paper)[len(elaip.sentences(paper)) * 2 // 3]
    base = {"paper_id": "2212.00001", "paper_content": paper, "relevant_passage": evidence}
    return [
        {
            **base,
            "question_type": "SA-MCQ",
            "question": _question(f"Which statement holds? {evidence}", list("wxyz")),
            "answer": "C",
        },
        {**base, "question_type": "MA-MCQ", "question": _question("Which hold?", list("wxyz")), "answer": "A, C"},
        {**base, "question_type": "MA-MCQ", "question": _question("Which also hold?", list("wxyz")), "answer": "BCD"},
        {**base, "question_type": "SA-MCQ", "question": _question("Bad row", list("wxyz")), "answer": "AB"},
        {**base, "question_type": "TF", "question": "True?", "answer": "A"},
        {**base, "question_type": "MA-MCQ", "question": _question("Bad", list("wxyz")), "answer": "E"},
        {**base, "question_type": "MA-MCQ", "question": _question("One of many?", list("wxyz")), "answer": "B"},
    ]


def test_import_counts_rejects(rows: list[dict], tmp_path: Path) -> None:
    path = tmp_path / "elabench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items, rejects = elaip.read_file(path)
    assert [i.sample_id for i in items] == ["elaipbench/0", "elaipbench/1", "elaipbench/2", "elaipbench/6"]
    assert [i.answer for i in items] == ["C", "AC", "BCD", "B"]
    assert items[0].options == {"A": "w", "B": "x", "C": "y", "D": "z"} and items[0].source == "ElaipBench"
    assert [r["row"] for r in rejects] == [3, 4, 5]
    assert "SA-MCQ with 2" in rejects[0]["reason"] and "question_type" in rejects[1]["reason"]


def test_ma_row_with_one_letter_is_imported_and_flagged(rows: list[dict], tmp_path: Path) -> None:
    """ElaipBench's published file has MA rows with a single letter (401 of 403 rows imported before): such a row
    is imported as published, flagged, scored by the same strict set match, and its prompt does not claim "two
    or more" correct options; the round's manifest counts it."""
    from academiceval.families.elaip.samples import sample_to_item, write_round
    from academiceval.store.artifacts import load_round

    items, _ = elaip.read_rows(rows)
    one = items[-1]
    assert (one.question_type, one.answer, one.flags) == ("MA-MCQ", "B", [elaip.MA_SINGLE])
    assert all(not i.flags for i in items[:-1])
    prompt = elaip.render(one, "paper text")
    assert "One or more of the options A–D are correct" in prompt and "Two or more" not in prompt
    assert "Two or more of the options" in elaip.render(items[1], "paper text")  # other MA rows unchanged
    assert score_answer(one, "<answer>B</answer>").value == 1.0
    assert score_answer(one, "<answer>B, C</answer>").value == 0.0
    assert score_response(one.sample_id, "<answer>B</answer>", gold_label(one.answer), n_choices=4).value == 1.0
    round_dir = write_round(
        items, tmp_path / "eb", setting="evidence", context=lambda it: elaip.context_for(it, "evidence")
    )
    loaded = load_round(round_dir)
    assert loaded.manifest.notes["elaipbench"] == {"SA-MCQ": 1, "MA-MCQ": 3, elaip.MA_SINGLE: 1}
    back = [sample_to_item(s)[0] for s in loaded.samples("elaipbench-evidence")]
    assert back[-1].flags == [elaip.MA_SINGLE] and back[-1].answer == "B"


def test_strict_set_match_breakdown_and_runs(rows: list[dict]) -> None:
    items, _ = elaip.read_rows(rows)
    sa, ma1, ma2 = items[:3]
    run1 = [
        score_answer(sa, "<answer>C</answer>"),
        score_answer(ma1, "<answer>A, C</answer>"),
        score_answer(ma2, "<answer>B, C</answer>"),
    ]  # MA subset: no partial credit
    run2 = [
        score_answer(sa, "<answer>A, C</answer>"),
        score_answer(ma1, "I think A and C"),
        score_answer(ma2, "<answer>D C B</answer>"),
    ]
    run3 = [
        score_answer(sa, "Answer: C", parser="lenient"),
        score_answer(ma1, "<answer>CA</answer>"),
        score_answer(ma2, "<answer>B, C, E</answer>"),
    ]
    assert [s.value for s in run1] == [1, 1, 0]
    assert [s.value for s in run2] == [0, 0, 1] and run2[1].predicted is None  # unparsed: no tags
    assert [s.value for s in run3] == [1, 1, 0] and run3[2].predicted is None  # "E" is not an option
    assert run3[1].predicted == "AC"  # a letter run is read as a set
    assert score_answer(ma2, "<answer>AE</answer>").predicted is None
    # the question filter's check is the `accuracy` metric's reading of the same answer (one multiple-choice core)
    answers = [
        (sa, "<answer>C</answer>", "strict"),
        (ma1, "<answer>A, C</answer>", "strict"),
        (ma2, "<answer>B, C</answer>", "strict"),
        (sa, "<answer>A, C</answer>", "strict"),
        (ma1, "I think A and C", "strict"),
        (ma2, "<answer>D C B</answer>", "strict"),
        (sa, "Answer: C", "lenient"),
        (ma1, "<answer>CA</answer>", "strict"),
    ]
    for item, response, parser in answers:
        metric = score_response(item.sample_id, response, gold_label(item.answer), n_choices=4, parser=parser)
        assert metric.value == score_answer(item, response, parser=parser).value, response


def test_passages_and_retrieval_settings(rows: list[dict], paper: str) -> None:
    items, _ = elaip.read_rows(rows)
    item = items[0]
    retriever, count = retrieval_for("rag-bm25")
    chunks = elaip.passages(paper, size=512, count=count)
    assert len(chunks) > 5 and all(count(c) <= 512 for c in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(" ".join(elaip.sentences(paper)).split())  # nothing lost
    for setting in ("passages-bm25", "passages-dense"):  # the passages instead of the paper, in paper order
        retriever, count = retrieval_for(setting)
        text, meta = elaip.context_for(item, setting, top_k=3, retriever=retriever, count=count)
        assert meta["top_k"] == 3 and len(meta["chosen"]) == 3 and meta["passages"] == len(chunks)
        assert meta["chosen"] == sorted(meta["chosen"]) and "mode" not in meta
        assert text == "\n\n".join(chunks[i] for i in meta["chosen"])
        assert " ".join(item.relevant_passage.split()) in " ".join(text.split()), setting  # evidence retrieved
    full, meta = elaip.context_for(item, "full")
    assert full == paper and meta == {"setting": "full"}
    prompt = elaip.render(item, elaip.context_for(item, "evidence")[0], cot=True)
    assert "Exactly one of the options" in prompt and prompt.endswith("final answer in the tags.")
    with pytest.raises(ValueError):
        elaip.context_for(item, "web")
    with pytest.raises(ValueError, match="retriever"):
        elaip.context_for(item, "rag-bm25")


def test_three_epochs_through_the_runner_failures_left_out(rows: list[dict], tmp_path: Path) -> None:
    """ElaipBench's 3 runs are `run --preset elaipbench` (epochs): per-epoch accuracy, mean ± sd per SA/MA; a
    request that failed is no answer (before: `elaip run` scored it as an unparsed, wrong answer)."""
    from academiceval.families.elaip.samples import write_round
    from academiceval.models.base import Capabilities, Completion
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs

    items = elaip.read_rows(rows)[0][:3]
    gold = {i.question.strip()[:40]: i.answer for i in items}

    class Oracle:  # epoch 1 right; epoch 2 (seed 1) drops a letter of MA answers and times out once on SA;
        name, model, capabilities = "oracle", "oracle", Capabilities()  # epoch 3 (seed 2) picks A for SA
        fail = True
        calls = 0

        def cache_identity(self) -> dict:
            return {"backend": "oracle", "model": "oracle"}

        async def aclose(self) -> None:
            return None

        async def generate(self, prompt, options, sample=None) -> Completion:
            Oracle.calls += 1
            answer = next(a for q, a in gold.items() if q in prompt)
            if options.seed == 1 and len(answer) == 1 and Oracle.fail:
                raise TimeoutError("slow")
            if options.seed == 1 and len(answer) > 1:
                answer = answer[1:]
            if options.seed == 2 and len(answer) == 1:
                answer = "A"
            assert options.temperature == 0.1 and options.max_tokens == 32  # the preset's protocol
            return Completion(text=f"<answer>{answer}</answer>")

    round_dir = write_round(
        items, tmp_path / "rounds" / "eb", setting="evidence", context=lambda it: elaip.context_for(it, "evidence")
    )
    config = RunConfig(model="openai/oracle", preset="elaipbench")

    def spread() -> dict:
        (res,) = score_runs([summary.run_dir], ScoreConfig(metrics=["accuracy"]), round_dir=round_dir)
        (m,) = res.summary
        return {k: (s.per_epoch, s.mean, s.sd) for k, s in m.by_epoch.items()}

    summary = run_round(tmp_path / "ws", round_dir, config, backend=Oracle())
    assert Oracle.calls == 9 and summary.failures() == {"internal": 1} and summary.incomplete() is not None
    got = spread()
    assert got["accuracy"][0] == [1.0, 0.0, pytest.approx(2 / 3)]  # epoch 2: the two MA answers, both wrong
    assert got["accuracy:SA-MCQ"][0] == [1.0, None, 0.0]  # no answer in epoch 2: no number, not a 0
    assert got["accuracy:SA-MCQ"][1:] == (0.5, pytest.approx(2**0.5 / 2))
    assert got["accuracy:MA-MCQ"][1:] == (pytest.approx(2 / 3), pytest.approx(3**0.5 / 3))

    Oracle.fail = False  # a rerun asks the failed (sample, epoch) only
    summary = run_round(tmp_path / "ws", round_dir, config, backend=Oracle())
    assert Oracle.calls == 10 and summary.incomplete() is None
    assert spread()["accuracy"][0] == [1.0, pytest.approx(1 / 3), pytest.approx(2 / 3)]


def test_cli_run_and_generate_against_the_fake_server(rows: list[dict], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app
    from academiceval.store import Workspace
    from academiceval.store.paper_models import Paper, Section
    from academiceval.testing.fake_server import start_in_thread

    path = tmp_path / "elabench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    home = tmp_path / "ws"
    ws = Workspace(home)
    ws.put_paper(
        Paper(
            paper_id="p1",
            arxiv_id="2212.00001",
            title="T",
            abstract="A.",
            sections=[Section(heading="Intro", text=rows[0]["paper_content"])],
        )
    )
    ws.put_paper(
        Paper(
            paper_id="p2",
            arxiv_id="2212.00002",
            title="Short",
            abstract="A.",
            sections=[Section(heading="Intro", text=rows[0]["paper_content"][:3000])],
        )
    )
    ws.close()
    with start_in_thread() as server:
        res = CliRunner().invoke(
            app,
            [
                "elaip",
                "run",
                str(path),
                "--model",
                "openai/fake-model",
                "--base-url",
                server.url,
                "--setting",
                "evidence",
                "--runs",
                "2",
                "--json",
                "--home",
                str(home),
            ],
        )
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["runs"] == 2 and out["all"]["n_per_run"] == 4 and len(out["rejected_rows"]) == 3
        assert 0 <= out["all"]["unparsed_total"] <= 8 and out["prompt_sha256"]
        assert server.stats.total == 8
        review = tmp_path / "review.jsonl"
        args = [
            "elaip",
            "generate",
            "2212.00001",
            "--generator",
            "openai/fake-model",
            "--reference",
            "openai/fake-model",
            "--review",
            str(review),
            "--base-url",
            server.url,
            "--home",
            str(home),
        ]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output  # the fake generator writes no JSON: nothing to review, no crash
        asked = server.stats.total
        res = CliRunner().invoke(app, [*args[:2], "2212.00002", *args[3:]])  # ElaipBench's length gate
        assert res.exit_code == 2 and "fewer than the 4,096 ElaipBench requires" in res.output
        assert server.stats.total == asked  # refused before any request
        res = CliRunner().invoke(app, [*args[:2], "nope", *args[3:]])
        assert res.exit_code == 2 and "no stored paper" in res.output


def test_paper_plus_snippets_within_the_budget_round_robin(rows: list[dict], paper: str) -> None:
    """ElaipBench's RAG settings: the whole paper and the top-5 passages as auxiliary knowledge, in descending
    score; over the budget the passages lose sentences round-robin (lowest score first), the paper is never cut,
    and every snippet still starts and ends on a sentence of its passage."""
    items, _ = elaip.read_rows(rows)
    item = items[0]
    for setting in ("rag-bm25", "rag-dense"):
        retriever, count = retrieval_for(setting)
        units = elaip.passage_units(paper, size=512, count=count)
        text, meta = elaip.context_for(item, setting, retriever=retriever, count=count, budget=None)
        assert meta["mode"] == "paper+snippets" and len(meta["chosen"]) == 5 and meta["snippets_kept"] == 5
        assert meta["scores"] == sorted(meta["scores"], reverse=True)  # best first
        assert text.startswith(item.paper_content + "\n\n" + elaip.AUX_HEADER)
        assert text.endswith(" ".join(units[meta["chosen"][-1]]))
        full = meta["prompt_tokens"]
        assert full == count(elaip.render(item, text))
        # a budget 300 tokens under the whole prompt: trimmed round-robin, the paper intact, within budget
        cut, m = elaip.context_for(item, setting, retriever=retriever, count=count, budget=full - 300)
        assert m["prompt_tokens"] <= full - 300 and m["sentences_trimmed"] >= 1 and not m["over_budget"]
        assert cut.startswith(item.paper_content + "\n\n" + elaip.AUX_HEADER)
        block = cut.split(elaip.AUX_HEADER + "\n\n", 1)[1]
        shown = re.split(r"(?:^|\n\n)\[\d+\] ", block)[1:]  # a sentence may hold a paragraph break itself
        assert 1 <= len(shown) == m["snippets_kept"]
        assert m["kept"] == [i for i in meta["chosen"] if i in m["kept"]]  # score order kept
        for k, body in zip(m["kept"], shown, strict=True):
            sentences = units[k]
            assert any(body == " ".join(sentences[:j]) for j in range(1, len(sentences) + 1))  # a sentence prefix
        # a budget the paper alone exceeds: every snippet goes, the paper stays whole, and the record says so
        alone, m = elaip.context_for(item, setting, retriever=retriever, count=count, budget=1_000)
        assert alone == item.paper_content and m["over_budget"] and m["snippets_kept"] == 0


def test_round_robin_order() -> None:
    def count(s: str) -> int:
        return len(s.split())

    snippets = [["a1 a1", "a2 a2"], ["b1 b1", "b2 b2"], ["c1 c1"]]  # best first
    out, n = elaip.trim_round_robin(snippets, 5, count)
    assert (out, n) == ([["a1 a1"], ["b1 b1"], []], 3)  # c (lowest) first, then b, then a
    out, n = elaip.trim_round_robin(snippets, 100, count)
    assert (out, n) == ([[], [], []], 5)
    assert elaip.with_knowledge("P", [["x."], [], ["z."]]) == f"P\n\n{elaip.AUX_HEADER}\n\n[1] x.\n\n[2] z."
