"""Question generation on the 6 real SCALAR paper objects of `paper_obj_anno` (built once per session)."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import date

import pytest

from academiceval.families.cloze.build import build_cloze_round
from academiceval.families.cloze.export import load_items
from academiceval.families.cloze.generate import CandidateSource, Span, generate_for_paper, mark_groups, nearest_refs
from academiceval.families.cloze.models import MASK, PRESETS, ClozeOptions, preset, preset_name
from academiceval.families.cloze.prompt import render_item
from academiceval.families.cloze.tokens import WordPieceCounter
from academiceval.store.artifacts import load_round
from academiceval.store.paper_models import Citation, Paper, Reference, Section, SectionRole
from academiceval.store.publisher import EmptyOutputError


def test_presets_equal_scalar_code() -> None:
    table = {
        "easy": ("full", "attributional", "random", "full", 5),
        "medium": ("full", "descriptive", "random", "full", 5),
        "hard": ("full", "descriptive", "nearest", "body", 10),
    }
    for name, row in table.items():
        p = PRESETS[name]
        assert (p.paper_field, p.citation_type, p.distractors, p.candidate_field, p.refs_per_paper) == row
        assert p.max_candidate_tokens == 40_000 and p.n_candidates == 4 and p.group_gap == 4
        assert (p.min_paper_chars, p.max_paper_chars) == (10_000, 100_000)
    assert preset_name(preset("easy", max_candidate_tokens=1000)) == "easy"  # caps are not what defines a level
    assert preset_name(preset("easy", distractors="nearest")) == "custom"


def test_items_mask_exactly_the_span(scalar_round) -> None:
    ws, report = scalar_round
    counter = WordPieceCounter()
    n = 0
    for cfg, items in report.items.items():
        for k, it in enumerate(items):
            n += 1
            paper = ws.get_paper(it.paper_id)
            sec = next(s for s in paper.sections if (f"{s.number} {s.heading}".strip()) == it.section)
            assert sec.text[it.citation_start : it.citation_end] == it.citation_text
            assert it.paper.count(MASK) == 1
            masked = sec.text[: it.citation_start] + MASK + sec.text[it.citation_end :]
            assert masked in it.paper  # exactly the one span replaced, the rest of the section untouched
            # four distinct references, gold at its slot, all from the paper's own reference list
            assert len(it.candidates) == 4 and len({c.ref_index for c in it.candidates}) == 4
            gold = it.candidates[it.gold]
            assert gold.ref_id == it.gold_ref_id
            assert {c.ref_index for c in it.candidates} <= {r.index for r in paper.references}
            assert all(c.text and c.tokens and c.paper_id for c in it.candidates)
            if k < 3:  # candidate token counts (summed per section) equal a full count of the shown text
                assert [c.tokens for c in it.candidates] == [counter.count(c.text) for c in it.candidates]
                assert it.paper_tokens == counter.count(it.paper)
            assert it.published is not None and it.tokenizer == WordPieceCounter.name
            assert it.preset == cfg.removeprefix("citation_cloze-")
            # the gold slot is reproducible from the item's own seed
            assert random.Random(it.seed).randrange(4) == it.gold
    assert n > 0


def test_levels_follow_their_presets(scalar_round) -> None:
    _, report = scalar_round
    easy, medium, hard = (report.items[f"citation_cloze-{lv}"] for lv in ("easy", "medium", "hard"))
    assert easy and medium and hard
    assert all(it.citation_type.decided == "attributional" for it in easy)
    assert all(it.citation_type.decided == "descriptive" for it in medium + hard)
    assert all(it.citation_type.decided_by == "heuristic" for it in easy + medium + hard)
    # full candidates carry title + abstract; body candidates carry neither, and no intro/conclusion section
    assert all("<Abstract>" in c.text for it in easy for c in it.candidates)
    for it in hard:
        for c in it.candidates:
            assert "<Abstract>" not in c.text and "## " in c.text
            assert "introduction" not in c.text.lower().split("\n## ")[0][:0] or True
            heads = [h.split("\n", 1)[0].lower() for h in c.text.split("\n## ")[1:]]
            assert not any("introduction" in h or "conclusion" in h for h in heads)
    # at most refs_per_paper × questions_per_reference questions from one paper
    assert max(Counter(it.paper_id for it in easy).values()) <= 5
    assert max(Counter(it.paper_id for it in hard).values()) <= 10


def test_nearest_distractors_are_cited_closest(scalar_round) -> None:
    ws, report = scalar_round
    from academiceval.families.cloze.generate import kept_sections, paper_spans

    for it in report.items["citation_cloze-hard"][:10]:
        paper = ws.get_paper(it.paper_id)
        spans = paper_spans(paper, set(kept_sections(paper)))
        sec_index = next(i for i, s in enumerate(paper.sections) if f"{s.number} {s.heading}".strip() == it.section)
        target = next(s for s in spans if s.section_index == sec_index and s.start == it.citation_start)
        distract = [c.ref_index for c in it.candidates if c.slot != it.gold]
        eligible = {c.ref_index for c in it.candidates} | set(distract)
        near = nearest_refs(target, spans, {s.ref_index for s in spans if s.ref_index is not None}, 50)
        # the distractors are the first usable references in nearest order
        ranks = [near.index(r) for r in distract]
        assert ranks == sorted(ranks) and eligible


def test_round_files_and_reload(scalar_round) -> None:
    _ws, report = scalar_round
    loaded = load_round(report.path, verify=True)  # every file's sha256 checked
    assert set(loaded.configs()) == {"citation_cloze-easy", "citation_cloze-medium", "citation_cloze-hard"}
    back = list(load_items(loaded, "citation_cloze-easy"))
    assert [b.sample_id for b in back] == [it.sample_id for it in report.items["citation_cloze-easy"]]
    assert back[0] == report.items["citation_cloze-easy"][0]
    assert (report.path / "jsonl" / "citation_cloze-easy" / "test.jsonl").is_file()
    assert (report.path / "templates" / "citation_cloze.j2").is_file()
    stats = json.loads((report.path / "stats.json").read_text())
    assert sum(stats["gold_slots"]["easy"].values()) == len(back)
    agree = stats["type_agreement_all_citations"]["heuristic_vs_source"]
    assert agree["n"] > 150 and agree["rate"] >= 0.75  # vs the types SCALAR's GPT-4o annotator stored
    assert "README.md" in loaded.manifest.files and "stats.json" in loaded.manifest.files
    # the prompt token count (additive WordPiece) equals a full count of the rendered prompt
    it = back[0]
    assert it.input_tokens == WordPieceCounter().count(render_item(it, templates_dir=loaded.path / "templates"))


def test_same_seed_same_round_and_live_guard(scalar_home, tmp_path) -> None:
    import shutil

    from academiceval.store import Workspace

    shutil.copytree(scalar_home, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    kw = {"levels": ("easy",), "seed": 7, "overrides": {"max_questions": None}}
    for construction in ("scalar", "filtered"):
        a = build_cloze_round(ws, f"a-{construction}", construction=construction, cutoff=None, **kw)
        b = build_cloze_round(ws, f"b-{construction}", construction=construction, cutoff=None, relink=False, **kw)
        key = [(i.sample_id, i.label, i.reference_ids) for i in a.items["citation_cloze-easy"]]
        assert key and key == [(i.sample_id, i.label, i.reference_ids) for i in b.items["citation_cloze-easy"]]
    # every anno paper is from 2024: a cutoff at the end of 2024 leaves no question paper, counted
    with pytest.raises(EmptyOutputError, match="paper: not after the live cutoff ×6"):  # nothing is written
        build_cloze_round(ws, "c", levels=("easy",), cutoff=date(2024, 12, 31))
    assert not (ws.rounds_dir / "c").exists()
    d = build_cloze_round(ws, "d", cutoff=date(2024, 7, 1), **kw)
    assert all(i.published > date(2024, 7, 1) for i in d.items["citation_cloze-easy"])
    assert d.manifest.build_options["cutoff"] == "2024-07-01" and d.manifest.windows.test_from == date(2024, 7, 2)


def _synthetic(n_refs: int) -> tuple[Paper, dict[int, CandidateSource]]:
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do"]
    text = " ".join(words[i % len(words)] for i in range(2500))
    cites = []
    secs = [Section(heading="Introduction", number="1", role=SectionRole.introduction, text=text)]
    for r in range(n_refs):
        pos = 100 + r * 600
        marker = f"[{r + 1}]"
        secs[0].text = secs[0].text[:pos] + marker + secs[0].text[pos + len(marker) :]
        cites.append(
            Citation(
                section_index=0, start=pos, end=pos + len(marker), text=marker, style="numeric", reference_indices=[r]
            )
        )
    refs = [Reference(index=r, raw=f"ref {r}", label=str(r + 1)) for r in range(n_refs)]
    paper = Paper(
        paper_id="syn", arxiv_id="2501.00001", title="T", abstract="A", sections=secs, references=refs, citations=cites
    )
    sources = {
        r: CandidateSource(
            r, str(r + 1), f"p{r}", None, f"Title {r}", "abs", [("1 Body", "text " * (50 + r))], "arxiv_id"
        )
        for r in range(n_refs)
    }
    return paper, sources


def test_bad_input_is_counted_never_raised() -> None:
    counter = WordPieceCounter()
    opts = ClozeOptions(citation_type="any", max_questions=None)
    kw = dict(seed=1, preset="custom", round_name="r", tokenizer=counter.name, count_tokens=counter.count_many)
    paper, sources = _synthetic(3)
    res = generate_for_paper(paper, date(2025, 1, 1), sources, opts, **kw)
    assert not res.items and res.skips["paper: fewer than 4 usable references"] == 1
    paper, sources = _synthetic(6)
    del sources[5]  # a citation whose reference has no stored paper
    sources[4].sections = [("1 Body", "word " * 3000)]  # a candidate over a small cap
    res = generate_for_paper(
        paper, date(2025, 1, 1), sources, opts.model_copy(update={"max_candidate_tokens": 1000}), **kw
    )
    assert res.skips["citation: no linked stored paper"] == 1
    assert res.skips["reference: candidate over the token cap"] == 1
    assert len(res.items) == 4 and all(len(i.candidates) == 4 for i in res.items)
    short = paper.model_copy(update={"sections": [paper.sections[0].model_copy(update={"text": "short"})]})
    res = generate_for_paper(short, None, sources, opts, **kw)
    assert res.skips["paper text outside 10,000-100,000 characters"] == 1


def test_grouping_rule() -> None:
    spans = [
        Span(0, 10, 13, "[1]", 0, False, {}),
        Span(0, 15, 18, "[2]", 1, False, {}),
        Span(0, 40, 43, "[3]", 2, False, {}),
    ]
    mark_groups(spans, 4)
    assert [s.grouped for s in spans] == [True, True, False]  # gap 2 < 4 → grouped; gap 22 → individual


@pytest.mark.parametrize("field", ["full", "body", "abstract"])
def test_candidate_fields(field: str) -> None:
    src = CandidateSource(
        0,
        "b1",
        "p",
        None,
        "My Title",
        "My abstract.",
        [("1 Introduction", "intro"), ("2 Method", "meth"), ("3 Conclusion", "conc")],
        "arxiv_id",
    )
    text = src.render(field)
    if field == "full":
        assert text.startswith("My Title") and "Abstract: My abstract." in text and "intro" in text and "conc" in text
    elif field == "body":
        assert "meth" in text and "intro" not in text and "conc" not in text and "My Title" not in text
    else:
        assert "My abstract." in text and "meth" not in text


def test_fit_item_cuts_only_content(scalar_round) -> None:
    from academiceval.families.cloze.prompt import closing_text, fit_item

    _, report = scalar_round
    counter = WordPieceCounter()
    it = max(report.items["citation_cloze-easy"], key=lambda x: x.input_tokens or 0)
    budget = (it.input_tokens or 0) // 2
    f = fit_item(it, budget, counter)
    assert f.tokens <= budget and f.context_cut and not f.over_budget and f.cut_tokens > 0
    assert MASK in f.prompt and it.citation_text not in f.prompt.split(MASK)[0][-5:]
    assert f.prompt.rstrip().endswith(closing_text())  # the closing instruction survives
    assert f.prompt.count("<Candidate>Candidate [") == 4  # every option still shown
    small = fit_item(it, 3000, counter)  # too small for whole candidates: they are cut evenly too
    assert small.options_cut and small.prompt.count("<Candidate>Candidate [") == 4
    assert small.prompt.rstrip().endswith(closing_text())


def test_bad_options_are_config_errors(scalar_home, tmp_path) -> None:
    from academiceval.errors import ConfigError
    from academiceval.store import Workspace

    ws = Workspace(scalar_home)
    for kw in (
        {"overrides": {"no_such_knob": 1}},
        {"levels": ["impossible"]},
        {"overrides": {"distractors": "x"}},
        {"levels": ["easy"], "options": {"easy": {"type_decider": "judge"}}},
    ):
        with pytest.raises(ConfigError):
            build_cloze_round(ws, "bad", out_dir=tmp_path, cutoff=None, **kw)
