"""A small real round written straight from the unarXive sample (`../shared/corpus/samples/unarXive_sample`).

For tests, benchmarks and smoke runs of the runner that should not depend on the whole collect → ingest →
build chain: real paper text, real v1 dates, a manifest with sha256 per file in the round format. Title and
abstract tasks, zero-shot plus one random-demo setting (demos strictly older than the target).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.store.artifacts import write_manifest, write_round_config
from academiceval.store.hashing import stable_int
from academiceval.store.models import ConfigInfo, Demo, RoundManifest, Sample, SplitWindows
from academiceval.store.tasks import task_spec

UNARXIVE = Path("samples") / "unarXive_sample" / "arXiv_src_2212_086.jsonl"


def _v1_date(meta: dict[str, Any]) -> date:
    try:
        return parsedate_to_datetime(meta["versions"][0]["created"]).date()
    except (KeyError, IndexError, TypeError, ValueError):
        return date.fromisoformat(meta.get("update_date") or "2022-12-01")


def load_unarxive_papers(corpus: Path, *, max_papers: int | None = None, body_chars: int = 20_000) -> list[dict]:
    """Papers as dicts: arxiv_id, title, abstract, body (section text joined), published, category."""
    out = []
    with (corpus / UNARXIVE).open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            meta = d["metadata"]
            title = " ".join(meta["title"].split())
            abstract = " ".join((meta.get("abstract") or "").split())
            paras = [p["text"] for p in d["body_text"] if p.get("section") != "Abstract" and p.get("text")]
            body = "\n\n".join(paras)[:body_chars]
            if not (title and abstract and body):
                continue
            out.append(
                {
                    "arxiv_id": meta["id"],
                    "title": title,
                    "abstract": abstract,
                    "body": body,
                    "published": _v1_date(meta),
                    "category": (meta.get("categories") or "").split()[0] or None,
                }
            )
            if max_papers and len(out) >= max_papers:
                break
    return sorted(out, key=lambda p: (p["published"], p["arxiv_id"]))


def _fields(task: str, p: dict) -> tuple[dict[str, str], str]:
    if task == "title":
        return {"abstract": p["abstract"], "body": p["body"]}, p["title"]
    return {"title": p["title"], "body": p["body"]}, p["abstract"]


def write_sample_round(
    corpus: Path,
    out_dir: Path,
    *,
    name: str = "2022-12-sample",
    max_papers: int | None = 30,
    body_chars: int = 20_000,
    settings: tuple[str, ...] = ("zero-shot", "random:1"),
) -> Path:
    """Write `out_dir` in the round format (rounds.export: parquet + JSONL per config, manifest with sha256s)."""
    papers = load_unarxive_papers(corpus, max_papers=max_papers, body_chars=body_chars)
    by_config: dict[str, list[Sample]] = {}
    for task in ("title", "abstract"):
        for setting in settings:
            rows = []
            for i, p in enumerate(papers):
                demos = []
                if setting.startswith("random:") and i > 0:
                    d = papers[(i * 7919 + 13) % i]  # an older paper, chosen deterministically
                    if d["published"] <= p["published"]:
                        f, lab = _fields(task, d)
                        demos.append(
                            Demo(arxiv_id=d["arxiv_id"], published=d["published"], fields=f, label=lab, origin="random")
                        )
                fields, label = _fields(task, p)
                rows.append(
                    Sample(
                        sample_id=f"{task}/{setting}/{p['arxiv_id']}",
                        round=name,
                        task=task,
                        setting=setting,
                        split="test",
                        arxiv_id=p["arxiv_id"],
                        paper_id=f"unarxive:{p['arxiv_id']}",
                        published=p["published"],
                        primary_category=p["category"],
                        fields=fields,
                        demos=demos,
                        label=label,
                        seed=stable_int(p["arxiv_id"]),
                    )
                )
            by_config[f"{task}-{setting.replace(':', '')}"] = rows
    return write_round(
        out_dir,
        name,
        by_config,
        build_options={"source": "unarXive sample", "max_papers": max_papers, "body_chars": body_chars},
    )


def write_round(
    out_dir: Path, name: str, by_config: dict[str, list[Sample]], *, build_options: dict[str, Any] | None = None
) -> Path:
    """Export samples (config name → samples of one task and setting) with the artifacts writer + manifest."""

    out_dir.mkdir(parents=True, exist_ok=True)
    configs: dict[str, ConfigInfo] = {}
    for config, rows in by_config.items():
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.split] = counts.get(r.split, 0) + 1
        order = {"train": 0, "val": 1, "test": 2}
        rows = sorted(rows, key=lambda r: order[r.split])
        info = ConfigInfo(task=rows[0].task, setting=rows[0].setting, setting_name=config, counts=counts)
        write_round_config(out_dir, info, iter(rows), task_spec(info.task).input_fields)
        configs[config] = info
    dates = [r.published for rows in by_config.values() for r in rows]
    manifest = RoundManifest(
        round=name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(test_from=min(dates), test_until=max(dates)),
        counts={c: i.counts for c, i in configs.items()},
        configs=configs,
        build_options=build_options or {},
    )
    write_manifest(out_dir, manifest)
    return out_dir
