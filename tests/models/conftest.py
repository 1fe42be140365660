"""Samples built from real papers of the unarXive sample in ../shared/corpus (read in place, never copied)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from academiceval.store.models import CitedPaper, Demo, Sample

UNARXIVE = Path("samples/unarXive_sample/arXiv_src_2212_086.jsonl")
_PLACEHOLDER = re.compile(r"\{\{(?:formula|cite|figure|table):[^}]*\}\}")


def _clean(text: str) -> str:
    return " ".join(_PLACEHOLDER.sub("", text).split())


def load_papers(corpus: Path) -> dict[str, dict]:
    """arXiv id -> {title, abstract, categories, sections: [(name, text)], refs: [raw bib strings]}."""
    papers: dict[str, dict] = {}
    for line in (corpus / UNARXIVE).read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        sections: list[tuple[str, str]] = []
        for para in d["body_text"]:
            name = para.get("section") or ""
            text = _clean(para["text"])
            if not text:
                continue
            if sections and sections[-1][0] == name:
                sections[-1] = (name, sections[-1][1] + "\n\n" + text)
            else:
                sections.append((name, text))
        papers[d["paper_id"]] = {
            "arxiv_id": d["paper_id"],
            "title": " ".join(d["metadata"]["title"].split()),
            "abstract": " ".join(d["abstract"]["text"].split()),
            "category": d["metadata"]["categories"].split()[0],
            "sections": sections,
            "refs": [" ".join(b["bib_entry_raw"].split()) for b in d["bib_entries"].values()][:40],
        }
    return papers


@pytest.fixture(scope="session")
def papers(corpus: Path) -> dict[str, dict]:
    return load_papers(corpus)


def body_of(paper: dict, *, without: str | None = None) -> str:
    keep = [(n, t) for n, t in paper["sections"] if not (without and without.lower() in n.lower())]
    return "\n\n".join(f"{n}\n{t}" if n else t for n, t in keep)


def section(paper: dict, name: str) -> str:
    return "\n\n".join(t for n, t in paper["sections"] if name.lower() in n.lower())


def make_demo(paper: dict, task: str) -> Demo:
    if task == "title":
        fields, label = {"body": body_of(paper), "abstract": paper["abstract"]}, paper["title"]
    else:
        fields, label = {"body": body_of(paper), "title": paper["title"]}, paper["abstract"]
    return Demo(arxiv_id=paper["arxiv_id"], published=date(2022, 12, 1), fields=fields, label=label, origin="random")


def make_sample(
    paper: dict,
    task: str = "abstract",
    *,
    demos: list[dict] | None = None,
    citations: list[CitedPaper] | None = None,
) -> Sample:
    """A sample of `task` for a real paper; demos are other real papers."""
    if task == "title":
        fields, label = {"body": body_of(paper), "abstract": paper["abstract"]}, paper["title"]
    elif task == "abstract":
        fields, label = {"body": body_of(paper), "title": paper["title"]}, paper["abstract"]
    elif task == "introduction":
        fields = {
            "body": body_of(paper, without="introduction"),
            "title": paper["title"],
            "abstract": paper["abstract"],
        }
        label = section(paper, "introduction")
    else:
        fields = {"body": body_of(paper, without="related"), "title": paper["title"], "abstract": paper["abstract"]}
        label = section(paper, "related")
    setting = f"random:{len(demos)}" if demos else "zero-shot"
    return Sample(
        sample_id=f"{task}/{setting}/{paper['arxiv_id']}",
        round="test-round",
        task=task,  # type: ignore[arg-type]
        setting=setting,
        split="test",
        arxiv_id=paper["arxiv_id"],
        paper_id=paper["arxiv_id"],
        published=date(2022, 12, 22),
        primary_category=paper["category"],
        fields=fields,
        citations=citations or [],
        demos=[make_demo(d, "title" if task == "title" else "abstract") for d in demos or []],
        label=label,
    )


def citations_from(paper: dict, n: int = 8) -> list[CitedPaper]:
    """Cited papers from a real bibliography (the raw entry as title; no abstract)."""
    return [CitedPaper(title=ref[:200]) for ref in paper["refs"][:n]]


def cited_papers(papers: dict[str, dict], ids: list[str]) -> list[CitedPaper]:
    """Other real papers of the corpus as a citation corpus (title + abstract)."""
    return [CitedPaper(arxiv_id=i, title=papers[i]["title"], abstract=papers[i]["abstract"]) for i in ids]
