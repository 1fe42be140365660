"""What a release of a round holds (`academiceval release ROUND OUT`): which papers it withholds, its dataset card
and licence notes. The files are written by `store.release` (the one writer of the release layout and the key);
the leak check that must pass before they are published is `rounds.release_check`.

By default the newest window (the test split: every test paper is newer than the train and validation papers) is
withheld, as LiveBench withholds its newest questions — but by *paper*, not by column: one paper's tasks carry each
other's labels (its abstract is in its own Title and Introduction inputs, its introduction in the Title and Abstract
inputs), so a withheld paper's samples are in no config, and a published sample that carries a withheld paper (as a
demonstration, a cited or candidate paper, or text the leak check finds) stays out too. The release lists each
withheld sample (`withheld/`: release id, arXiv id, date, prompt sha256) and says how to rebuild it; the creator's
workspace keeps the private key that scores submissions on them. `with_labels=True` publishes everything (e.g. when
the next round is out).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from academiceval.rounds.export import card_header
from academiceval.rounds.release_check import MAX_FINDINGS, LeakError, LeakReport, checked
from academiceval.store.artifacts import LoadedRound
from academiceval.store.models import RoundManifest, Sample
from academiceval.store.release import (
    CHECKSUMS,
    LICENSES,
    WITHHELD_COLUMNS,
    WITHHELD_CONFIG,
    ReleasePlan,
    ReleaseResult,
    write_release,
)
from academiceval.store.tasks import find_spec

MAX_PASSES = 5  # write + check passes while the check names published samples that carry withheld text

# What we can say about the rights in each source's text (a release copies paper text: inputs and labels).
SOURCE_NOTES = {
    "arxiv": (
        "arXiv papers (PDFs fetched from arXiv, or a bulk mirror of them). Each paper keeps the licence its authors "
        "chose at submission: often arXiv's non-exclusive distribution licence (arXiv may distribute it; it grants "
        "no redistribution rights to others), sometimes CC BY, CC BY-SA, CC BY-NC-SA or CC0. Check a paper's "
        "licence at https://arxiv.org/abs/ID before redistributing its text beyond research evaluation."
    ),
    "unarxive": (
        "unarXive (full-text arXiv papers parsed from LaTeX sources, Saier & Färber). The papers' own arXiv "
        "licences apply, as for arXiv above; unarXive's data licence governs its parsing."
    ),
    "publist": (
        "A publication list (BibTeX / CSL-JSON) with the authors' full texts: journal papers keep their "
        "publishers' licences; check each one before redistributing."
    ),
}
DEFAULT_NOTE = "Papers from a source this release does not describe: check each paper's licence."


def source_of(sample_paper_id: str, build_source: str | None) -> str:
    """`<source>:<id>` paper ids name their source; ingested PDFs (sha256 ids) come from the build's source."""
    if ":" in sample_paper_id:
        return sample_paper_id.split(":", 1)[0].lower()
    src = (build_source or "arxiv").lower()
    return "unarxive" if "unarxive" in src else ("publist" if "publ" in src else "arxiv")


def licence_notes(round: LoadedRound) -> str:
    build_source = str(round.manifest.build_options.get("source") or round.manifest.config.get("source") or "")
    papers: dict[str, set[str]] = {}
    for s in round.samples():
        papers.setdefault(source_of(s.paper_id, build_source), set()).add(s.arxiv_id)
    counts = Counter({k: len(v) for k, v in papers.items()})
    lines = [
        f"# Licence notes: academiceval round `{round.name}`",
        "",
        "The samples quote the papers' own text (inputs and labels). academiceval's code is Apache-2.0; it grants "
        "nothing over the papers. Per source:",
        "",
    ]
    for src, n in counts.most_common():
        lines += [f"## {src} ({n} papers)", "", SOURCE_NOTES.get(src, DEFAULT_NOTE), ""]
        ids = sorted(papers[src])
        lines += ["Papers: " + ", ".join(ids[:200]) + (f", … ({len(ids) - 200} more)" if len(ids) > 200 else ""), ""]
    return "\n".join(lines)


# ---- what is withheld ----------------------------------------------------------------------------------------
def paper_key(pid: str) -> str:
    """A paper's identity across versions (`2401.01234v2` and `2401.01234` are one paper)."""
    pid = pid.strip()
    head, _, tail = pid.rpartition("v")
    return head if head and tail.isdigit() and any(c.isdigit() for c in head) else pid


def _carried_papers(s: Sample) -> set[str]:
    """Every paper a sample carries besides its target: demonstrations, cited papers, and the papers named in a
    structured field (a multiple-choice item's candidates)."""
    out = {paper_key(d.arxiv_id) for d in s.demos} | {paper_key(d.paper_id) for d in s.demos if d.paper_id}
    out |= {paper_key(c.arxiv_id) for c in s.citations if c.arxiv_id}
    for v in s.fields.values():
        if v.startswith("{"):
            try:
                out |= _json_papers(json.loads(v))
            except ValueError:
                continue
    return out - {""}


def _json_papers(value: Any) -> set[str]:
    if isinstance(value, dict):
        out: set[str] = set()
        for k, v in value.items():
            if k in ("arxiv_id", "paper_id") and isinstance(v, str) and v:
                out.add(paper_key(v))
            else:
                out |= _json_papers(v)
        return out
    if isinstance(value, list):
        return set().union(*(_json_papers(v) for v in value)) if value else set()
    return set()


def plan_release(round: LoadedRound, *, with_labels: bool = False) -> ReleasePlan:
    """Withhold the test split's papers (unless `with_labels` or there is no test split); leave out every
    published sample that carries one of them."""
    test = sum(info.counts.get("test", 0) for info in round.manifest.configs.values())
    splits = [] if with_labels or not test else ["test"]
    plan = ReleasePlan(withheld_splits=splits, info=_release_info(round))
    if not splits:
        return plan
    samples = list(round.samples())
    for s in samples:
        if s.split in splits:
            plan.withheld_papers |= {paper_key(s.arxiv_id), paper_key(s.paper_id)} - {""}
    for s in samples:
        if s.split in splits:
            continue
        if {paper_key(s.arxiv_id), paper_key(s.paper_id)} & plan.withheld_papers:
            plan.dropped[s.sample_id] = "its paper is withheld"
        elif _carried_papers(s) & plan.withheld_papers:
            plan.dropped[s.sample_id] = "carries a withheld paper (demonstration, cited or candidate paper)"
    return plan


def _release_info(round: LoadedRound) -> dict[str, Any]:
    m = round.manifest
    family_config = m.build_options.get("config") if isinstance(m.build_options, dict) else None
    return {
        "test_window": m.windows.model_dump(mode="json"),
        "rebuild": {
            "package_version": m.package_version,
            "round_seed": m.seed,
            "build_config": m.config or family_config or {},
            "how": (
                "Build the round again from the same papers with the configuration recorded here (`build_config`: "
                "`academiceval build` options, or the family's build options) and this package version; a rebuilt "
                "sample is the withheld one when its prompt_sha256 equals the one listed in withheld/ (a "
                "multiple-choice sample's release id is `store.release.release_sample_id` of the rebuilt sample)."
            ),
        },
    }


# ---- the card --------------------------------------------------------------------------------------------------
def release_card(round: LoadedRound, manifest: RoundManifest, res: ReleaseResult) -> str:
    """README.md of the release: the YAML header `datasets` reads (published configs, and the withheld listing as
    config `withheld`), what is published, what is withheld and how the leak check was made."""
    header = card_header(manifest, f"academiceval round {manifest.round}", _categories(manifest))
    header.insert(1, "license: other")
    rel = manifest.release or {}
    listing = rel.get("withheld_listing", [])
    if listing:
        extra = [f"- config_name: {WITHHELD_CONFIG}", "  data_files:"]
        for path in listing:
            extra += [f"  - split: {Path(path).stem}", f"    path: {path}"]
        header[-1:-1] = extra
    w = manifest.windows
    lines = [
        *header,
        "",
        f"# academiceval round `{manifest.round}` (release)",
        "",
        "A dated round of academiceval, a long-context benchmark built from scientific papers: every label is the "
        "papers' own text or a fact about it; test papers are newer than the training and validation windows.",
        "",
        f"- train: papers up to {w.train_until}; val: {w.val_from} … {w.val_until}; test: "
        f"{_dates(w.test_from, w.test_until, res.withheld_dates)}"
        if w.train_until or w.val_from or w.test_from
        else "- the round records no date windows (its split comes from its source)",
        f"- round seed {manifest.seed}; package version {manifest.package_version}",
        "",
        "| config | task | setting | published train | published val | published test |",
        "|---|---|---|---:|---:|---:|",
    ]
    for name, info in sorted(manifest.configs.items()):
        c = info.counts
        lines.append(
            f"| {name} | {info.task} | {info.setting} | {c.get('train', 0)} | {c.get('val', 0)} | {c.get('test', 0)} |"
        )
    lines += ["", "## This release", ""]
    if res.withheld_splits:
        lines += _withheld_text(manifest, res)
    else:
        lines += ["All labels are included: nothing is withheld."]
    lines += [
        "",
        'Load a config offline: `datasets.load_dataset("<this directory>", "<config>")`'
        + (f' (the withheld listing: `"{WITHHELD_CONFIG}"`)' if listing else "")
        + ", or with the package: `academiceval.store.artifacts.load_round(dir).samples(config)`; "
        "`academiceval run <this directory> --model ...` runs the published samples.",
        f"Check the files with `sha256sum -c {CHECKSUMS}`. Licence notes per source: `{LICENSES}`.",
        "",
    ]
    return "\n".join(lines)


def _dates(first: date | None, last: date | None, seen: tuple[date, date] | None) -> str:
    """A window as the manifest has it, else the first and last date of the withheld samples (as listed)."""
    if first is None and last is None and seen is not None:
        first, last = seen
    return f"{first or 'unbounded'} … {last or 'unbounded'}"


def _categories(manifest: RoundManifest) -> list[str]:
    kinds = {spec.prompt_kind for info in manifest.configs.values() if (spec := find_spec(info.task))}
    cats = (["summarization", "text-generation"] if "writing" in kinds else []) + (
        ["multiple-choice"] if "choice" in kinds else []
    )
    return cats or ["text-generation"]


def _withheld_text(manifest: RoundManifest, res: ReleaseResult) -> list[str]:
    rel = manifest.release or {}
    w = manifest.windows
    check = rel.get("leak_check") or {}
    dropped = rel.get("dropped_reasons") or {}
    lines = [
        f"**Withheld: the {', '.join(res.withheld_splits)} papers** ({res.withheld_papers} papers dated "
        f"{_dates(w.test_from, w.test_until, res.withheld_dates)}; {res.withheld_distinct} samples, {res.withheld} "
        "config rows). Withholding "
        "is per paper: no sample of a withheld paper is in any config — not its inputs, not its labels, not as a "
        "demonstration, cited paper or multiple-choice candidate of another sample — because a paper's tasks carry "
        "each other's answers (its abstract is its Title task's input).",
        "",
        f"For each withheld sample `withheld/` lists only {', '.join(f'`{c}`' for c in WITHHELD_COLUMNS)}: what a "
        "maintainer needs to verify a submission (the prompt it answered) and to rebuild the sample, nothing a "
        "model could learn the answer from. A multiple-choice sample is listed under an opaque id derived from "
        "its prompt hash (its own id names the gold option); no answer, no seed.",
    ]
    if res.dropped:
        why = "; ".join(f"{r} ×{n}" for r, n in dropped.items())
        lines += ["", f"Left out of the published splits: {res.dropped} samples that carry a withheld paper ({why})."]
    if check:
        lines += [
            "",
            f"**Leak check** (run by `academiceval release` over every file it wrote, before publishing; "
            f"`manifest.json` → `release.leak_check`): {check.get('files_checked')} files, "
            f"{check.get('texts_measured')} distinct texts, {check.get('parquet_cells')} parquet cells read; "
            f"**{check.get('recoverable')} of {check.get('withheld_samples')} withheld samples recoverable**. "
            "A withheld sample counts as recoverable when its label is near-copied in any released text (the "
            "build's measure, `rounds.leakage`: more than 20% of the label's 12-grams, or a common run of 40 words, "
            "in one text or spread over several; a label under 12 words when it appears whole), when a "
            "multiple-choice item's question context (60 words either side of the mask) is near-copied, when "
            "its answer-naming id or its seed occurs anywhere, when a withheld paper is a released row's target, "
            "demonstration or cited paper, or when the listing holds any other column.",
        ]
    rb = rel.get("rebuild") or {}
    lines += [
        "",
        f"**Rebuild.** {rb.get('how', '')} Package version {rb.get('package_version')}, round seed "
        f"{rb.get('round_seed')}; `manifest.json` → `release.rebuild.build_config`.",
        "",
        "**Scoring.** `academiceval run` on a rebuilt round records each answer with its prompt hash. Send the run "
        "directory to the round's maintainer: `academiceval score RUN` in the workspace that made this release "
        "scores the withheld samples with its private key (and says so in every score record); anywhere else they "
        "score as `label withheld`.",
        "",
        "The papers are public on arXiv: withholding keeps this round's answer key out of crawled copies of the "
        "dataset; it does not hide the papers, and a rebuild from them recovers the key.",
    ]
    return lines


# ---- the command ------------------------------------------------------------------------------------------------
def release_round(
    round: LoadedRound,
    out: str | Path,
    *,
    with_labels: bool = False,
    force: bool = False,
    home: str | Path | None = None,
) -> ReleaseResult:
    """Write `round` as a publishable dataset folder at `out` (see `store.release`; `home`: the workspace, which
    `out` may not be, contain or lie inside except as `rounds/NAME`, and which keeps the private key).

    The leak check runs inside: when it names published samples that carry a withheld label's text, those
    samples are left out (counted in the card) and the release is written again; anything else it finds — or a
    carrier still there after MAX_PASSES — refuses the release with the file and sample (LeakError)."""
    plan = plan_release(round, with_labels=with_labels)
    licences = licence_notes(round)
    published_ids = {s.sample_id for s in round.samples() if s.split not in plan.withheld_splits}
    for _ in range(MAX_PASSES):
        try:
            return write_release(
                round,
                Path(out),
                plan=plan,
                card=lambda m, r: release_card(round, m, r),
                licences=licences,
                check=checked if plan.withheld_splits else None,
                force=force,
                home=Path(home) if home is not None else None,
            )
        except LeakError as e:
            carriers = _carriers(e.report, published_ids) if e.report is not None else {}
            if not carriers:
                raise
            plan.dropped.update(carriers)
    raise LeakError(f"published samples still carry withheld text after {MAX_PASSES} passes")


def _carriers(report: LeakReport, published: set[str]) -> dict[str, str]:
    """Published samples the check found withheld text in (their row and field named in the finding)."""
    out: dict[str, str] = {}
    for f in report.findings[:MAX_FINDINGS]:
        rid = f.where.split(" · ", 1)[0]
        if f.file.startswith("data/") and rid in published and f.kind in ("label text", "question context"):
            out[rid] = f"carries the text of a withheld label ({f.kind})"
    if any(not (f.file.startswith("data/") and f.where.split(" · ", 1)[0] in out) for f in report.findings):
        return {}  # something else leaks too: refuse with it rather than drop and hide it
    return out
