"""Front matter on layouts the parser was not first built for (issue 23 item 10).

Each case is a first page written with PyMuPDF the way one arXiv style sets it — a short system name on its own
line or in another size above the title ("PROMPT2MODEL:" / "olmOCR 2"), a title wrapped before words that look
like an author line ("A Survey") or an event ("… the 2014 / NeurIPS Experiment") or the Abstract marker
("… with / ABSTRACT MEANING REPRESENTATIONS"), an all-caps title over author names in the same size, a single
author name under a short title — plus the real corpus PDF whose name line was lost before (olmOCR 2). The
arXiv PDFs the change was measured on (`benchmarks/frontmatter_unseen.py`) are not used here.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from academiceval.papers.frontmatter import _first_prose, find_abstract, find_title, is_author_line
from academiceval.papers.layout import Layout, Line, extract_layout

BODY = (
    "Large language models are used for many tasks and this paragraph is body text of the introduction, "
    "long enough to be read as prose by the parser."
)
ABSTRACT = "We study how a parser reads the front matter of a paper whose title is set in an unusual way."

Spec = tuple[str, float, str]  # (text, font size, PyMuPDF base font: "hebo" bold, "helv" regular)


def _first_page(path: Path, head: list[Spec], *, abstract_marker: str = "Abstract", gap: float = 1.25) -> Path:
    """A one-page paper: `head` lines from the top (each under the last, `gap` x its size apart), then the
    abstract, an Introduction and a References section (so that it parses as a paper)."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 90.0
    for text, size, font in head:
        width = pymupdf.get_text_length(text, fontname=font, fontsize=size)
        page.insert_text(((612 - width) / 2, y), text, fontsize=size, fontname=font)
        y += gap * size + 4
    y += 20
    page.insert_text((280, y), abstract_marker, fontsize=12, fontname="hebo")
    y += 20
    for part in (ABSTRACT[:60], ABSTRACT[60:]):
        page.insert_text((120, y), part, fontsize=10, fontname="tiro")
        y += 12.5
    y += 20
    page.insert_text((72, y), "1 Introduction", fontsize=12, fontname="hebo")
    y += 18
    for part in (BODY[:90], BODY[90:]):
        page.insert_text((72, y), part, fontsize=10, fontname="tiro")
        y += 12.5
    y += 20
    page.insert_text((72, y), "References", fontsize=12, fontname="hebo")
    page.insert_text(
        (72, y + 18), "[1] A. Author. A cited paper. In Proc. of Things, 2020.", fontsize=9, fontname="tiro"
    )
    doc.save(path)
    doc.close()
    return path


def _title(path: Path) -> str:
    with pymupdf.open(path) as doc:
        return find_title(extract_layout(doc))[0]


def test_system_name_line_above_the_title(tmp_path: Path) -> None:
    pdf = _first_page(
        tmp_path / "name.pdf",
        [
            ("PROMPT2MODEL:", 12.4, "hebo"),
            ("Generating Deployable Models from Natural Language Instructions", 14.3, "hebo"),
            ("Vijay Viswanathan, Chenyang Zhao, Amanda Bertsch", 12, "helv"),
            ("Carnegie Mellon University", 11, "helv"),
        ],
        gap=1.0,
    )
    assert _title(pdf) == "PROMPT2MODEL: Generating Deployable Models from Natural Language Instructions"


def test_system_name_without_colon_in_a_smaller_size(tmp_path: Path) -> None:
    pdf = _first_page(
        tmp_path / "olm.pdf",
        [
            ("olmOCR 2", 14.3, "hebo"),
            ("Unit Test Rewards for Document OCR", 24.8, "hebo"),
            ("Jake Poznanski", 10, "hebo"),
        ],
        gap=2.0,
    )
    assert _title(pdf) == "olmOCR 2: Unit Test Rewards for Document OCR"


def test_olmocr_title_keeps_its_name_line(corpus: Path) -> None:
    """The real PDF: "olmOCR 2" is set at 14 pt on its own line above the 25 pt title (read as 0.88 before)."""
    assert _title(corpus / "pdf" / "olmOCR-2.pdf") == "olmOCR 2: Unit Test Rewards for Document OCR"


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        (  # the second line is two capitalised words: an "author line" by the furniture rules
            [("Bias and Fairness in Large Language Models:", 15.9, "hebo"), ("A Survey", 15.9, "hebo")],
            "Bias and Fairness in Large Language Models: A Survey",
        ),
        (  # the first line names an event and a year
            [
                ("Inconsistency in Conference Peer Review: Revisiting the 2014", 17.2, "helv"),
                ("NeurIPS Experiment", 17.2, "helv"),
            ],
            "Inconsistency in Conference Peer Review: Revisiting the 2014 NeurIPS Experiment",
        ),
        (  # the second line starts with the word Abstract
            [
                ("IMPROVING MEDICAL DIALOGUE GENERATION WITH", 12, "hebo"),
                ("ABSTRACT MEANING REPRESENTATIONS", 12, "hebo"),
            ],
            "IMPROVING MEDICAL DIALOGUE GENERATION WITH ABSTRACT MEANING REPRESENTATIONS",
        ),
        (  # "are" is not an affiliation mark, so the first line is not an author line
            [("Big Self-Supervised Models are", 17.2, "hebo"), ("Strong Semi-Supervised Learners", 17.2, "hebo")],
            "Big Self-Supervised Models are Strong Semi-Supervised Learners",
        ),
    ],
)
def test_wrapped_title_lines_that_look_like_furniture(tmp_path: Path, lines: list[Spec], want: str) -> None:
    head = [*lines, ("Isabel O. Gallegos, Ryan A. Rossi", 11, "helv"), ("Stanford University", 10, "helv")]
    assert _title(_first_page(tmp_path / "wrap.pdf", head, gap=1.0)) == want


def test_author_names_in_the_title_size_are_not_title(tmp_path: Path) -> None:
    """ICLR style: the all-caps bold title and the author names (no commas) are both 12 pt."""
    pdf = _first_page(
        tmp_path / "iclr.pdf",
        [
            ("GLANCING FUTURE FOR SIMULTANEOUS MACHINE TRANSLATION", 12, "hebo"),
            ("Shoutao Guo Shaolei Zhang Yang Feng", 12, "helv"),
            ("Institute of Computing Technology", 12, "helv"),
        ],
        abstract_marker="ABSTRACT",
    )
    assert _title(pdf) == "GLANCING FUTURE FOR SIMULTANEOUS MACHINE TRANSLATION"


def test_single_author_under_a_short_title_is_not_a_subtitle(tmp_path: Path) -> None:
    pdf = _first_page(
        tmp_path / "measure.pdf",
        [
            ("On the Measure of Intelligence", 20.7, "helv"),
            ("Francois Chollet", 14.3, "helv"),
            ("Google, Inc.", 12, "helv"),
        ],
    )
    assert _title(pdf) == "On the Measure of Intelligence"


def test_subtitle_in_another_size_still_joined(tmp_path: Path) -> None:
    pdf = _first_page(
        tmp_path / "ane.pdf",
        [("Apple Neural Engine", 20, "hebo"), ("Architecture, Programming, and Performance", 14, "hebo")],
    )
    assert _title(pdf) == "Apple Neural Engine: Architecture, Programming, and Performance"


def test_a_word_of_a_numbered_sentence_is_not_a_journal_name(tmp_path: Path) -> None:
    """ "AlphaCode achieved … top 54.3% …" on the page used to make "AlphaCode" a journal name."""
    pdf = _first_page(
        tmp_path / "alpha.pdf",
        [
            ("Competition-Level Code Generation with", 20.9, "hebo"),
            ("AlphaCode", 20.9, "hebo"),
            ("Yujia Li, David Choi, Junyoung Chung", 9, "hebo"),
            ("AlphaCode ranked in the top 54.3% with more than 5,000 participants", 9, "helv"),
        ],
        gap=1.0,
    )
    assert _title(pdf) == "Competition-Level Code Generation with AlphaCode"


def test_author_line_words() -> None:
    assert not is_author_line("Big Self-Supervised Models are")
    assert is_author_line("A. Bati a, S. H. Bryngelson b")
    assert is_author_line("Spencer H. Bryngelson ab and Tim Colonius")


def test_unmarked_abstract_read_by_block_when_line_boxes_are_short() -> None:
    """Some fonts give line boxes far shorter than the leading (4 pt high, 14 pt apart): the lines of one text
    block are one paragraph all the same, so the abstract starts at its first sentence."""
    sentences = [
        "Value functions are a central component of deep reinforcement learning. These functions, param-",
        "eterized by neural networks, are trained using a mean squared error regression objective to match",
        "bootstrapped target values. However, scaling value-based RL methods that use regression to large",
        "networks, such as high-capacity Transformers, has proven challenging in practice for many tasks.",
    ]
    lines = [Line("Stop Regressing: Training Value Functions", 62, 90, 506, 101, 20.9, True, 0, 0)]
    lines += [Line("Jesse Farebrother, Jordi Orbay, Quan Vuong", 62, 147, 509, 155, 8.8, True, 0, 1)]
    lines += [Line(t, 62, 213 + 14 * k, 533, 217 + 14 * k, 10.0, True, 0, 2) for k, t in enumerate(sentences)]
    lines += [Line("1. Introduction", 62, 466, 155, 472, 13.0, True, 0, 3)]
    layout = Layout(lines, 1, 612.0, 10.9)
    text = _first_prose(layout, 1, 5)
    assert text.startswith("Value functions are a central component")
    assert find_abstract(layout, 0, 5).startswith("Value functions are a central component")
