"""ElaipBench-style question generation from a stored paper: evidence checked, adversarial filter, review file."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from academiceval.families.elaip import generate as eg
from academiceval.families.elaip.generate import generate_and_filter


@dataclass
class Reply:
    text: str


def _paper(corpus: Path) -> tuple[str, str]:
    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    d = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    paras = [p["text"] for p in d["body_text"] if len(p["text"].split()) > 40]
    return d["paper_id"], "\n\n".join(paras[:12])


def test_generate_check_filter_and_review(corpus: Path, tmp_path: Path) -> None:
    from academiceval.models.registry import load_backend
    from academiceval.testing.fake_server import start_in_thread

    paper_id, text = _paper(corpus)
    words = text.split()
    span = lambda i: " ".join(words[i : i + 8])  # noqa: E731 - verbatim 8-word spans of the paper
    good_sa = {
        "question_type": "SA-MCQ",
        "question": "Which holds?",
        "answer": "B",
        "options": {"A": "w", "B": "x", "C": "y", "D": "z"},
        "evidence": {k: span(10 * n) for n, k in enumerate("ABCD")},
    }
    good_ma = {**good_sa, "question_type": "MA-MCQ", "question": "Which two hold?", "answer": "A, C"}
    invented = {**good_sa, "question": "Invented", "evidence": {**good_sa["evidence"], "C": "words that are not in it"}}
    too_many = {**good_ma, "question": "All?", "answer": "ABCD"}
    generated = "Here you go:\n```json\n" + json.dumps([good_sa, good_ma, invented, too_many]) + "\n```"

    class Generator:
        model = "scripted-generator"

        def cache_identity(self) -> dict:
            return {"backend": "test", "model": self.model}

        async def generate(self, prompt, options):
            assert paper_id in prompt and eg.GENERATOR_PROMPT.split("\n")[0] in prompt
            return Reply(generated)

    class KnowsTheMA:  # a reference model that solves the MA question only
        model = "knows-ma"

        async def generate(self, prompt, options):
            return Reply("<answer>A, C</answer>" if "Which two hold?" in prompt else "<answer>A</answer>")

    review = tmp_path / "review" / "questions.jsonl"
    with start_in_thread() as server:
        backend = load_backend("openai/fake-model", base_url=server.url)
        try:
            out = asyncio.run(
                generate_and_filter(
                    paper_id,
                    text,
                    Generator(),
                    {"fake-server": backend, "knows-ma": KnowsTheMA()},
                    setting="evidence",
                    review_file=str(review),
                )
            )
        finally:
            asyncio.run(backend.aclose())
        assert server.stats.total == 2  # the fake server answered both checked questions
    assert out["generated"] == 4
    assert [i.question.split("\n")[0] for i in out["kept"]] == ["Which holds?"]
    kept = out["kept"][0]
    assert kept.source == eg.SOURCE and "not ElaipBench" in kept.source and kept.answer == "B"
    records = [json.loads(x) for x in review.read_text().splitlines()]
    assert [r["status"] for r in records] == ["kept", "dropped", "rejected", "rejected"]
    assert records[1]["reason"] == "answered correctly by knows-ma"
    assert "evidence for C" in records[2]["reason"] and records[3]["reason"] == "MA-MCQ with answer 'ABCD'"
    assert records[0]["provenance"]["generator"] == {"backend": "test", "model": "scripted-generator"}
    assert records[0]["references"]["fake-server"]["correct"] is False
    assert "paper_content" not in records[0]["item"]


def test_unreadable_generator_answer() -> None:
    assert eg.parse_questions("no JSON here") == []
    assert eg.parse_questions('[{"question": 1}, 3]') == [{"question": 1}]
