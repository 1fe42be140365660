"""Metadata from the right record (issue 23 item 4), on the corpus's real files.

A SCALAR paper object carries, for each cited paper, a *reference entry*: the citing bibliography's title
("Attention is all you need, 2023") and no date. Such an entry is never a paper's own metadata: the paper's PDF
stamp or any arXiv record replaces it whole. Dates keep their real precision: an arXiv id alone gives a month
(a SCALAR object, a vN stamp), never the month's last day recorded as an exact day. Titles are stored as text:
LaTeX rendered, and an all-caps title from a page takes its case from metadata or from the paper's own text.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from academiceval.sources.mirror.records import REFERENCE_SOURCE, MirrorRecord, merge_records, standing
from academiceval.sources.mirror.stamped import STAMP_SOURCE, parsed_title_abstract
from academiceval.sources.mirror.titles import latex_title, normalize_title, recase
from academiceval.sources.mirror.workspace import index_mirror
from academiceval.store.paper_models import PaperMeta

OBJECT = "samples/scalar_paper_obj_anno/2410.02223.json"  # cites 1706.03762 as "Attention is all you need, 2023."


def _mirror(corpus: Path, root: Path, *names: str) -> Path:
    root.mkdir()
    links = {
        "object": (root / "2410.02223.json", corpus / OBJECT),
        "pdf": (root / "1706.03762v7.pdf", corpus / "pdf" / "1706.03762v7.pdf"),
        "scalar": (root / "scalar.json", corpus / "metadata" / "scalar_iclr2025_metadata.json"),
    }
    for name in names:
        link, target = links[name]
        link.symlink_to(target)
    return root


def _cited_with_text_only(corpus: Path) -> str:
    """A paper the object cites with its text, and no other file of these mirrors describes."""
    data = json.loads((corpus / OBJECT).read_text())
    for r in data["references"]["data"].values():
        aid = str(r.get("arxiv_id") or "").split("v")[0]
        if aid and aid != "1706.03762" and (r.get("sections") or r.get("abstract")):
            return aid
    raise AssertionError("the object cites no paper with text")


def test_reference_entry_never_stands_for_a_paper_with_its_own_pdf(corpus: Path, workspace, tmp_path: Path) -> None:
    index_mirror(workspace, _mirror(corpus, tmp_path / "m", "object", "pdf"))
    m = workspace.get_meta("1706.03762")
    assert m is not None and m.source == STAMP_SOURCE and m.version == 7
    assert m.title == "Attention Is All You Need"  # the paper's own title, not the bibliography's label
    # only v7 is stamped (2023): v1 is known to the id's month, stored as that month, not as 2017-06-30 exact
    assert (m.published, m.date_precision, m.updated) == (date(2017, 6, 1), "month", date(2023, 8, 2))
    # the reference entry's text of the paper is kept, as that paper's pre-parsed text
    cited = workspace.get_paper("scalar-ref:1706.03762")
    assert cited is not None and cited.sections
    # a cited paper known from nothing else keeps its reference entry, dated to the month of its id
    other = workspace.get_meta(_cited_with_text_only(corpus))
    assert other is not None and other.source == REFERENCE_SOURCE and other.date_precision == "month"
    assert other.published.day == 1
    q = workspace.get_meta("2410.02223")
    assert q is not None and (q.source, q.published, q.date_precision) == ("scalar_paper", date(2024, 10, 1), "month")
    before = {x.arxiv_id: x for x in workspace.iter_meta()}
    index_mirror(workspace, tmp_path / "m")  # idempotent
    assert {x.arxiv_id: x for x in workspace.iter_meta()} == before


def test_exact_day_wins_over_the_ids_month_in_any_order(corpus: Path, tmp_path: Path) -> None:
    from academiceval.store import Workspace

    together = Workspace(tmp_path / "w1")
    index_mirror(together, _mirror(corpus, tmp_path / "both", "object", "scalar"))
    apart = Workspace(tmp_path / "w2")
    index_mirror(apart, _mirror(corpus, tmp_path / "meta", "scalar"))
    index_mirror(apart, _mirror(corpus, tmp_path / "obj", "object"))
    try:
        for ws in (together, apart):
            q = ws.get_meta("2410.02223")
            # SCALAR's metadata file (arXiv's record) dates the paper to the day
            assert q is not None and q.date_precision == "day" and q.published.month == 10 and q.published.day > 1
        assert together.get_meta("2410.02223") == apart.get_meta("2410.02223")
    finally:
        together.close()
        apart.close()


def _rec(source: str, title: str, published: date, precision: str = "day", version: int | None = 1) -> MirrorRecord:
    meta = PaperMeta(
        arxiv_id="1706.03762",
        version=version,
        title=title,
        published=published,
        date_precision=precision,  # type: ignore[arg-type]
        source=source,
    )
    return MirrorRecord(meta, datetime.combine(published, datetime.min.time(), tzinfo=UTC))


def test_merge_by_standing_and_date_precision() -> None:
    ref = _rec(REFERENCE_SOURCE, "Attention is all you need, 2023", date(2017, 6, 1), "month")
    stamp = _rec(STAMP_SOURCE, "ATTENTION IS ALL YOU NEED", date(2017, 6, 1), "month", version=7)
    abs_ = _rec("abs", "Attention Is All You Need", date(2017, 6, 12))
    assert standing(REFERENCE_SOURCE) < standing(STAMP_SOURCE) < standing("abs")
    for a, b in ((ref, abs_), (abs_, ref)):  # the higher standing wins whole, whatever the order or version
        assert merge_records(a, b).meta == abs_.meta
    assert merge_records(ref, stamp).meta.source == STAMP_SOURCE
    # a month from one record and an exact day from another record of the same standing: the day wins
    month = _rec("scalar_paper", "Attention Is All You Need", date(2017, 6, 1), "month")
    merged = merge_records(month, abs_)
    assert (merged.meta.published, merged.meta.date_precision) == (date(2017, 6, 12), "day")
    # a title set in capitals takes the case of the other record with the same words
    caps = _rec("abs", "ATTENTION IS ALL YOU NEED", date(2017, 6, 12), version=2)
    assert merge_records(abs_, caps).meta.title == "Attention Is All You Need"


def test_latex_titles_rendered_from_real_records(corpus: Path, workspace, tmp_path: Path) -> None:
    root = tmp_path / "tex"
    root.mkdir()
    (root / "u.jsonl").symlink_to(corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl")
    (root / "k.jsonl").symlink_to(corpus / "metadata" / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    index_mirror(workspace, root)
    wse = workspace.get_meta("2212.11895")
    assert wse is not None and "Twisted Bilayer WSe2 by" in wse.title and "$" not in wse.title
    tise = workspace.get_meta("0704.0159")
    assert tise is not None and tise.title.endswith("in 1T-TiSe2")
    stored = [m.title for m in workspace.iter_meta()]
    assert not [t for t in stored if "$" in t and t.count("$") % 2 == 0]  # no formula left in LaTeX
    assert latex_title("Hermite and Laguerre $\\beta$-ensembles") == "Hermite and Laguerre β-ensembles"
    assert latex_title('Gr\\"obner bases cost 5$') == "Gröbner bases cost 5$"  # an unpaired $ is a dollar


def test_all_caps_page_titles_take_a_real_case(corpus: Path) -> None:
    title, _ = parsed_title_abstract(corpus / "pdf" / "1504.06236v2.pdf")
    assert title == "Improving Detection of Influential Nodes in Complex Networks"
    assert recase("A REVIEW OF LLMS IN CHEMISTRY", "large language models (LLMs) in chemistry") == (
        "A Review of LLMs in Chemistry"
    )
    caps = "COMPETITIVE PHYSICS INFORMED NETWORKS"
    assert (
        normalize_title(caps, case_from=["Competitive physics informed networks"])
        == "Competitive physics informed networks"
    )
    assert recase("Deep Residual Learning", "anything") == "Deep Residual Learning"  # a real case is kept
