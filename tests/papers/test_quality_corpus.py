"""Quality targets pinned on real corpus PDFs (the full picture is benchmarks/ingest_quality.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from papers_corpus_subset import SUBSET

from academiceval.papers import Paper, SectionRole
from academiceval.papers.quality import expected_roles, load_truth, similarity


@pytest.fixture(scope="module")
def truths(corpus: Path):
    return {t.path.name: t for t in load_truth(corpus) if t.path.name in SUBSET}


@pytest.mark.parametrize("name", SUBSET)
def test_title_matches_metadata(parsed: dict[str, Paper], truths, name: str) -> None:
    t = truths[name]
    assert t.title, name
    assert similarity(parsed[name].title, t.title) >= 0.95, (parsed[name].title, t.title)


def test_abstracts_match_metadata_and_latex(parsed: dict[str, Paper], truths) -> None:
    with_abstract = [n for n in SUBSET if truths[n].abstract]
    # 1111.2011 has an Atom record (metadata), 1706.03762 a LaTeX abstract
    assert {"1111.2011v2.pdf", "1706.03762v7.pdf"} <= set(with_abstract)
    for n in with_abstract:
        assert similarity(parsed[n].abstract, truths[n].abstract) >= 0.90, n


@pytest.mark.parametrize("name", SUBSET)
def test_canonical_sections_found(parsed: dict[str, Paper], truths, name: str) -> None:
    want = expected_roles(truths[name].check)
    have = {s.role.value for s in parsed[name].sections if s.role}
    assert want <= have, (name, want - have)
    if truths[name].check.get("introduction") == "yes":
        assert parsed[name].section_text(SectionRole.introduction).strip()


def test_references_match_latex_bibliography(parsed: dict[str, Paper], truths) -> None:
    t = truths["1706.03762v7.pdf"]
    assert t.latex_references == 40
    n = len(parsed["1706.03762v7.pdf"].references)
    assert abs(n - t.latex_references) <= 0.1 * t.latex_references
    found = [s.heading for s in parsed["1706.03762v7.pdf"].sections]
    for h in t.latex_sections:
        assert max(similarity(h, f) for f in found) >= 0.9, h


def test_arxiv_id_from_stamp_and_version(parsed: dict[str, Paper]) -> None:
    p = parsed["2203.00130v1.pdf"]
    assert (p.arxiv_id, p.version) == ("2203.00130", 1)
    assert parsed["naacl2018_ELMo.pdf"].arxiv_id is None  # venue version: no stamp, no id in the name
    assert parsed["1706.03762v7.pdf"].pages == 15


def test_reference_fields_parsed(parsed: dict[str, Paper]) -> None:
    refs = parsed["1706.03762v7.pdf"].references
    first = refs[0]
    assert first.label == "1" and first.year == 2016 and first.arxiv_id == "1607.06450"
    assert first.authors[:2] == ["Jimmy Lei Ba", "Jamie Ryan Kiros"]
    assert first.title and first.title.lower().startswith("layer normalization")
    with_year = sum(1 for r in refs if r.year)
    assert with_year >= 0.9 * len(refs)
    # author-year list (ELMo, ACL style) has no labels but authors and years
    elmo = parsed["naacl2018_ELMo.pdf"].references
    assert len(elmo) >= 40
    assert sum(1 for r in elmo if r.authors and r.year) >= 0.9 * len(elmo)


def test_numeric_citations_resolve(parsed: dict[str, Paper]) -> None:
    p = parsed["1706.03762v7.pdf"]
    assert len(p.citations) >= 40
    for c in p.citations:
        assert p.sections[c.section_index].text[c.start : c.end] == c.text
        assert c.style == "numeric"
    assert all(c.reference_indices for c in p.citations)
    assert any(c.grouped for c in p.citations) and any(not c.grouped for c in p.citations)


def test_author_year_citations_resolve(parsed: dict[str, Paper]) -> None:
    p = parsed["naacl2018_ELMo.pdf"]
    cites = [c for c in p.citations if c.style == "author_year"]
    assert len(cites) >= 40
    resolved = [c for c in cites if c.reference_indices]
    assert len(resolved) >= 0.7 * len(cites)
    for c in resolved[:20]:
        ref = p.references[c.reference_indices[0]]
        assert c.text.split()[0].lower()[:4] in ref.raw.lower()
        assert p.sections[c.section_index].text[c.start : c.end] == c.text


def test_task_views_remove_whole_sections(parsed: dict[str, Paper]) -> None:
    p = parsed["2203.00130v1.pdf"]  # "Background and Related Work" has three subsections
    related = [s for s in p.sections if s.role == SectionRole.related_work]
    assert len(related) >= 3 and any(s.level == 2 for s in related)
    body = p.body()
    cut = p.body(without=SectionRole.related_work)
    for s in related:
        if s.text:
            assert s.text[:200] in body and s.text[:200] not in cut
    assert "REFERENCES" not in body.split("\n\n")  # references are never body
    appendix = [s for s in p.sections if s.role == SectionRole.appendix]
    assert appendix and all(s.text[:100] not in body for s in appendix if len(s.text) > 100)


def test_headings_numbering_styles(parsed: dict[str, Paper]) -> None:
    ieee = parsed["2312.10997v5.pdf"]
    assert [s.number for s in ieee.sections if s.level == 1][:3] == ["I", "II", "III"]
    assert any(s.number == "A" and s.level == 2 for s in ieee.sections)
    vit = parsed["2010.11929v2.pdf"]
    assert [s.number for s in vit.sections if s.number and s.number.isalpha()][:4] == ["A", "B", "C", "D"]
    assert all(s.role == SectionRole.appendix for s in vit.sections if s.number in {"A", "B", "C", "D"})
    ams = parsed["1504.06236v2.pdf"]  # headings set in body type, plus a table of contents to ignore
    assert next(s.heading for s in ams.sections if s.level == 1) == "Introduction"
    assert sum(1 for s in ams.sections if s.heading == "Introduction") == 1


def test_text_is_clean(parsed: dict[str, Paper]) -> None:
    for name, p in parsed.items():
        body = p.body()
        assert "\ufb01" not in body and "\ufb02" not in body, name  # ligatures folded
        assert "arXiv:" not in p.title
    vaswani = parsed["1706.03762v7.pdf"].body()
    assert "31st Conference on Neural Information Processing Systems" not in vaswani  # footer removed
    assert "Equal contribution" not in parsed["1706.03762v7.pdf"].abstract  # footnote removed


def test_table_of_contents_is_not_sections(parsed: dict[str, Paper]) -> None:
    p = parsed["0807.3577_JCAP_version.pdf"]
    headings = [s.heading for s in p.sections]
    assert headings.count("Introduction") == 1 and not any(h[-1].isdigit() for h in headings)
    assert 30 <= len(p.references) <= 45  # physics style: one entry may bundle several papers


def test_abstract_without_marker(parsed: dict[str, Paper]) -> None:
    # ACM layout: no "Abstract" heading, one block per line, authors in capitals above it
    p = parsed["2203.00130v1.pdf"]
    assert p.abstract.startswith("When seeking information not covered in patient-friendly documents")
    assert p.abstract.endswith("give readers more confidence to approach these papers.")


def test_hanging_indent_reference_list(parsed: dict[str, Paper]) -> None:
    # every entry starts at the column edge, continuation lines are indented; "A. Ibrahim. 2002. ..." is an
    # entry, not an appendix heading "A"
    refs = parsed["emnlp2004_quirk_mono04.pdf"].references
    assert len(refs) == 24
    assert refs[0].raw.startswith("R. Barzilay and K. R. McKeown. 2001.") and refs[-1].raw.startswith("S. Vogel, Y.")
    assert refs[6].authors == ["A. Ibrahim"] and refs[6].year == 2002
    assert not any(s.role == SectionRole.appendix for s in parsed["emnlp2004_quirk_mono04.pdf"].sections)


def test_references_without_heading_balanced_over_columns(corpus: Path) -> None:
    # a 4-page physics letter: the "[n]" list has no heading and is balanced over both columns under the last
    # paragraphs, so the page is read in two bands (text of both columns, then the list)
    from academiceval.papers import parse_pdf

    p = parse_pdf(corpus / "pdf" / "0908.0054v1.pdf")
    assert [r.label for r in p.references] == [str(k) for k in range(1, 20)]
    assert p.sections[-1].role == SectionRole.references
    conclusion = p.section_text(SectionRole.conclusion)
    assert conclusion.rstrip().endswith("or not.") and "[1] Hu W." not in conclusion
    assert "reference list found without a References heading" in p.warnings
