"""Journal layouts from the lab publication list (../shared/corpus/lab_publications/comp-physics): the parser's
title/abstract against the list's own BibTeX entries (which the parser never reads), plus unit checks of the
front-matter rules and of the reference-list additions (bare numbered lists, alphabetic labels)."""

from __future__ import annotations

from pathlib import Path

import pytest

from academiceval.papers import Paper, parse_pdf
from academiceval.papers.citations import find_citations
from academiceval.papers.frontmatter import furniture_kind, is_author_line
from academiceval.papers.layout import Line
from academiceval.papers.quality import similarity
from academiceval.papers.references import reference_style, split_entries
from academiceval.sources.publist import read_bibtex
from academiceval.store.paper_models import Reference, Section

# one PDF per front-matter problem (all journal versions)
LAB_SUBSET = {
    "bati-CPC-24.pdf": "Elsevier masthead; 'A R T I C L E I N F O A B S T R A C T' on one line",
    "bryngelson-PRE-19.pdf": "APS running head 'PHYSICAL REVIEW E 100, 012203 (2019)' in the title's size",
    "bryngelson-SoftX-20.pdf": "SoftwareX banner as large as the title",
    "bryngelson-ICMF-19.pdf": "author line set larger than the title",
    "bryngelson-report-26.pdf": "cover page; subtitle in another size; abstract on page 3",
    "sanchez-soft-26.pdf": "RSC: journal name, 'PAPER' label, side column, bare numbered references",
    "bryngelson-JFM-18.pdf": "JFM: no abstract marker; '1. Introduction' in body type inside a block",
    "vaca-IJMF-26.pdf": "'Research Paper' label; abstract column beside the article-info column",
    "radhakrishnan-ICMF-23.pdf": "author line right under the title in the same size",
}


@pytest.fixture(scope="session")
def lab_dir(corpus: Path) -> Path:
    return corpus / "lab_publications" / "comp-physics"


@pytest.fixture(scope="session")
def lab_truth(lab_dir: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for e in read_bibtex(lab_dir / "ref.bib").entries:
        for f in e.files:
            out[f] = (e.title, e.abstract)
    return out


@pytest.fixture(scope="session")
def lab_parsed(lab_dir: Path) -> dict[str, Paper]:
    return {name: parse_pdf(lab_dir / "papers" / name) for name in LAB_SUBSET}


@pytest.mark.parametrize("name", sorted(LAB_SUBSET))
def test_journal_title_and_abstract(name: str, lab_parsed: dict[str, Paper], lab_truth: dict) -> None:
    paper = lab_parsed[name]
    title, abstract = lab_truth[name]
    assert similarity(paper.title, title) >= 0.95, (LAB_SUBSET[name], paper.title)
    assert similarity(paper.abstract, abstract) >= 0.90, (LAB_SUBSET[name], paper.abstract[:200])
    if name != "bryngelson-SoftX-20.pdf":  # a software paper: "1. Motivation and significance", no Introduction
        assert any(s.role and s.role.value == "introduction" for s in paper.sections), [
            s.heading for s in paper.sections
        ]


def test_subtitle_in_another_size_is_joined(lab_parsed: dict[str, Paper]) -> None:
    assert (
        lab_parsed["bryngelson-report-26.pdf"].title
        == "Apple Neural Engine: Architecture, Programming, and Performance"
    )


def test_bare_numbered_references_without_heading(lab_parsed: dict[str, Paper], parsed: dict[str, Paper]) -> None:
    refs = lab_parsed["sanchez-soft-26.pdf"].references
    assert len(refs) >= 90
    assert [r.label for r in refs[:5]] == ["1", "2", "3", "4", "5"]
    assert refs[0].raw.startswith("P. A. Taylor")
    # 1111.2011 (arXiv, APS style): "1 D. C. Johnston, Adv. Phys. 59, 803 (2010)." with no References heading
    phys = parsed["1111.2011v2.pdf"].references
    assert [r.label for r in phys] == [str(k) for k in range(1, len(phys) + 1)] and len(phys) >= 15
    assert phys[0].raw.startswith("D. C. Johnston") and phys[0].year == 2010


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Contents lists available at ScienceDirect", "banner"),
        ("journal homepage: www.elsevier.com/locate/cpc", "banner"),
        ("PHYSICAL REVIEW FLUIDS 3, 073101 (2018)", "running-head"),
        ("Computer Physics Communications 266 (2021) 107396", "running-head"),
        ("J. Fluid Mech. (2018), vol. 852, pp. 663–677.", "running-head"),
        ("(Received 21 March 2019; published 8 July 2019)", "banner"),
        ("0010-4655/© 2023 Elsevier B.V. All rights reserved.", "banner"),
        ("DOI: 10.1103/PhysRevE.100.012203", "banner"),
        ("Original software publication", "article-type"),
        ("Research Paper", "article-type"),
        ("33rd Symposium on Naval Hydrodynamics", "event"),
        ("School of Computational Science & Engineering, Georgia Institute of Technology", "affiliation"),
        ("Spencer H. Bryngelson* and Tim Colonius", "authors"),
        ("Anand Radhakrishnan a, Benjamin Wilfong a , Spencer H. Bryngelson abc ,1,", "authors"),
        ("A R T I C L E  I N F O", "marker"),
        ("Irregular dynamics of cellular blood flow in a model microvessel", None),
        ("RoseNNa: A performant, portable library for neural network inference with", None),
        ("Retrieval-Augmented Generation for", None),
        ("Fast Macroscopic Forcing Method", None),
    ],
)
def test_furniture_kind(text: str, kind: str | None) -> None:
    ln = Line(text, 0, 100, 400, 110, 12.0, False, 0, 0)
    assert furniture_kind(ln) == kind


def test_journal_name_between_masthead_lines() -> None:
    mk = lambda t, y: Line(t, 200, y, 400, y + 10, 14.0, False, 0, 0)  # noqa: E731
    prev, name, nxt = (
        mk("Contents lists available at ScienceDirect", 60),
        mk("Computer Physics Communications", 85),
        mk("journal homepage: www.elsevier.com/locate/cpc", 115),
    )
    assert furniture_kind(name, prev, nxt) == "journal"


def test_author_lines() -> None:
    assert is_author_line("Henry Le Berre, Anand Radhakrishnan, and Spencer H. Bryngelson")
    assert is_author_line("Tianyi Chu, Benjamin Wilfong, Timothy Koehler")
    assert not is_author_line("Deep Learning and Neural Networks")
    assert not is_author_line("Architecture, Programming, and Performance")


def _line(text: str, y: float) -> Line:
    return Line(text, 50, y, 300, y + 9, 9.0, False, 5, 1)


def test_alphabetic_labels_split_and_cited() -> None:
    lines = [
        _line("[BCD+20] T. Brown, B. Mann, N. Ryder, et al. Language models are few-shot learners. 2020.", 0),
        _line("[Knu84] D. E. Knuth. Literate programming. The Computer Journal, 1984.", 12),
        _line("[LM19] A. Lee and B. Moore. Another paper. 2019.", 24),
    ]
    entries = split_entries(lines)
    assert [label for label, _ in entries] == ["BCD+20", "Knu84", "LM19"]
    refs = [Reference(index=i, raw=raw, label=label) for i, (label, raw) in enumerate(entries)]
    assert reference_style(refs) == "alphabetic"
    sec = Section(
        heading="Introduction", level=1, text="Few-shot [BCD+20] and literate code [Knu84; LM19]; not [Fig12]."
    )
    cites = find_citations([sec], refs, reference_style(refs))
    assert [(c.text, c.reference_indices, c.grouped, c.style) for c in cites] == [
        ("[BCD+20]", [0], False, "alphabetic"),
        ("[Knu84; LM19]", [1, 2], True, "alphabetic"),
    ]
