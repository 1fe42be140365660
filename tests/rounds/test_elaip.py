"""ElaipBench-format rows (written here in that schema; the data set is not in the corpus): import, strict
set-match scoring (the same reading as the `accuracy` metric), unparsed answers, and intra-paper retrieval
settings."""

from __future__ import annotations

import json
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
    ]


def test_import_counts_rejects(rows: list[dict], tmp_path: Path) -> None:
    path = tmp_path / "elabench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items, rejects = elaip.read_file(path)
    assert [i.sample_id for i in items] == ["elaipbench/0", "elaipbench/1", "elaipbench/2"]
    assert [i.answer for i in items] == ["C", "AC", "BCD"]
    assert items[0].options == {"A": "w", "B": "x", "C": "y", "D": "z"} and items[0].source == "ElaipBench"
    assert [r["row"] for r in rejects] == [3, 4, 5]
    assert "SA-MCQ with 2" in rejects[0]["reason"] and "question_type" in rejects[1]["reason"]


def test_strict_set_match_breakdown_and_runs(rows: list[dict]) -> None:
    items, _ = elaip.read_rows(rows)
    sa, ma1, ma2 = items
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
    for setting in ("rag-bm25", "rag-dense"):
        retriever, count = retrieval_for(setting)
        text, meta = elaip.context_for(item, setting, top_k=3, retriever=retriever, count=count)
        assert meta["top_k"] == 3 and len(meta["chosen"]) == 3 and meta["passages"] == len(chunks)
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

    items, _ = elaip.read_rows(rows)
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
    from academiceval.papers.models import Paper, Section
    from academiceval.store import Workspace
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
        assert out["runs"] == 2 and out["all"]["n_per_run"] == 3 and len(out["rejected_rows"]) == 3
        assert 0 <= out["all"]["unparsed_total"] <= 6 and out["prompt_sha256"]
        assert server.stats.total == 6
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
        res = CliRunner().invoke(app, [*args[:2], "nope", *args[3:]])
        assert res.exit_code == 2 and "no stored paper" in res.output
