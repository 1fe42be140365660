"""Citation spans and reference links in the store, from real SCALAR paper objects."""

from __future__ import annotations

import json
from pathlib import Path

from academiceval.papers.links import TitleIndex, citation_spans, link_all, link_paper, links_of
from academiceval.sources.mirror.scalar_papers import paper_object_to_records, split_heading
from academiceval.sources.mirror.scan import detect
from academiceval.store import Workspace
from academiceval.store.paper_models import Paper, Reference

PAPER = "2407.02273"


def _object(corpus: Path) -> dict:
    return json.loads((corpus / "samples" / "scalar_paper_obj_anno" / f"{PAPER}.json").read_bytes())


def test_reader_keeps_every_span_and_its_reference(corpus: Path) -> None:
    raw = _object(corpus)
    recs = [r for r in paper_object_to_records(raw, path="x") if hasattr(r, "meta")]
    q = recs[0].paper
    assert q is not None and q.paper_id == f"scalar:{PAPER}" and q.version == 5
    n_raw = sum(len(s["citations"]) for s in raw["sections"].values())
    # offsets in the objects are exact; the only spans dropped are inside removed ar5iv markup (table rows), and
    # the paper says how many
    dropped = sum(int(w.split()[0]) for w in q.warnings if "inside removed ar5iv markup" in w)
    assert len(q.citations) == n_raw - dropped and dropped < 0.05 * n_raw
    assert "‣" not in " ".join(s.text for s in q.sections)  # no cross-reference trail is left in the store
    for c in q.citations:
        sec = q.sections[c.section_index]
        assert sec.text[c.start : c.end] == c.text
        ref = q.references[c.reference_indices[0]]
        assert ref.label  # the bib id, e.g. "bib.bib9"
    # the one reference of "Awad et al." resolves to bib.bib9 and keeps SCALAR's own annotation
    awad = [c for c in q.citations if c.text.startswith("Awad et al.")]
    assert awad and all(q.references[c.reference_indices[0]].label == "bib.bib9" for c in awad)
    assert {c.source_labels.get("scalar_citation_type") for c in awad} <= {"method", "others", None}
    # cited papers with text become stored papers of their own (13 arXiv-linked references in this object)
    cited = [r for r in recs[1:]]
    assert len(cited) == len(raw["references"]["data"])
    gpt4 = next(r.paper for r in cited if r.meta.arxiv_id == "2303.08774")
    assert gpt4.paper_id == "scalar-ref:2303.08774" and gpt4.sections and gpt4.abstract


def test_heading_split() -> None:
    assert split_heading("3 The MultiTP Dataset") == ("3", "The MultiTP Dataset")
    assert split_heading("7 Related Work\\") == ("7", "Related Work")
    assert split_heading("Abstract") == (None, "Abstract")


def test_mirror_index_detects_paper_objects_and_dates_merge(corpus: Path, scalar_home: Path) -> None:
    assert detect(corpus / "samples" / "scalar_paper_obj_anno" / f"{PAPER}.json").fmt == "scalar_paper"
    ws = Workspace(scalar_home)
    meta = ws.get_meta(PAPER)
    assert meta is not None and meta.version == 5
    assert meta.published.isoformat() == "2024-07-02"  # exact date from SCALAR's metadata file wins
    assert ws.get_paper(f"scalar:{PAPER}") is not None


def test_links_by_arxiv_id_and_by_fuzzy_title(scalar_home: Path, tmp_path: Path) -> None:
    ws = Workspace(scalar_home)
    report = link_all(ws, [f"scalar:{PAPER}"])
    links = links_of(ws, f"scalar:{PAPER}")
    q = ws.get_paper(f"scalar:{PAPER}")
    assert q is not None
    by_label = {q.references[i].label: lk for i, lk in links.items()}
    assert by_label["bib.bib1"].target_paper_id == "scalar-ref:2303.08774"
    assert by_label["bib.bib1"].method == "arxiv_id"
    assert report.linked["arxiv_id"] + report.linked["title"] == len(links)
    # a work SCALAR did not link to arXiv gets its title from the object's markdown bibliography, and links by it
    assert by_label["bib.bib57"].method == "title" and by_label["bib.bib57"].target_arxiv_id == "1904.09728"
    # unlinked references are counted with a reason, never an error
    assert sum(report.unlinked.values()) == len(q.references) - len(links)
    # a reference with only a (slightly different) title links by fuzzy title
    index = TitleIndex.from_workspace(ws)
    citing = Paper(
        paper_id="t",
        references=[
            Reference(index=0, raw="x", title="Language models are few-shot learners"),
            Reference(index=1, raw="y", title="GPT-4 Technical Report"),
            Reference(index=2, raw="z", title="A paper nobody stored about nothing in particular"),
        ],
    )
    got = {lk.ref_index: lk for lk in link_paper(citing, index)}
    assert got[0].method == "title" and got[0].target_arxiv_id == "2005.14165"
    assert got[1].target_arxiv_id == "2303.08774"
    assert 2 not in got


def test_citation_spans_view(scalar_home: Path) -> None:
    ws = Workspace(scalar_home)
    q = ws.get_paper(f"scalar:{PAPER}")
    assert q is not None
    spans = citation_spans(q)
    assert len(spans) == len(q.citations)
    assert all(s.section and s.reference_index is not None for s in spans)
    assert spans == sorted(spans, key=lambda s: (s.section_index, s.start))
