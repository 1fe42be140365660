"""A small real round + run directory built from the unarXive sample (abstract task; outputs = a lead baseline)."""

from __future__ import annotations

import json
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from academiceval.store.artifacts import MANIFEST, records_file, write_manifest, write_round_config, write_run_spec
from academiceval.store.models import ConfigInfo, RoundManifest, RunRecord, RunSpec, Sample, SplitWindows
from academiceval.store.tasks import task_spec

ROUND = "2022-12"
N_PAPERS = 12


def _papers(corpus: Path) -> list[dict]:
    out = []
    with (corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            paras = [p["text"] for p in d["body_text"] if len(p["text"].split()) > 30]
            if d.get("abstract", {}).get("text") and paras:
                v1 = d["metadata"]["versions"][0]["created"]
                d["_published"] = parsedate_to_datetime(v1).date()
                d["_paras"] = paras
                out.append(d)
            if len(out) == N_PAPERS:
                break
    return out


def build_round_and_run(corpus: Path, home: Path, model: str = "baseline__lead", *, lead_paragraph: int = 0) -> Path:
    papers = _papers(corpus)
    round_dir = home / "rounds" / ROUND
    if not (round_dir / MANIFEST).exists():
        samples = [
            Sample(
                sample_id=f"abstract/zero-shot/{d['paper_id']}",
                round=ROUND,
                task="abstract",
                setting="zero-shot",
                split="test",
                arxiv_id=d["paper_id"],
                paper_id=d["paper_id"],
                published=d["_published"],
                fields={"title": d["metadata"]["title"], "body": "\n".join(d["_paras"][:5])},
                label=d["abstract"]["text"].strip(),
            )
            for d in papers
        ]
        info = ConfigInfo(task="abstract", setting="zero-shot", setting_name="abs-zero")
        round_dir.mkdir(parents=True)
        write_round_config(round_dir, info, iter(samples), task_spec(info.task).input_fields)
        manifest = RoundManifest(
            round=ROUND,
            created_at="2026-01-01T00:00:00Z",
            package_version="test",
            seed=0,
            windows=SplitWindows(test_from=date(2022, 12, 1)),
            configs={"abs-zero": info},
        )
        write_manifest(round_dir, manifest)
    run_dir = home / "runs" / ROUND / model
    write_run_spec(
        run_dir,
        RunSpec(
            round=ROUND,
            round_manifest_sha256="x",
            model=model.replace("__", "/"),
            backend="baseline",
            package_version="test",
            created_at="2026-01-01T00:00:00Z",
        ),
    )
    path = records_file(run_dir, "abstract", "zero-shot")
    with path.open("w", encoding="utf-8") as fh:
        for k, d in enumerate(papers):
            err = "empty_answer: the model returned nothing" if k == 3 else None
            out = "" if err else d["_paras"][min(lead_paragraph, len(d["_paras"]) - 1)]
            rec = RunRecord(
                sample_id=f"abstract/zero-shot/{d['paper_id']}",
                task="abstract",
                setting="zero-shot",
                split="test",
                arxiv_id=d["paper_id"],
                published=d["_published"],
                prompt_sha256="p",
                output=out,
                output_raw=out,
                error=err,
            )
            fh.write(rec.model_dump_json() + "\n")
    return run_dir


@pytest.fixture()
def run_home(corpus, tmp_path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    return home, build_round_and_run(corpus, home)
