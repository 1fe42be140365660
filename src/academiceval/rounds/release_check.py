"""The leak check a release runs over every file it writes, before the files are published (`check_release`).

A withheld sample is *recoverable* from a release when any of these holds (each is a `Finding` naming the released
file, the released row and field, and the withheld sample):

* **label text** — its label (a writing task's title, abstract, introduction, related work) is near-copied in one
  released text, by the build's own measure (`rounds.leakage`: 12-gram coverage over 0.2 or a common run of 40
  words; a label under 12 words only when it is there whole), or its n-grams spread over several texts reach
  those limits together (labels under MIN_TEXT_WORDS words — an option letter, a number — say nothing by
  appearing in a text: they are counted, and covered by the row and id checks);
* **question context** — for a multiple-choice item, the text around its anchor (the masked citation's sentence,
  60 words either side) is near-copied in a released text: whoever has the unmasked passage reads the answer;
* **answer id** — a multiple-choice sample id (it names the gold option: `citation_cloze/easy/PAPER/REF/…`) occurs
  anywhere;
* **seed** — its seed (which regenerates a multiple-choice gold slot) occurs anywhere, as a number column or as
  digits in a text;
* **paper** — a withheld paper is a released row's target, demonstration or cited paper (`arxiv_id`/`paper_id`
  of a data row, its demos or citations): withholding is per paper;
* **listing field** — the withheld listing (`withheld/*.parquet`) holds a column other than
  `store.release.WITHHELD_COLUMNS` (an answer, a seed, an input).

Every file is read: parquet cell by cell (every string, every nested field, every integer), every other file as
text. Texts are deduplicated before measuring (a body repeated in 16 configs is measured once).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from academiceval.errors import AcademicEvalError
from academiceval.rounds.choice import choice_item
from academiceval.rounds.leakage import (
    DEFAULT_LIMITS,
    OVERLAP_N,
    OverlapLimits,
    TextGrams,
    found,
    label_grams,
    match_words,
    overlap_of_hits,
)
from academiceval.store.models import Sample
from academiceval.store.release import WITHHELD, WITHHELD_COLUMNS, is_choice, released_files

CONTEXT_WORDS = 60  # words either side of a multiple-choice anchor that make its question context
MIN_TEXT_WORDS = 3  # shorter labels (an option letter, "yes", a number) say nothing by appearing in a text
MIN_SEED_DIGITS = 6  # a seed shorter than this is not distinctive (0, the default, is everywhere)
MAX_FINDINGS = 50  # findings kept in the report (all are counted)
_TOKEN = re.compile(r"[^\s\"'`,;\[\]{}()<>|]+")
_DIGITS = re.compile(r"\d+")
_ID_KEYS = ("arxiv_id", "paper_id")
# the finding a sample is named by, most telling first
KIND_ORDER = ("label text", "question context", "answer id", "listing field", "seed", "paper")


class LeakError(AcademicEvalError):
    """A release would publish what a withheld sample's answer can be recovered from: nothing is published."""

    code = "release_leak"

    def __init__(self, message: str, *, hint: str | None = None, report: LeakReport | None = None) -> None:
        super().__init__(message, hint=hint)
        self.report = report


class Finding(BaseModel):
    kind: str  # "label text", "question context", "answer id", "seed", "paper", "listing field"
    sample: str  # the withheld sample (its release id)
    file: str  # the released file, relative to the release
    where: str = ""  # the released row (sample id) and field, when the file has rows
    detail: str = ""  # coverage and run, or what was found


class LeakReport(BaseModel):
    """What the check read and found (kept in `manifest.release["leak_check"]` through `summary`)."""

    withheld_papers: int = 0
    withheld_samples: int = 0  # distinct release ids
    files: list[str] = Field(default_factory=list)
    texts: int = 0  # distinct texts measured
    parquet_cells: int = 0
    recoverable: int = 0  # withheld samples with at least one finding
    by_kind: dict[str, int] = Field(default_factory=dict)  # finding kind -> withheld samples it makes recoverable
    findings: list[Finding] = Field(default_factory=list)  # the first MAX_FINDINGS
    short_labels: int = 0  # labels under MIN_TEXT_WORDS words: recoverable only through an id or row, checked above
    closest: Finding | None = None  # the withheld text with the largest overlap in one released text (under limits)
    limits: dict[str, Any] = Field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "method": "rounds.release_check (12-gram coverage and longest run, rounds.leakage; ids, seeds, papers)",
            "withheld_papers": self.withheld_papers,
            "withheld_samples": self.withheld_samples,
            "files_checked": len(self.files),
            "texts_measured": self.texts,
            "parquet_cells": self.parquet_cells,
            "recoverable": self.recoverable,
            "short_labels_not_text_checked": self.short_labels,
            "limits": self.limits,
            "closest": self.closest.model_dump() if self.closest else None,
        }

    def first(self) -> Finding | None:
        return self.findings[0] if self.findings else None


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")
    else:
        yield path, value


class _Released:
    """Every released value, deduplicated: texts with where they occur, tokens, numbers, structural paper ids."""

    def __init__(self) -> None:
        self.texts: dict[str, list[tuple[str, str]]] = {}  # text -> [(file, where)] (first few)
        self.tokens: dict[str, tuple[str, str]] = {}  # token -> first (file, where)
        self.numbers: dict[int, tuple[str, str]] = {}
        self.papers: dict[str, tuple[str, str]] = {}  # versionless paper id of a data row/demo/citation -> where
        self.files: list[str] = []
        self.cells = 0
        self.listing_columns: dict[str, list[str]] = {}

    def add_text(self, text: str, file: str, where: str) -> None:
        locs = self.texts.setdefault(text, [])
        if len(locs) < 3:
            locs.append((file, where))

    def read(self, root: Path, only: Sequence[str] | None) -> None:
        for p in released_files(root):
            rel = p.relative_to(root).as_posix()
            if only is not None and rel not in only:
                continue
            self.files.append(rel)
            if p.suffix == ".parquet":
                self._parquet(p, rel)
            else:
                self.add_text(p.read_text(encoding="utf-8", errors="replace"), rel, "")

    def _parquet(self, p: Path, rel: str) -> None:
        table = pq.read_table(p)
        if rel.startswith(f"{WITHHELD}/"):
            self.listing_columns[rel] = list(table.column_names)
        data_row = not rel.startswith(f"{WITHHELD}/")
        for i, row in enumerate(table.to_pylist()):
            rid = str(row.get("sample_id") or f"row {i}")
            for path, v in _walk(row, ""):
                self.cells += 1
                where = f"{rid} · {path}"
                if isinstance(v, bool) or v is None:
                    continue
                if isinstance(v, int):
                    self.numbers.setdefault(v, (rel, where))
                elif isinstance(v, str) and v:
                    self.add_text(v, rel, where)
                    if data_row and path.rsplit(".", 1)[-1] in _ID_KEYS:
                        self.papers.setdefault(_paper(v), (rel, where))

    def index_tokens(self) -> None:
        for text, locs in self.texts.items():
            for tok in set(_TOKEN.findall(text)):
                self.tokens.setdefault(tok, locs[0])
            for d in set(_DIGITS.findall(text)):
                if len(d) >= MIN_SEED_DIGITS:
                    self.numbers.setdefault(int(d), locs[0])


def _paper(pid: str) -> str:
    return re.sub(r"v\d+$", "", pid.strip())


def question_context(sample: Sample) -> str:
    """A multiple-choice item's text around its anchor (the mask), the anchor left out; "" without one."""
    try:
        item = choice_item(sample)
    except (AcademicEvalError, ValueError, KeyError):
        return ""
    if not item.anchor or item.anchor not in item.context:
        return ""
    before, _, after = item.context.partition(item.anchor)
    return " ".join(before.split()[-CONTEXT_WORDS:] + after.split()[:CONTEXT_WORDS])


def check_release(
    root: str | Path,
    withheld: Sequence[tuple[str, Sample]],
    only: Sequence[str] | None = None,
    *,
    limits: OverlapLimits = DEFAULT_LIMITS,
) -> LeakReport:
    """Measure what of the withheld samples (release id, full sample) is recoverable from the files under `root`
    (every file, or the relative paths `only`). Returns the report; `refuse` raises on it."""
    root = Path(root)
    rel = _Released()
    rel.read(root, only)
    rel.index_tokens()
    report = LeakReport(
        withheld_samples=len({rid for rid, _ in withheld}),
        withheld_papers=len({_paper(s.arxiv_id or s.paper_id) for _, s in withheld}),
        files=rel.files,
        texts=len(rel.texts),
        parquet_cells=rel.cells,
        limits=vars(limits).copy(),
    )
    hits: dict[str, list[Finding]] = defaultdict(list)

    def add(f: Finding) -> None:
        hits[f.sample].append(f)

    # ---- listing columns ------------------------------------------------------------------------------------
    for file, cols in rel.listing_columns.items():
        extra = sorted(set(cols) - set(WITHHELD_COLUMNS))
        if extra:
            for rid, _ in withheld:
                add(Finding(kind="listing field", sample=rid, file=file, detail=f"columns {', '.join(extra)}"))

    # ---- ids, seeds, papers ---------------------------------------------------------------------------------
    for rid, s in withheld:
        if is_choice(s.task) and s.sample_id in rel.tokens:
            file, where = rel.tokens[s.sample_id]
            add(Finding(kind="answer id", sample=rid, file=file, where=where, detail=s.sample_id))
        if s.seed and len(str(abs(s.seed))) >= MIN_SEED_DIGITS and s.seed in rel.numbers:
            file, where = rel.numbers[s.seed]
            add(Finding(kind="seed", sample=rid, file=file, where=where, detail=str(s.seed)))
        for pid in {_paper(s.arxiv_id), _paper(s.paper_id)} - {""}:
            if pid in rel.papers:
                file, where = rel.papers[pid]
                add(Finding(kind="paper", sample=rid, file=file, where=where, detail=pid))

    # ---- label text and question contexts -------------------------------------------------------------------
    secrets: dict[tuple[str, str], list[str]] = defaultdict(list)  # (kind, text) -> release ids
    for rid, s in withheld:
        if is_choice(s.task):
            ctx = question_context(s)
            if ctx:
                secrets[("question context", ctx)].append(rid)
        elif len(match_words(s.label)) >= MIN_TEXT_WORDS:
            secrets[("label text", s.label)].append(rid)
        elif s.label.strip():
            report.short_labels += 1
    report.closest = _measure_texts(rel, secrets, limits, add)

    report.recoverable = len(hits)
    kinds: dict[str, set[str]] = defaultdict(set)
    for rid, fs in hits.items():
        for f in fs:
            kinds[f.kind].add(rid)
    report.by_kind = {k: len(v) for k, v in sorted(kinds.items())}
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    report.findings = [min(fs, key=lambda f: order.get(f.kind, 99)) for _, fs in sorted(hits.items())]
    report.findings = report.findings[:MAX_FINDINGS]
    return report


def _measure_texts(
    rel: _Released,
    secrets: dict[tuple[str, str], list[str]],
    limits: OverlapLimits,
    add: Any,
) -> Finding | None:
    """Every secret text against every released text, grouped by n-gram length so each released text is hashed
    once per n and looked up with one vectorised search per n. Returns the closest overlap seen (coverage, then
    run), leaking or not: how far the release is from the limits."""
    keys = list(secrets)
    grams = [label_grams(text) for _, text in keys]
    by_n: dict[int, list[int]] = defaultdict(list)
    for i, (words, _) in enumerate(grams):
        if words:
            by_n[min(OVERLAP_N, words)].append(i)
    groups = {}
    for n, idx in by_n.items():
        arrays = [grams[i][1] for i in idx]
        bounds = np.cumsum([0, *(len(a) for a in arrays)])
        groups[n] = (idx, np.concatenate(arrays) if arrays else np.zeros(0, np.uint64), bounds)
    union = [np.zeros(len(g[1]), dtype=bool) for g in grams]
    reported: set[int] = set()
    best: tuple[float, int] = (0.0, 0)
    closest: Finding | None = None
    for text, locs in rel.texts.items():
        if len(match_words(text)) < min(by_n, default=1):
            continue
        tg = TextGrams(text)
        for n, (idx, allg, bounds) in groups.items():
            if len(tg.words) < n:
                continue
            hit = found(allg, tg.grams(n))
            if not hit.any():
                continue
            for j, i in enumerate(idx):
                h = hit[bounds[j] : bounds[j + 1]]
                if not h.any():
                    continue
                union[i] |= h
                o = overlap_of_hits(h, grams[i][0])
                if (o.coverage, o.run) > best:
                    best = (o.coverage, o.run)
                    closest = Finding(
                        kind=keys[i][0],
                        sample=secrets[keys[i]][0],
                        file=locs[0][0],
                        where=locs[0][1],
                        detail=f"coverage {o.coverage:.2f}, run {o.run} of {o.label_words} words",
                    )
                if limits.leaks(o) and i not in reported:
                    reported.add(i)
                    kind, _ = keys[i]
                    file, where = locs[0]
                    for rid in secrets[keys[i]]:
                        add(
                            Finding(
                                kind=kind,
                                sample=rid,
                                file=file,
                                where=where,
                                detail=f"coverage {o.coverage:.2f}, run {o.run} of {o.label_words} words",
                            )
                        )
    for i, key in enumerate(keys):
        if i in reported or not grams[i][0]:
            continue
        o = overlap_of_hits(union[i], grams[i][0])
        if limits.leaks(o):
            for rid in secrets[key]:
                add(
                    Finding(
                        kind=key[0],
                        sample=rid,
                        file="(several files)",
                        detail=f"spread over released texts: coverage {o.coverage:.2f}, run {o.run}",
                    )
                )
    return closest


def refuse(report: LeakReport) -> None:
    """Raise LeakError naming the first recoverable sample, its file and row, when anything is recoverable."""
    f = report.first()
    if f is None:
        return
    where = f"{f.file}" + (f" ({f.where})" if f.where else "")
    raise LeakError(
        f"{report.recoverable} of {report.withheld_samples} withheld samples are recoverable from the release: "
        f"{f.kind} of {f.sample} in {where}: {f.detail}",
        hint="nothing was published; a release with every label is `release --with-labels`",
        report=report,
    )


def checked(root: Path, withheld: list[tuple[str, Sample]], only: Sequence[str] | None = None) -> LeakReport:
    """`check_release`, refusing on any finding: the check `store.release.write_release` runs."""
    report = check_release(root, withheld, only)
    refuse(report)
    return report
