"""Issue 28 item 9: the examples page shows LaTeX left in real paper text (an author's `\\ourmethod`, cleveref's
`\\creffig:intro`, hyperref's `\\cref@constructprefix page\\cref@result`, `\\url{…}`) as the words it stands for —
on the SCALAR paper objects the demo round is built from — while the run records keep the exact text."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from academiceval.papers.clean import readable
from academiceval.report.render import make_report
from academiceval.sources.mirror.scalar_papers import read_scalar_paper_object
from academiceval.store.artifacts import load_run

from .conftest import build_saved_runs

OBJECTS = "samples/scalar_paper_obj_more"
MATH = re.compile(r"\$[^$\n]*\$")


def _paragraphs(corpus: Path, arxiv_id: str) -> list[str]:
    data = json.loads((corpus / OBJECTS / f"{arxiv_id}.json").read_text(encoding="utf-8"))
    papers = [r.paper for r in read_scalar_paper_object(data) if getattr(r, "paper", None) is not None]
    own = next(p for p in papers if p.arxiv_id == arxiv_id and p.source != "scalar-cited")
    return [para for s in own.sections for para in s.text.split("\n\n") if para.strip()]


@pytest.fixture(scope="module")
def leftovers(corpus: Path) -> dict[str, str]:
    """Real paragraphs of two demo papers, each holding one kind of leftover."""
    paras = _paragraphs(corpus, "2410.23168") + _paragraphs(corpus, "2410.22489")
    want = {"author macro": r"\ourmethod", "glued cleveref": r"\creffig:", "hyperref internal": r"\cref@"}
    found = {k: next((p for p in paras if v in p), None) for k, v in want.items()}
    assert all(found.values()), found  # the corpus's texts do hold them
    return found


def test_readable_shows_the_words_and_keeps_math(leftovers: dict[str, str]) -> None:
    for kind, text in leftovers.items():
        shown = readable(text)
        assert not re.search(r"\\(?:ourmethod|cref|creffig|crefsec|url)\b|\\[A-Za-z]+@", shown), (kind, shown)
        assert MATH.findall(shown) == MATH.findall(text), kind  # the authors' notation, verbatim
        assert readable(shown) == shown  # nothing left to repair
    assert re.search(r"\bourmethod\b", readable(leftovers["author macro"]))
    assert "[ref]" in readable(leftovers["glued cleveref"])
    assert readable(r"see \url{https://github.com/x/y} and \emph{this}") == "see https://github.com/x/y and this"


def test_examples_page_reads_clean_and_records_stay_exact(leftovers, corpus: Path, tmp_path: Path) -> None:
    text = leftovers["author macro"]
    saved = build_saved_runs(tmp_path / "home", corpus, limit=4, evil=text)
    rep = make_report(saved.runs_dir, tmp_path / "out", examples_per_task=4)
    page = html.unescape(rep.examples_html.read_text(encoding="utf-8"))
    body = page.split("</p>", 1)[1]  # after the page's own explanation (which names \ourmethod)
    assert readable(text)[:200] in body
    assert r"\ourmethod" not in body and "ourmethod" in body
    run = load_run(saved.run_dirs["baseline/lead"])
    assert any(r.output.startswith(text) for r in run.records.values())  # the record keeps what was scored


def test_tex_quotes_read_as_quotes(corpus: Path) -> None:
    """The demo's 2410.21665 abstract writes ``bright ending'' as TeX does; the page shows typographic quotes."""
    data = json.loads((corpus / OBJECTS / "2410.21665.json").read_text(encoding="utf-8"))
    text = data["abstract"]
    assert "`bright ending'" in text or "``bright ending''" in text
    shown = readable(text)
    assert "`" not in shown and ("\u2018bright ending" in shown or "\u201cbright ending" in shown)
