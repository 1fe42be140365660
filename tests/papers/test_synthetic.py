"""Exact checks on a PDF we write ourselves: headers, page numbers, line numbers, footnotes, two columns,
hyphenation, numbered headings, appendix after references, citations."""

from __future__ import annotations

from pathlib import Path

from papers_pdf_factory import CONCLUSION, HEADER, RELATED_A, RELATED_B

from academiceval.papers import SectionRole, parse_pdf
from academiceval.papers.layout import _clean
from academiceval.papers.roles import role_of


def test_synthetic_paper_structure(pdf_dir: dict[str, Path]) -> None:
    p = parse_pdf(pdf_dir["good"])
    assert p.title == "A Synthetic Study of Parsing"
    assert p.abstract == "We study how to recover sections from layout. The abstract has two lines of text."
    assert [(s.number, s.heading, s.role) for s in p.sections] == [
        ("1", "Introduction", SectionRole.introduction),
        ("2", "Related Work", SectionRole.related_work),
        ("3", "Conclusion", SectionRole.conclusion),
        (None, "References", SectionRole.references),
        ("A", "Extra Proofs", SectionRole.appendix),
    ]
    body = p.body()
    assert HEADER not in body and "Corresponding author" not in body
    # page numbers and review line numbers are gone from every section's text
    assert not [tok for s in p.sections for tok in s.text.split() if tok.isdigit()]
    assert "hyphenation handling" in body  # "hyphen-" + "ation" joined
    related = p.section_text(SectionRole.related_work)
    # left column before right column, not interleaved by height
    assert related.index(RELATED_A) < related.index("Another left paragraph") < related.index(RELATED_B)
    assert p.section_text(SectionRole.conclusion) == CONCLUSION
    assert "appendix holds proofs" not in body
    assert CONCLUSION not in p.body(without=SectionRole.conclusion)


def test_synthetic_references_and_citations(pdf_dir: dict[str, Path]) -> None:
    p = parse_pdf(pdf_dir["good"])
    assert [r.label for r in p.references] == ["1", "2"]
    first, second = p.references
    assert first.authors == ["Jane Doe", "John Roe"] and first.year == 2020
    assert first.title == "A first paper on parsing"
    assert second.arxiv_id == "2101.00001" and second.year == 2021 and second.title == "Another paper title"
    intro = p.sections[0].text
    got = [(c.text, c.reference_indices, c.grouped, c.style) for c in p.citations]
    assert got == [("[1]", [0], False, "numeric"), ("[1, 2]", [0, 1], True, "numeric")]
    for c in p.citations:
        assert intro[c.start : c.end] == c.text


def test_arxiv_id_from_file_name(tmp_path: Path, pdf_dir: dict[str, Path]) -> None:
    named = tmp_path / "2203.00130v3.pdf"
    named.write_bytes(pdf_dir["good"].read_bytes())
    p = parse_pdf(named)
    assert (p.arxiv_id, p.version) == ("2203.00130", 3)
    old = tmp_path / "astro-ph_0601001.pdf"  # old-style id, slash replaced as in the workspace's pdf/ folder
    old.write_bytes(pdf_dir["good"].read_bytes())
    assert (parse_pdf(old).arxiv_id, parse_pdf(old).version) == ("astro-ph/0601001", None)


def test_roles_from_heading_words() -> None:
    cases = {
        "Background": SectionRole.related_work,
        "Prior Work": SectionRole.related_work,
        "Literature Review": SectionRole.related_work,
        "BACKGROUND AND RELATED WORK": SectionRole.related_work,
        "Concluding Remarks": SectionRole.conclusion,
        "Discussion and Conclusion": SectionRole.conclusion,
        "Summary": SectionRole.conclusion,
        "Conclusions and Future Work": SectionRole.conclusion,
        "Acknowledgments": SectionRole.acknowledgements,
        "Bibliography": SectionRole.references,
        "Supplementary Material": SectionRole.appendix,
        "Extended Introduction": SectionRole.introduction,
        "Experimental Results": SectionRole.experiments,
        "Proposed Method": SectionRole.method,
    }
    for heading, role in cases.items():
        assert role_of(heading) == role, heading
    assert role_of("Multi-Head Attention") is None


def test_ligatures_and_accents_are_folded() -> None:
    assert _clean("e\ufb03cient \ufb01eld \ufb02ow") == "efficient field flow"
    # spacing accents of old LaTeX fonts are folded into the letter they belong to
    assert _clean("J\u00b4ozefowicz and Lema\u02c6\u0131tre") == "Józefowicz and Lemaître"


def test_author_year_markers() -> None:
    from academiceval.papers.citations import find_citations
    from academiceval.papers.references import parse_reference
    from academiceval.store.paper_models import Section

    refs = [
        parse_reference(0, None, "Claude Shannon. 1948. A mathematical theory of communication. Bell System TJ."),
        parse_reference(1, None, "Claude Shannon. 1951. Prediction and entropy of printed English. Bell System TJ."),
        parse_reference(2, None, "Ann Lee and Bo Kim. 2019a. Something we cite. In Proceedings of ACL."),
    ]
    text = "Models (Shannon, 1948, 1951) exist. Lee and Kim (2019a) agree (see Lee and Kim, 2019a; Shannon, 1951)."
    cites = find_citations([Section(heading="Introduction", text=text)], refs, "author_year")
    got = [(c.text, c.reference_indices, c.grouped) for c in cites]
    assert got == [
        ("Shannon, 1948", [0], True),
        ("1951", [1], True),
        ("Lee and Kim (2019a)", [2], False),
        ("Lee and Kim, 2019a", [2], True),
        ("Shannon, 1951", [1], True),
    ]
    assert all(text[c.start : c.end] == c.text and c.style == "author_year" for c in cites)
