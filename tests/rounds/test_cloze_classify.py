"""Citation type: the heuristic on real contexts, agreement with SCALAR's stored types, the judge-model role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from academiceval.families.cloze.classify import (
    SCALAR_TYPES,
    JudgeClassifier,
    citation_context,
    heuristic_type,
    judgements,
    read_judge_answer,
)
from academiceval.families.cloze.stats import agreement
from academiceval.store import Workspace


def _at(text: str, marker: str) -> tuple[str, int, int]:
    i = text.index(marker)
    return text, i, i + len(marker)


@pytest.mark.parametrize(
    ("sentence", "marker", "expected"),
    [
        ("We fine-tune GPT-4 (Achiam et al., 2023) on the data.", "Achiam et al., 2023", "attributional"),
        (
            "Results on the MultiQ dataset (Holtermann et al., 2024) show gaps.",
            "Holtermann et al., 2024",
            "attributional",
        ),
        (
            "Our design follows the Moral Machine experiment (Awad et al., 2018) closely.",
            "Awad et al., 2018",
            "attributional",
        ),
        (
            "Language models can be misaligned with human values (Anwar et al., 2024).",
            "Anwar et al., 2024",
            "descriptive",
        ),
        ("This ability of LLMs (Brown et al., 2020) is well known.", "Brown et al., 2020", "descriptive"),
        ("Prior work studies culture in models [12].", "[12]", "descriptive"),
    ],
)
def test_heuristic_cases(sentence: str, marker: str, expected: str) -> None:
    assert heuristic_type(*_at(sentence, marker))[0] == expected


def test_heuristic_agrees_with_scalar_types_on_real_objects(corpus: Path) -> None:
    pairs = []
    for f in sorted((corpus / "samples" / "scalar_paper_obj_anno").glob("*.json")):
        d = json.loads(f.read_bytes())
        for sec in d["sections"].values():
            for c in sec["citations"]:
                if c["citation_type"] in SCALAR_TYPES:
                    h, _ = heuristic_type(sec["content"], c["start_pos"], c["end_pos"])
                    pairs.append((h, SCALAR_TYPES[c["citation_type"]]))
    res = agreement(pairs)
    assert res["n"] > 150
    assert res["rate"] >= 0.75  # measured 0.85 over all 72 objects (notes/cloze.md)
    # both classes are predicted (not a constant classifier)
    assert {k.split("|")[0] for k in res["confusion"]} == {"attributional", "descriptive"}


def test_context_window_is_ten_words_each_side() -> None:
    text = " ".join(f"w{i}" for i in range(40)) + " [7] " + " ".join(f"v{i}" for i in range(40))
    i = text.index("[7]")
    ctx = citation_context(text, i, i + 3)
    assert len(ctx.before.split()) == 10 and len(ctx.after.split()) == 10 and ctx.citation == "[7]"


def test_judge_is_cached_stored_and_reviewable(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    calls: list[str] = []

    def ask(prompt: str) -> str:
        calls.append(prompt)
        context = prompt.split("Context:", 1)[1]
        return "Yes." if "BERT" in context else "no"

    judge = JudgeClassifier(ask, "fake/judge-1", ws)
    text, s, e = _at("We fine-tune BERT [4] on the corpus.", "[4]")
    assert judge.classify(text, s, e, paper_id="p1") == "attributional"
    assert judge.classify(text, s, e, paper_id="p1") == "attributional"
    assert len(calls) == 1 and judge.cached == 1  # never paid twice
    text2, s2, e2 = _at("Attention helps translation [5].", "[5]")
    assert judge.classify(text2, s2, e2) == "descriptive"
    rows = judgements(ws, "fake/judge-1")
    assert len(rows) == 2
    assert rows[0]["context"] and rows[0]["prompt"] and rows[0]["answer"] in ("Yes.", "no")
    # another model does not reuse these answers
    other = JudgeClassifier(lambda p: "maybe", "fake/judge-2", ws)
    assert other.classify(text, s, e) is None and other.unreadable == 1


def test_judge_answers() -> None:
    assert read_judge_answer(" Yes") == "attributional"
    assert read_judge_answer("**No**, it describes") == "descriptive"
    assert read_judge_answer("I think so") is None


def test_judge_decides_in_a_build(scalar_home: Path, tmp_path: Path) -> None:
    import shutil

    from academiceval.families.cloze.build import build_cloze_round
    from academiceval.families.cloze.models import preset

    shutil.copytree(scalar_home, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    judge = JudgeClassifier(lambda p: "Yes", "fake/always-yes", ws)
    rep = build_cloze_round(
        ws, "j", levels=("easy",), judge=judge, options={"easy": preset("easy", type_decider="judge")}
    )
    items = rep.items["citation_cloze-easy"]
    assert items and all(
        i.citation_type.decided_by == "judge" and i.citation_type.judge == "attributional" for i in items
    )
    assert all(i.citation_type.heuristic in ("attributional", "descriptive") for i in items)  # side by side
    assert rep.manifest.build_options["judge"] == "fake/always-yes"


def test_judge_role_through_the_generate_path(tmp_path: Path) -> None:
    """Any backend can be the judge: calls go through models.generate (response cache → retry → backend)."""
    from academiceval.models.base import Capabilities, Completion
    from academiceval.models.cache import ResponseCache
    from academiceval.runs.roles import role_ask

    class Fake:
        name = "fake"
        model = "judge"
        capabilities = Capabilities()

        def __init__(self) -> None:
            self.calls = 0

        def cache_identity(self) -> dict:
            return {"backend": "fake", "model": "judge"}

        async def generate(self, prompt, options, sample=None):
            self.calls += 1
            return Completion(text="Yes" if "GPT-4" in prompt.split("Context:", 1)[1] else "No")

        async def aclose(self) -> None:
            return None

    backend = Fake()
    cache = ResponseCache.in_workspace(tmp_path)
    judge = JudgeClassifier(role_ask(backend, cache=cache), "fake/judge", None)
    text, s, e = _at("We fine-tune GPT-4 (Achiam et al., 2023) on the data.", "Achiam et al., 2023")
    assert judge.classify(text, s, e) == "attributional"
    again = JudgeClassifier(role_ask(backend, cache=cache), "fake/judge", None)  # no workspace table: response cache
    assert again.classify(text, s, e) == "attributional"
    assert backend.calls == 1
