"""Labels and inputs of SCALAR (ar5iv) papers after cleaning: no trail repeats the title, title samples are kept,
and a val/test label that still has debris is excluded with its kinds named."""

from __future__ import annotations

import json
from pathlib import Path

from academiceval.papers.clean import debris_counts
from academiceval.rounds.quality import debris_reason
from academiceval.rounds.tasks import task_views
from academiceval.sources.mirror.scalar_papers import paper_object_to_records


def _record(corpus: Path, arxiv_id: str):
    for folder in ("scalar_paper_obj_anno", "scalar_paper_obj_more"):
        path = corpus / "samples" / folder / f"{arxiv_id}.json"
        if path.exists():
            recs = paper_object_to_records(json.loads(path.read_bytes()), path=str(path))
            return next(r for r in recs if getattr(r, "paper", None) is not None)
    raise FileNotFoundError(arxiv_id)


def test_trails_no_longer_cost_the_title_sample(corpus: Path) -> None:
    # 2410.23168 (TokenFormer) was a test paper without a title sample: its body repeated the title in trails
    rec = _record(corpus, "2410.23168")
    views = task_views(rec.meta, rec.paper, counts=False)
    assert "title" in views.instances, views.skipped
    title = views.instances["title"]
    assert "‣" not in title.fields["body"] and "Refer to caption" not in title.fields["body"]
    intro = views.instances["introduction"]
    assert intro.debris == {} and not any(debris_counts(intro.label).values())
    assert "Figure 1:" not in intro.label and "(Vaswani et al., 2017)" in intro.label


def test_debris_left_excludes_val_and_test_labels_only() -> None:
    assert debris_reason({"math_duplicates": 2, "captions": 0}, "train") is None
    assert debris_reason({}, "test") is None
    why = debris_reason({"math_duplicates": 2, "contact_lines": 1, "captions": 0}, "test")
    assert why == "debris: contact_lines, math_duplicates left in a test label after cleaning"
