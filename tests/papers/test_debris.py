"""The label cleaner on real texts of every source: each kind of debris found, repaired, and gone afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from academiceval.papers.clean import DEBRIS_KINDS, clean_markup, clean_text, debris_counts, source_family, vocabulary
from academiceval.papers.debris import mathml
from academiceval.papers.debris.edits import Edit, OffsetMap, apply
from academiceval.sources.mirror.scalar_papers import paper_object_to_records
from academiceval.sources.mirror.unarxive import read_unarxive_lines

MARKUP_KINDS = (
    "xref_trails",
    "image_markup",
    "escaped_markup",
    "heading_markup",
    "list_markup",
    "table_markup",
    "inline_footnotes",
    "link_markup",
)


def _scalar_paper(corpus: Path, arxiv_id: str):
    path = corpus / "samples" / "scalar_paper_obj_anno" / f"{arxiv_id}.json"
    if not path.exists():
        path = corpus / "samples" / "scalar_paper_obj_more" / f"{arxiv_id}.json"
    raw = json.loads(path.read_bytes())
    recs = [r for r in paper_object_to_records(raw, path=str(path)) if getattr(r, "paper", None) is not None]
    return raw, recs[0].paper


@pytest.fixture(scope="module")
def multitp(corpus: Path):
    return _scalar_paper(corpus, "2407.02273")


def test_scalar_object_is_stored_without_markup_and_spans_still_point_at_their_text(multitp) -> None:
    raw, paper = multitp
    raw_intro = raw["sections"]["1 Introduction"]["content"]
    before = debris_counts(raw_intro)
    assert before["xref_trails"] >= 3 and before["image_markup"] >= 1 and before["table_markup"] >= 5
    intro = paper.sections[0].text
    after = debris_counts(intro)
    assert all(after[k] == 0 for k in MARKUP_KINDS), after
    assert "Multilingual Trolley Problems for Language Models" not in intro  # the trail's title is gone
    assert "(see Table 1)" in intro and "(Foot, 1967)" in intro
    for c in paper.citations:
        assert paper.sections[c.section_index].text[c.start : c.end] == c.text
        assert "[" not in c.text  # "Awad et al., [2018]" became "Awad et al., 2018"


def test_captions_go_at_label_time_not_at_reading(multitp) -> None:
    _, paper = multitp
    intro = paper.sections[0].text
    assert "Figure 1: Example question" in intro  # reading keeps captions (a judgement made for labels)
    cleaned = clean_text(intro, source=paper.source)
    assert "Figure 1:" not in cleaned.text and cleaned.changes["captions removed"] >= 1
    assert all(v == 0 for v in debris_counts(cleaned.text).values()), debris_counts(cleaned.text)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [  # verbatim from the corpus's SCALAR objects
        ("from O\u200b(N2)𝑂superscript𝑁2O(N^{2}) to O\u200b(N)𝑂𝑁O(N),", "from $O(N^{2})$ to $O(N)$,"),
        ("sample p=0.05𝑝0.05p=0.05 of all tokens", "sample $p=0.05$ of all tokens"),
        ("the state (stsubscript𝑠𝑡s\\_{t}) of", "the state ($s_{t}$) of"),
        ("the density ρ𝜌\\rho here", "the density $\\rho$ here"),
        ("in 1.151.151.15x performance and 11,6561165611,656 passages", "in 1.15x performance and 11,656 passages"),
        (
            "Let ℳt−1subscriptℳ𝑡1{\\\\mathcal{M}}\\_{t-1}.",
            "Let ${\\mathcal{M}}_{t-1}$.",
        ),
        # the annotation leaves out named operators ("min", "log") or holds "…": the loose rule
        (
            "is then\nmink\u2061{tk/sk}subscript𝑘subscript𝑡𝑘subscript𝑠𝑘\\min_{k}\\{t_{k}/s_{k}\\}, being",
            "is then\n$\\min_{k}{t_{k}/s_{k}}$, being",
        ),
        (
            "distribution 𝐩=(p1,…,pN)𝐩subscript𝑝1…subscript𝑝𝑁\\mathbf{p}=(p_{1},...,p_{N}),\nfrom",
            "distribution $\\mathbf{p}=(p_{1},...,p_{N})$,\nfrom",
        ),
        (
            "set as:\n\nηr=2\u200b(log\u2061N+N\u200blog\u2061M)(N\u200b4r)subscript𝜂𝑟2𝑁𝑁𝑀𝑁superscript4𝑟"
            "\\eta_{r}=\\sqrt{\\frac{2(\\log N+N\\log M)}{(N4^{r})}} (1)",
            "set as:\n\n$\\eta_{r}=\\sqrt{\\frac{2(\\log N+N\\log M)}{(N4^{r})}}$ (1)",
        ),
    ],
)
def test_formulas_written_three_times_become_one(raw: str, expected: str) -> None:
    out = clean_text(raw, source="scalar").text
    assert out == expected
    assert mathml.count(out) == 0 and mathml.count(raw) >= 1


def test_pdf_furniture_captions_and_fonts() -> None:
    text = (
        "A wide range of scales imposes restrictions on the weights\n\n"
        "E-mail address: shb@gatech.edu (S.H. Bryngelson).\n\n"
        "of each bin of the distribution, as in Colonius et al. [3].\n\n"
        "FIG. 5. (Color online) Long-time (t ¼ 50d=cl) pressure for ao ¼ 10.\n\n"
        "979-8-3503-5554-3/24/$31.00 ©2024 IEEE\n\n"
        "The moments faðr þ caDt; tÞ ¼ faðr; tÞ are computed in Fig. 5."
    )
    before = debris_counts(text)
    assert before["contact_lines"] and before["captions"] and before["publisher_lines"] and before["font_garbage"]
    out = clean_text(text, vocabulary([text]), source="pdf").text
    assert "shb@gatech.edu" not in out and "IEEE" not in out and "Color online" not in out
    assert "restrictions on the weights of each bin" in out  # the sentence cut by the e-mail line is joined
    assert "fa(r + caDt; t) = fa(r; t)" in out
    assert all(v == 0 for k, v in debris_counts(out).items() if k != "broken_hyphens"), debris_counts(out)


def test_caption_styles_without_a_colon_are_captions() -> None:
    for cap in ("Fig. 1. A sketch of the setup.", "FIG. 1. A sketch.", "TABLE II. Parameters.", "Table 25.3. Words."):
        assert debris_counts(f"Some prose here.\n\n{cap}")["captions"] == 1, cap
    for prose in ("Fig. 1 shows the setup.", "Table 2 lists the parameters used.", "Table 12.1 is the family map."):
        assert debris_counts(f"Intro.\n\n{prose}")["captions"] == 0, prose


def test_offsets_move_spans_and_drop_cut_ones() -> None:
    text = "aa [2017] bb | x | cc"
    m = OffsetMap()
    edits = [Edit(3, 4, ""), Edit(8, 9, ""), Edit(13, 18, "")]
    new, kept = apply(text, edits)
    m.add(kept)
    assert new == "aa 2017 bb  cc"
    span = m.span(3, 9)  # "[2017]" contains both its edits
    assert span is not None and new[span[0] : span[1]] == "2017"
    assert m.span(14, 15) is None  # inside the removed table cell
    s = m.span(19, 21)
    assert s is not None and new[s[0] : s[1]] == "cc"
    assert m.span(8, 14) is None  # straddles the start of the removed cell


def test_cleaning_is_idempotent_and_leaves_no_markup_on_real_sections(corpus: Path) -> None:
    f = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    with f.open() as fh:
        papers = [r.paper for r in read_unarxive_lines(iter(fh), path=str(f)) if getattr(r, "paper", None)][:5]
    _, scalar = _scalar_paper(corpus, "2410.23168")
    for paper in [*papers, scalar]:
        vocab = vocabulary([s.text for s in paper.sections])
        for s in paper.sections[:6]:
            once = clean_text(s.text, vocab, source=paper.source).text
            assert clean_text(once, vocab, source=paper.source).text == once
            left = debris_counts(once)
            assert left["placeholders"] == 0 and left["xref_trails"] == 0 and left["image_markup"] == 0


def test_markup_reading_records_changes_and_families() -> None:
    raw = 'see [Figure1]Figure 1 ‣ 1 Introduction ‣ A Title") and ![Refer to caption]Figure 1: X.'
    text, changes = clean_markup(raw)
    assert text.startswith("see Figure 1 and") and changes["xref_trails repaired"] == 1
    assert changes["image_markup repaired"] == 1
    assert source_family("scalar-ref") == "markdown" and source_family("unarxive") == "latex"
    assert source_family("pdf") == "pdf" and "math_duplicates" in DEBRIS_KINDS
