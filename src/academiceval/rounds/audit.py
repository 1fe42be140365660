"""`audit_round`: the validity statistics a maintainer checks before releasing a round.

The build's invariants are exact (test after train/val, no whole label verbatim in an input); what they cannot see
is measured here, for any round on disk, old or new:

* label/input overlap: per sample, the largest share of the label's 12-grams found in one input text (body,
  abstract, title, each demonstration's fields and label, the citation corpus) and the longest common run of words,
  after the normalisation of `rounds.leakage.match_words`; the distribution per task and the worst cases;
* label length per task (words) and how many labels fall outside the quality gate's plausible range;
* debris in labels, every kind of `papers.clean.DEBRIS_KINDS` per task and split (PDF furniture and captions,
  font garbage, unarXive placeholders, ar5iv trails/markup/duplicated formulas, LaTeX markup), and the labels the
  build excluded because debris was left after cleaning;
* title samples kept: papers of each split with a title sample (a trail repeating the title used to cost one);
* holes left by title removal in the title task's inputs;
* Related Work: the citation-resolution rate (round-wide and per sample when the build recorded it), and per paper
  why it has no Related Work sample, or its split, its share of cited works shown with an abstract and its label
  paragraphs citing only title-only works (`rounds.related_work.audit`);
* quality-gate exclusions and other skip reasons from the manifest;
* BERTScore truncation rate per task, from the scores of the runs on this round;
* splits: fractions asked vs. papers delivered per split, single-day windows;
* what each task family checks itself (its port "audit"): for the citation cloze, the blind guessers' accuracy
  per level, item defects, citation-type agreement and paper dates (`families.cloze.audit`).

Everything is returned as one JSON-able dict (`audit_round`) and rendered as tables by `cli/audit.py`.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from academiceval.papers.clean import DEBRIS_KINDS, debris_counts, source_family, vocabulary
from academiceval.rounds import related_work
from academiceval.rounds.leakage import DEFAULT_LIMITS, OVERLAP_N, Overlap, OverlapLimits, overlap
from academiceval.rounds.quality import default_gate
from academiceval.rounds.tasks import title_occurrences
from academiceval.store.artifacts import LoadedRound, find_run_dirs, read_scores
from academiceval.store.models import Sample
from academiceval.store.tasks import family_for, find_spec, task_names

WORST = 10
SPLITS = ("train", "val", "test")


def _label_debris(s: Sample) -> dict[str, int]:
    """Debris in one label, as the build measures it: joined compounds count only for sections read from a PDF
    (elsewhere "pretraining" beside "pre-training" is the authors' spelling, not a lost hyphen)."""
    family = source_family(s.paper_id.split(":", 1)[0] if ":" in s.paper_id else "pdf")
    from_page = family == "pdf" and _label_source(s.task) == "section"  # titles/abstracts: metadata
    vocab = vocabulary([s.label, s.fields.get("body", "")]) if from_page else None
    return debris_counts(s.label, vocab)


def _title_samples(samples: list[Sample]) -> dict[str, Any]:
    """Papers of each split with a title sample, of all papers of that split in the round."""
    papers: dict[str, set[str]] = defaultdict(set)
    titled: dict[str, set[str]] = defaultdict(set)
    for s in samples:
        papers[s.split].add(s.arxiv_id)
        if _label_source(s.task) == "title":
            titled[s.split].add(s.arxiv_id)
    out = {sp: {"papers": len(papers[sp]), "with_title_sample": len(titled[sp])} for sp in SPLITS if papers[sp]}
    out["all"] = {
        "papers": sum(len(v) for v in papers.values()),
        "with_title_sample": sum(len(v) for v in titled.values()),
    }
    return out


def _label_source(task: str) -> str | None:
    spec = find_spec(task)
    return spec.label_source if spec is not None else None


def _title_holes(title_samples: list[Sample], samples: list[Sample]) -> dict[str, Any]:
    """Title samples whose paper uses the title inside sentences (of its abstract or body as other tasks show
    them): before the fix the build cut those uses out, leaving holes that point at the answer; now such a
    sample is not built. Counted from the round alone (the other tasks' inputs keep the title)."""
    others: dict[str, list[str]] = defaultdict(list)
    for s in samples:
        source = _label_source(s.task)
        if source == "title" or s.setting != "zero-shot":
            continue
        others[s.arxiv_id] += [s.fields.get("body", ""), s.fields.get("abstract", "")]
        if source == "metadata_abstract":
            others[s.arxiv_id].append(s.label)
    out: dict[str, Any] = {"title_inputs": len(title_samples), "with_holes": 0, "holes": 0, "examples": []}
    for s in title_samples:
        seen = 0
        for text in dict.fromkeys(others.get(s.arxiv_id, [])):
            seen += title_occurrences(text, s.label)[1] if text else 0
        if seen:
            out["with_holes"] += 1
            out["holes"] += seen
            if len(out["examples"]) < 5:
                out["examples"].append(f"{s.sample_id}: {s.label!r} used {seen}× inside sentences")
    return out


def _input_texts(s: Sample) -> Iterable[tuple[str, str]]:
    for k, v in s.fields.items():
        yield k, v
    for i, d in enumerate(s.demos):
        for k, v in d.fields.items():
            yield f"demo{i + 1}.{k}", v
        yield f"demo{i + 1}.label", d.label
    if s.citations:
        yield "citations", "\n".join(f"{c.title}\n{c.abstract}" for c in s.citations)


def sample_overlap(s: Sample) -> tuple[str, Overlap]:
    """The input text the label overlaps most (by coverage, then run) and that overlap."""
    best_name, best = "", Overlap(0.0, 0, 0)
    for name, text in _input_texts(s):
        o = overlap(s.label, text)
        if (o.coverage, o.run) > (best.coverage, best.run):
            best_name, best = name, o
    if not best_name:
        best = Overlap(0.0, 0, best.label_words or len(s.label.split()))
    return best_name, best


def _dist(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    v = sorted(values)
    q = statistics.quantiles(v, n=20, method="inclusive") if len(v) > 1 else [v[0]] * 19
    return {"min": v[0], "p50": statistics.median(v), "p90": q[17], "p95": q[18], "max": v[-1]}


def _runs_scores(runs_dir: Path | None) -> list[dict[str, Any]]:
    """BERTScore records of every run under `runs_dir` (read through the artifacts layer)."""
    out: list[dict[str, Any]] = []
    if runs_dir is None or not runs_dir.is_dir():
        return out
    for run_dir in find_run_dirs([runs_dir]):
        for r in read_scores(run_dir):
            if r.metric.startswith("bertscore") and not r.error:
                out.append({**r.model_dump(mode="json"), "_run": run_dir.name})
    return out


def demo_text_dates(samples: list[Sample], text_versions: dict[str, Any]) -> dict[str, Any]:
    """Demonstration slots whose text is dated after their target (issue 23: a demo must not show text written
    after the target), per split: slots, samples, the largest gap in days, and slots whose text is a later
    version of unknown date. The text's version and date come from the build's `validity.text_versions` (by the
    demo's parsed text where the build recorded it, else by arXiv id — rounds built before demos chose by text
    date); a text the build did not list is its paper's v1 text."""
    by_text: dict[str, dict[str, Any]] = {}
    for v in text_versions.values():
        for t in (v, *(v.get("earlier") or [])):
            if t.get("paper_id"):
                by_text[t["paper_id"]] = t
    out: dict[str, Any] = {}
    for s in samples:
        for d in s.demos:
            rec = by_text.get(d.paper_id) if by_text else text_versions.get(d.arxiv_id)
            if rec is None:
                continue
            row = out.setdefault(s.split, {"slots": 0, "samples": set(), "max_days": 0, "undated_slots": 0})
            if rec.get("date") is None:
                row["undated_slots"] += 1
                continue
            days = (date.fromisoformat(rec["date"]) - s.published).days
            if days > 0:
                row["slots"] += 1
                row["samples"].add(s.sample_id)
                row["max_days"] = max(row["max_days"], days)
    return {sp: {**v, "samples": len(v["samples"])} for sp, v in sorted(out.items())}


class AuditPort(Protocol):
    """What a task family gives for port "audit": its own checks of a round holding its tasks, as data plus
    printable `tables` ([{"title", "columns", "rows"}]); `academiceval audit` prints them after the core ones."""

    def __call__(self, rnd: LoadedRound) -> dict[str, Any]: ...


def family_audits(rnd: LoadedRound) -> dict[str, Any]:
    """Each family of the round's tasks that implements port "audit" → what it reports."""
    out: dict[str, Any] = {}
    for task in sorted({info.task for info in rnd.manifest.configs.values()}):
        spec = find_spec(task)
        if spec is None:
            continue
        family = family_for(task)
        port: AuditPort | None = family.port("audit")
        if port is not None and family.name not in out:
            out[family.name] = port(rnd)
    return out


def audit_round(
    rnd: LoadedRound,
    *,
    runs_dir: Path | None = None,
    limits: OverlapLimits = DEFAULT_LIMITS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """All validity statistics of one round (see the module docstring)."""
    m = rnd.manifest
    samples = list(rnd.samples())
    say = progress or (lambda done, total: None)

    # ---- overlap -----------------------------------------------------------------------------------------
    per_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for n, s in enumerate(samples):
        say(n, len(samples))
        name, o = sample_overlap(s)
        per_task[s.task].append(
            {
                "sample_id": s.sample_id,
                "split": s.split,
                "field": name,
                "coverage": round(o.coverage, 4),
                "run": o.run,
                "label_words": o.label_words,
                "leaks": limits.leaks(o),
            }
        )
    say(len(samples), len(samples))
    overlap_out: dict[str, Any] = {"n": OVERLAP_N, "limits": vars(limits).copy(), "tasks": {}, "worst": []}
    everything = []
    for task in task_names("writing"):
        rows = per_task.get(task, [])
        if not rows:
            continue
        everything += rows
        overlap_out["tasks"][task] = {
            "samples": len(rows),
            "coverage": _dist([r["coverage"] for r in rows]),
            "run": _dist([r["run"] for r in rows]),
            "coverage_over_0.2": sum(r["coverage"] > 0.2 for r in rows),
            "coverage_over_0.5": sum(r["coverage"] > 0.5 for r in rows),
            "run_40_plus": sum(r["run"] >= 40 for r in rows),
            "over_limits": sum(r["leaks"] for r in rows),
        }
    everything.sort(key=lambda r: (-r["coverage"], -r["run"], r["sample_id"]))
    overlap_out["worst"] = everything[:WORST]
    overlap_out["worst_runs"] = sorted(everything, key=lambda r: (-r["run"], r["sample_id"]))[:WORST]

    # ---- label lengths and debris (each target's label counted once per task) ----------------------------
    first: dict[tuple[str, str], Sample] = {}
    for s in samples:
        first.setdefault((s.task, s.arxiv_id), s)
    lengths: dict[str, Any] = {}
    debris: dict[str, Any] = {}
    holes: dict[str, Any] = {"title_inputs": 0, "with_holes": 0, "holes": 0, "examples": []}
    gate = default_gate()  # its plausible label lengths are reported next to the measured ones
    for task in task_names("writing"):
        labels = [s for (t, _), s in sorted(first.items()) if t == task]
        if not labels:
            continue
        words = [len(s.label.split()) for s in labels]
        entry: dict[str, Any] = {"labels": len(labels), **{k: float(v) for k, v in _dist(words).items()}}
        lo, hi = gate.label_words.get(task, (0, 10**9))
        entry["plausible"] = [lo, hi]
        entry["outside_plausible"] = sum(not lo <= w <= hi for w in words)
        lengths[task] = entry
        entry_d: dict[str, Any] = {"labels": len(labels)}
        for sp in SPLITS:
            in_split = [x for x in labels if x.split == sp]
            if not in_split:
                continue
            counts: Counter[str] = Counter()
            with_any: Counter[str] = Counter()
            examples: dict[str, str] = {}
            dirty = 0
            for x in in_split:
                d = _label_debris(x)
                dirty += any(d.values())
                for k, v in d.items():
                    counts[k] += v
                    if v:
                        with_any[k] += 1
                        examples.setdefault(k, x.sample_id)
            entry_d[sp] = {
                "labels": len(in_split),
                "labels_with_any": dirty,
                **{
                    k: {"labels_with": with_any[k], "occurrences": counts[k], "example": examples.get(k)}
                    for k in DEBRIS_KINDS
                },
            }
        debris[task] = entry_d
        if _label_source(task) == "title":
            holes.update(_title_holes(labels, samples))

    # ---- citations --------------------------------------------------------------------------------------
    bo = m.build_options or {}
    cfg = getattr(m, "config", None) or {}  # the BuildConfig, verbatim (rounds built before it: build_options)
    cit = dict(bo.get("citations") or {})
    cited = int(cit.get("cited", 0) or 0)
    resolved = sum(int(v) for k, v in cit.items() if str(k).startswith(("resolved: id-", "resolved: title-")))
    per_sample = (bo.get("validity") or {}).get("citation_resolution") if isinstance(bo.get("validity"), dict) else None
    rw = [s for s in first.values() if (spec := find_spec(s.task)) is not None and spec.cites]
    citations_out = {
        "cited": cited,
        "resolved": resolved,
        "rate": round(resolved / cited, 4) if cited else None,
        "breakdown": cit,
        "related_work_samples": len(rw),
        "per_sample": per_sample or {},
        # per paper: why it has no Related Work sample, or its split and abstract share (rounds.related_work)
        "per_paper": related_work.audit((bo.get("validity") or {}).get("related_work") or {}),
    }

    # ---- exclusions -------------------------------------------------------------------------------------
    skipped = {k: dict(v) for k, v in (m.skipped or {}).items()}
    quality = {
        k: {r: c for r, c in v.items() if r.startswith("quality:")}
        for k, v in skipped.items()
        if any(r.startswith("quality:") for r in v)
    }
    debris_skips = {
        k: {r: c for r, c in v.items() if r.startswith("debris:")}
        for k, v in skipped.items()
        if any(r.startswith("debris:") for r in v)
    }
    leak_skips = {
        k: {r: c for r, c in v.items() if "near-copied" in r or "label text" in r}
        for k, v in skipped.items()
        if any("near-copied" in r or "label text" in r for r in v)
    }

    # ---- BERTScore truncation ---------------------------------------------------------------------------
    bs = _runs_scores(runs_dir)
    trunc: dict[str, Any] = {}
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in bs:
        by_key[(str(r.get("metric")), str(r.get("task")))].append(r)
    for (metric, task), rows in sorted(by_key.items()):
        cut = [
            r
            for r in rows
            if (r.get("details") or {}).get("ref_tokens_cut") or (r.get("details") or {}).get("cand_tokens_cut")
        ]
        ref_cut = [r for r in rows if (r.get("details") or {}).get("ref_tokens_cut")]
        trunc.setdefault(metric, {})[task] = {
            "scores": len(rows),
            "truncated": len(cut),
            "reference_truncated": len(ref_cut),
            "rate": round(len(cut) / len(rows), 4) if rows else 0.0,
        }

    # ---- splits -----------------------------------------------------------------------------------------
    papers_by_split: dict[str, set[str]] = defaultdict(set)
    for s in samples:
        papers_by_split[s.split].add(s.arxiv_id)
    total = sum(len(v) for v in papers_by_split.values())
    asked = [float(x) for x in (cfg.get("fractions") or bo.get("fractions") or [])]
    w = m.windows
    delivered = {sp: len(papers_by_split.get(sp, ())) for sp in ("train", "val", "test")}
    split_out: dict[str, Any] = {
        "asked": dict(zip(("train", "val", "test"), asked, strict=False)) if asked else None,
        "papers": delivered,
        "delivered": {k: round(v / total, 4) if total else 0.0 for k, v in delivered.items()},
        "windows": w.model_dump(mode="json"),
        "single_day_windows": [
            name
            for name, a, b in (("val", w.val_from, w.val_until), ("test", w.test_from, w.test_until))
            if a is not None and a == b
        ],
    }
    dated = cfg.get("val_from") or cfg.get("test_from") or bo.get("val_from") or bo.get("test_from")
    if asked and total and not dated:
        split_out["deviation"] = {
            k: round(split_out["delivered"][k] - a, 4) for k, a in zip(("train", "val", "test"), asked, strict=False)
        }
    validity = bo.get("validity") if isinstance(bo.get("validity"), dict) else {}
    if validity.get("splits"):
        split_out["build"] = validity["splits"]
    in_round = {s.arxiv_id for s in samples}
    split_out["later_text_versions"] = {k: v for k, v in (validity.get("text_versions") or {}).items() if k in in_round}
    split_out["demo_text_dates"] = demo_text_dates(samples, validity.get("text_versions") or {})

    return {
        "families": family_audits(rnd),
        "round": m.round,
        "samples": len(samples),
        "papers": len({s.arxiv_id for s in samples}),
        "overlap": overlap_out,
        "label_words": lengths,
        "debris": debris,
        "title_removal": {**holes, "recorded": (validity or {}).get("title_removal", {})},
        "title_samples": _title_samples(samples),
        "debris_exclusions": debris_skips,
        "train_label_debris": (validity or {}).get("train_label_debris", {}),
        "citations": citations_out,
        "quality_exclusions": quality,
        "quality_summary": (validity or {}).get("quality", {}),
        "leakage_exclusions": leak_skips,
        "skipped": skipped,
        "bertscore_truncation": trunc,
        "splits": split_out,
    }
