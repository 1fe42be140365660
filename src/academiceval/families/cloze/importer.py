"""Importing SCALAR's published questions into the round format, so they run and score like built ones.

Accepted inputs (any mix, files or directories):
- the repository's one-file-per-question form `data/test_data/cloze_examples_<level>/<arxiv id>_<id>.json`
  with `paper_id`, `question` (the full prompt), `reference_id`, `label_id`, `citation{section_name,
  citation_id, citation_text, citation_type, start_pos, end_pos, nearest_citations}`, `candidates[{id, title,
  token_count}]`, `additional_fields{…}`, `id`; a candidate's `id` is its reference's bib id (`bib.bib9`),
  kept as `ClozeCandidate.ref_id`; its slot is its position in the list (SCALAR's "Candidate [k]");
- the Hugging Face list form (`scalar_<level>.json`: a JSON list of the same records).
The level comes from the folder or file name (`…easy…`, `…medium…`, `…hard…`) unless given. The published
prompt is kept verbatim (`ClozeItem.prompt`) and sent as is; the paper and candidate texts are also read back
from its `<Paper>` / `<Candidate>` blocks so baselines and content-only truncation work. A record that cannot
be used is counted with its reason, never fatal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.families.cloze.classify import SCALAR_TYPES
from academiceval.families.cloze.export import config_name, write_round
from academiceval.families.cloze.models import MASK, ClozeCandidate, ClozeItem, TypeDecision
from academiceval.families.cloze.stats import cloze_stats
from academiceval.rounds.publish import _created_at
from academiceval.sources.errors import InvalidArxivIdError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.store.artifacts import check_name
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import RoundManifest, SplitWindows
from academiceval.store.publisher import check_destination
from academiceval.store.user_rows import read_json_rows

LEVELS = ("easy", "medium", "hard")
_PAPER = re.compile(r"<Paper>\n(.*?)</Paper>\s*<References>", re.DOTALL)  # not the instructions' "<Paper> and"
_CAND = re.compile(r"<Candidate>\s*Candidate \[(\d+)\]:\n?(.*?)</Candidate>", re.DOTALL)


class ImportProblem(ValueError):
    pass


@dataclass
class ImportReport:
    items: dict[str, list[ClozeItem]] = field(default_factory=dict)  # level -> items
    problems: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)  # reason -> one location
    manifest: RoundManifest | None = None
    path: Path | None = None

    def bad(self, reason: str, where: str) -> None:
        self.problems[reason] += 1
        self.examples.setdefault(reason, where)


def level_of(path: Path) -> str | None:
    name = "/".join(path.parts[-2:]).lower()
    for lv in LEVELS:
        if lv in name:
            return lv
    return None


def record_to_item(
    rec: Any, *, level: str, round_name: str, where: str, dates: dict[str, date] | None = None
) -> ClozeItem:
    """One published SCALAR question → ClozeItem; raises ImportProblem with a short reason."""
    if not isinstance(rec, dict):
        raise ImportProblem("record is not a JSON object")
    for key in ("question", "label_id", "candidates"):
        if key not in rec:
            raise ImportProblem(f"missing key {key!r}")
    question = str(rec["question"])
    cands_raw = rec["candidates"]
    if not isinstance(cands_raw, list) or len(cands_raw) < 2:
        raise ImportProblem("fewer than 2 candidates")
    try:
        label = int(rec["label_id"])
    except (TypeError, ValueError) as e:
        raise ImportProblem("label_id is not an integer") from e
    if not 0 <= label < len(cands_raw):
        raise ImportProblem("label_id outside the candidate list")
    if "<answer>" not in question:
        raise ImportProblem("question has no <answer> instruction")
    aid: str | None = None
    try:
        aid = parse_arxiv_id(str(rec.get("paper_id") or ""))[0]
    except InvalidArxivIdError:
        m = re.match(r"(\d{4}\.\d{4,5})_", Path(where.split("[")[0]).name)
        aid = m.group(1) if m else None
    if aid is None and not (dates or {}):
        raise ImportProblem("no arXiv id (paper_id or file name) to date the question")
    cit = rec.get("citation") if isinstance(rec.get("citation"), dict) else {}
    texts = {int(i): t for i, t in _CAND.findall(question)}
    pm = _PAPER.search(question)
    cands = []
    for slot, c in enumerate(cands_raw):  # the slot is the list position, as SCALAR numbers "Candidate [k]"
        c = c if isinstance(c, dict) else {}
        cands.append(
            ClozeCandidate(
                slot=slot,
                ref_id=reference_id(c),
                title=str(c.get("title") or ""),
                text=texts.get(slot, ""),
                tokens=int(c["token_count"]) if isinstance(c.get("token_count"), int) else None,
                link_method="imported",
            )
        )
    gold_ref = str(rec.get("reference_id") or "")
    if gold_ref and cands[label].ref_id and cands[label].ref_id != gold_ref:
        raise ImportProblem(f"label_id {label} names {cands[label].ref_id}, not reference_id {gold_ref}")
    ctype = SCALAR_TYPES.get(str(cit.get("citation_type") or ""))
    qid = rec.get("id", Path(where).stem)
    return ClozeItem(
        sample_id=f"citation_cloze/scalar-{level}/{aid or 'unknown'}/{qid}",
        round=round_name,
        preset=level,
        arxiv_id=aid,
        paper_id=str(rec.get("paper_id") or aid or ""),
        published=(dates or {}).get(aid or ""),
        section=str(cit.get("section_name") or ""),
        citation_text=str(cit.get("citation_text") or ""),
        citation_start=int(cit.get("start_pos", -1)),
        citation_end=int(cit.get("end_pos", -1)),
        citation_type=TypeDecision(source=ctype, decided_by="source", decided=ctype),
        mask=MASK,
        paper=pm.group(1) if pm else "",
        candidates=cands,
        label=str(label),
        reference_ids=[c.ref_id for c in cands],
        gold_ref_id=gold_ref,
        seed=0,
        tokenizer="tiktoken:o200k_base (as published by SCALAR)",
        options={"source": "SCALAR published questions", **(rec.get("additional_fields") or {})},
        prompt=question,
        prompt_sha256=sha256_hex(question),
    )


def reference_id(candidate: dict[str, Any]) -> str:
    """The reference a published candidate names: SCALAR's repository files give its bib id ("bib.bib9") as `id`;
    a bare integer `id` is only a position and names nothing."""
    for key in ("reference_id", "id"):
        value = candidate.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _records(path: Path, report: ImportReport) -> Iterator[tuple[Any, str]]:
    """The file's records (one question, or a list of them); rows that cannot be read are reported."""
    rows, bad = read_json_rows(path, objects=False)
    for b in bad:
        report.bad(f"unreadable JSON: {b.reason}"[:100], b.where)
    for rec, where in rows:
        yield rec, where.removesuffix(":1")


def _files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.json")) if p.is_dir() else [p])
    return out


def read_scalar_questions(
    paths: Iterable[str | Path],
    *,
    level: str | None = None,
    round_name: str = "scalar-imported",
    dates: dict[str, date] | None = None,
) -> ImportReport:
    report = ImportReport()
    seen: set[str] = set()
    for f in _files(paths):
        lv = level or level_of(f)
        if lv is None:
            report.bad("level not given and not in the file or folder name", str(f))
            continue
        for rec, where in _records(f, report):
            try:
                item = record_to_item(rec, level=lv, round_name=round_name, where=where, dates=dates)
            except (ImportProblem, ValueError, TypeError, AttributeError) as e:
                report.bad(str(e).splitlines()[0][:100], where)
                continue
            if item.sample_id in seen:  # two records of one question: reported, the first is kept
                report.bad("duplicate question (same level, paper and id): the first is kept", where)
                continue
            seen.add(item.sample_id)
            report.items.setdefault(lv, []).append(item)
    return report


def import_scalar(
    paths: Iterable[str | Path],
    out_root: str | Path,
    name: str,
    *,
    level: str | None = None,
    dates: dict[str, date] | None = None,
    force: bool = False,
    home: str | Path | None = None,
) -> ImportReport:
    """Read published questions and write them as round `out_root/name` (configs `citation_cloze-<level>`) through
    the one publisher (an existing round refused unless `force`; never over the inputs or the workspace `home`).
    When no question is usable nothing is written (`report.path` stays None; `report.problems` says why)."""
    check_name(name, "round")
    paths = list(paths)
    root = Path(out_root)
    check_destination(root / name, force=force, home=home, protect=paths)  # refused before reading
    report = read_scalar_questions(paths, level=level, round_name=name, dates=dates)
    if not report.items:
        return report
    items = {config_name(lv): sorted(v, key=lambda x: x.sample_id) for lv, v in report.items.items()}
    stats = cloze_stats([it for v in items.values() for it in v])
    stats["import_problems"] = dict(report.problems)
    manifest = RoundManifest(
        round=name,
        created_at=_created_at(),
        package_version=__version__,
        seed=0,
        windows=SplitWindows(),
        skipped={"import": dict(report.problems)} if report.problems else {},
        build_options={"family": "citation_cloze", "imported": "SCALAR published questions", "cutoff": None},
    )
    report.manifest = write_round(root / name, manifest, items, stats, None, force=force, home=home, protect=paths)
    report.path = root / name
    return report
