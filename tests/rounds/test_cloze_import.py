"""Importing SCALAR's published question files (written here in SCALAR's schema), then scoring baselines."""

from __future__ import annotations

import json
from pathlib import Path

from academiceval.families.cloze.export import load_items
from academiceval.families.cloze.importer import import_scalar
from academiceval.families.cloze.prompt import choice_of, fit_item
from academiceval.families.cloze.tokens import WordPieceCounter
from academiceval.models.baselines import BaselineBackend
from academiceval.scores.mcq import accuracy_by_level, score_item
from academiceval.store.artifacts import load_round

MASK = "**[MASKED_CITATION]**"
SYSTEM = (
    f'You are given a paper with a placeholder "{MASK}" in its content. Your task is to select the most '
    "appropriate reference from the provided reference list to replace the mask.\n\n- The paper content is "
    "enclosed within <Paper> and </Paper>.\n- After selecting the best-suited reference, output the index of "
    "that reference in the following format:\n<answer>index</answer>."
)
CLOSING = "Remember to output the index of the selected reference enclosed within <answer> and </answer>."
TOPICS = [
    "graph neural message passing",
    "diffusion image generation",
    "protein folding structure",
    "speech recognition audio",
]


def _question(gold: int, topic_words: str, filler: int = 0) -> str:
    paper = (
        f"\nA Study\n\nAbstract: we study things.\n\n\n## 1 Introduction\nWe build on {topic_words} {MASK} and more."
    )
    paper += " filler" * filler
    cands = "\n".join(
        f"<Candidate>Candidate [{i}]:\nPaper about {TOPICS[i]}\n"
        f"<Abstract>\nAbstract: {TOPICS[i]} {TOPICS[i]}\n</Abstract></Candidate>\n"
        for i in range(4)
    )
    return f"{SYSTEM}\n\n<Paper>\n{paper}</Paper>\n\n<References>\n{cands}\n</References>\n{CLOSING}"


def _record(i: int, gold: int) -> dict:
    return {
        "paper_id": f"http://arxiv.org/abs/2410.0{i:04d}v1",
        "question": _question(gold, TOPICS[gold]),
        "reference_id": f"bib.bib{gold + 10}",
        "label_id": gold,
        "mask_all": False,
        "citation": {
            "section_name": "1 Introduction",
            "citation_id": f"bib.bib{gold + 10}",
            "citation_text": "Smith et al., [2020]",
            "citation_type": "method" if i % 2 else "others",
            "start_pos": 10,
            "end_pos": 30,
            "nearest_citations": None,
        },
        "candidates": [{"id": k, "title": f"Paper about {TOPICS[k]}", "token_count": 100 + k} for k in range(4)],
        "additional_fields": {
            "paper_field": "full",
            "mask_all": False,
            "candidate_fields": ["title", "abstract", "sections"],
            "sample": "random",
            "max_selected_references_per_paper": 5,
        },
        "id": i,
    }


def test_import_both_forms_and_count_bad_records(tmp_path: Path) -> None:
    easy = tmp_path / "data" / "test_data" / "cloze_examples_easy"
    easy.mkdir(parents=True)
    for i in range(8):
        rec = _record(i, i % 4)
        (easy / f"2410.0{i:04d}_{i}.json").write_text(json.dumps(rec))
    bad = _record(99, 1)
    bad["label_id"] = 9
    (easy / "2410.00099_99.json").write_text(json.dumps(bad))
    (easy / "2410.00098_98.json").write_text("{not json")
    nolabel = _record(97, 1)
    del nolabel["label_id"]
    (easy / "2410.00097_97.json").write_text(json.dumps(nolabel))
    undated = _record(96, 1)
    undated["paper_id"] = "not-an-id"
    (easy / "undated.json").write_text(json.dumps(undated))
    hf = tmp_path / "scalar_hard.json"
    hf.write_text(json.dumps([_record(i, (i + 1) % 4) for i in [0, 1, 2, 3, 2]]))  # question 2 twice
    rep = import_scalar([easy, hf], tmp_path / "rounds", "scalar-pub")
    assert {k: len(v) for k, v in rep.items.items()} == {"easy": 8, "hard": 4}
    assert rep.problems == {
        "label_id outside the candidate list": 1,
        "duplicate question (same level, paper and id): the first is kept": 1,
        "unreadable JSON (JSONDecodeError)": 1,
        "missing key 'label_id'": 1,
        "no arXiv id (paper_id or file name) to date the question": 1,
    }
    loaded = load_round(rep.path, verify=True)
    items = list(load_items(loaded, "citation_cloze-easy"))
    it = items[0]
    assert it.prompt.startswith("You are given a paper") and it.arxiv_id == "2410.00000" and it.label == "0"
    assert next(c.title for c in it.candidates).startswith("Paper about")
    assert all(c.text for c in it.candidates) and MASK in it.paper  # read back from the published prompt
    assert it.citation_type.source in ("attributional", "descriptive") and it.citation_type.decided_by == "source"
    assert loaded.manifest.skipped["import"]["label_id outside the candidate list"] == 1


def test_baselines_on_imported_items(tmp_path: Path) -> None:
    d = tmp_path / "cloze_examples_easy"
    d.mkdir()
    for i in range(40):
        (d / f"2410.1{i:04d}_{i}.json").write_text(json.dumps(_record(i, i % 4)))
    rep = import_scalar([d], tmp_path / "rounds", "pub")
    items = rep.items["easy"]
    lexical = BaselineBackend("lexical-choice")
    rnd = BaselineBackend("random-choice", seed=3)
    lex_scores = [
        score_item(it.sample_id, lexical.choose_item(choice_of(it)).text, it.label, level="easy") for it in items
    ]
    rnd_scores = [score_item(it.sample_id, rnd.choose_item(choice_of(it)).text, it.label, level="easy") for it in items]
    # the words around the mask name the gold topic: BM25 finds it every time
    assert accuracy_by_level(lex_scores)["easy"].accuracy == 1.0
    assert 0.0 < accuracy_by_level(rnd_scores)["easy"].accuracy < 0.7
    # seeded: the same choice again
    assert [rnd.choose_item(choice_of(it)).text for it in items] == [
        BaselineBackend("random-choice", seed=3).choose_item(choice_of(it)).text for it in items
    ]


def test_fit_imported_prompt_keeps_closing(tmp_path: Path) -> None:
    d = tmp_path / "cloze_examples_hard"
    d.mkdir()
    rec = _record(0, 2)
    rec["question"] = _question(2, TOPICS[2], filler=3000)
    (d / "2410.10000_0.json").write_text(json.dumps(rec))
    long = import_scalar([d], tmp_path / "r", "x").items["hard"][0]
    fitted = fit_item(long, 600, WordPieceCounter())
    assert fitted.tokens <= 600 and fitted.context_cut and MASK in fitted.prompt
    assert fitted.prompt.rstrip().endswith(CLOSING)  # published wording kept, closing line never cut
    assert fitted.prompt.startswith(SYSTEM)
    assert fitted.prompt.count("<Candidate>") == 4  # candidates kept whole; only paper text was cut
