"""Saved runs built from real text: unarXive papers (Dec 2022) from ../shared/corpus.

Each "model" is a deterministic rule over the paper's real body text (like the project's baselines), the
reference is the paper's real abstract or title, and ROUGE-L is computed with the rouge-score package, so every
number in these fixtures is an honest score of real text. Nothing is hard-coded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import pytest

from academiceval.store.models import RunRecord, RunSpec, ScoreRecord

UNARXIVE = "samples/unarXive_sample/arXiv_src_2212_086.jsonl"
ROUND = "2022-12-demo"
MANIFEST_SHA = "0" * 63 + "1"
SETTINGS = ("zero-shot", "random:1")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.strip()) > 20]


@dataclass
class Paper:
    arxiv_id: str
    published: date
    title: str
    abstract: str
    body: list[str]  # paragraphs


def load_papers(corpus: Path) -> list[Paper]:
    out = []
    with (corpus / UNARXIVE).open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            md = d["metadata"]
            created = datetime.strptime(md["versions"][0]["created"], "%a, %d %b %Y %H:%M:%S %Z").date()
            body = [b["text"] for b in d["body_text"] if b.get("text")]
            if not body or not md.get("abstract"):
                continue
            out.append(Paper(md["id"], created, " ".join(md["title"].split()), " ".join(md["abstract"].split()), body))
    return out


# "models": real rules over the real body text
def lead(p: Paper, task: str, k: int) -> str:
    sents = _sentences(" ".join(p.body))
    if task == "title":
        return " ".join(" ".join(sents[:1]).split()[:12])
    return " ".join(sents[:k])


def tail(p: Paper, task: str, k: int) -> str:
    sents = _sentences(" ".join(p.body))
    if task == "title":
        return " ".join(" ".join(sents[-1:]).split()[:12])
    return " ".join(sents[-k:])


MODELS = {"baseline/lead": lead, "baseline/tail": tail}


@dataclass
class SavedRuns:
    root: Path  # <home>
    runs_dir: Path
    papers: list[Paper]
    run_dirs: dict[str, Path] = field(default_factory=dict)
    # (model, task, setting) -> list of (sample_id, published, rouge-L F)
    values: dict[tuple[str, str, str], list[tuple[str, date, float]]] = field(default_factory=dict)


def build_saved_runs(home: Path, corpus: Path, *, limit: int | None = None, evil: str | None = None) -> SavedRuns:
    """Write run dirs as `academiceval run` + `score` would: run.json, <task-setting>.jsonl, scores.jsonl."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    papers = load_papers(corpus)[:limit]
    saved = SavedRuns(root=home, runs_dir=home / "runs", papers=papers)
    for model, rule in MODELS.items():
        d = home / "runs" / ROUND / model.replace("/", "__")
        d.mkdir(parents=True)
        saved.run_dirs[model] = d
        spec = RunSpec(
            round=ROUND,
            round_manifest_sha256=MANIFEST_SHA,
            model=model,
            backend="baseline",
            options={"temperature": 0.0},
            package_version="test",
            created_at="2026-01-01T00:00:00+00:00",
        )
        (d / "run.json").write_text(spec.model_dump_json(indent=2))
        scores = []
        for task, ref_of in (("abstract", lambda p: p.abstract), ("title", lambda p: p.title)):
            for setting in SETTINGS:
                k = 3 if setting == "zero-shot" else 5
                lines = []
                for i, p in enumerate(papers):
                    sid = f"{task}/{setting}/{p.arxiv_id}"
                    out = rule(p, task, k)
                    if evil and i == 0:
                        out = evil + " " + out
                    err = "empty answer" if (model == "baseline/tail" and i == 1) else None
                    body_tokens = sum(len(x.split()) for x in p.body)
                    rec = RunRecord(
                        sample_id=sid,
                        task=task,
                        setting=setting,
                        split="test",
                        arxiv_id=p.arxiv_id,
                        published=p.published,
                        prompt_sha256=f"{i:064x}",
                        output_raw=out,
                        output="" if err else out,
                        input_tokens=body_tokens,
                        output_tokens=len(out.split()),
                        tokens_cut=max(0, body_tokens - 4000),
                        error=err,
                    )
                    lines.append(rec.model_dump_json())
                    if err:
                        scores.append(
                            ScoreRecord(
                                sample_id=sid,
                                task=task,
                                setting=setting,
                                split="test",
                                published=p.published,
                                metric="rouge-l",
                                config_hash="cfg-rl",
                                error="no output",
                            ).model_dump_json()
                        )
                        continue
                    s = scorer.score(ref_of(p), out)["rougeL"]
                    saved.values.setdefault((model, task, setting), []).append((sid, p.published, s.fmeasure))
                    scores.append(
                        ScoreRecord(
                            sample_id=sid,
                            task=task,
                            setting=setting,
                            split="test",
                            published=p.published,
                            metric="rouge-l",
                            config_hash="cfg-rl",
                            values={"p": s.precision, "r": s.recall, "f": s.fmeasure},
                        ).model_dump_json()
                    )
                (d / f"{task}-{setting.replace(':', '')}.jsonl").write_text("\n".join(lines) + "\n")
        (d / "scores.jsonl").write_text("\n".join(scores) + "\n")
    return saved


@pytest.fixture(scope="session")
def saved_runs(tmp_path_factory, corpus) -> SavedRuns:
    return build_saved_runs(tmp_path_factory.mktemp("home"), corpus)
