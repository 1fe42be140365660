"""Importer inputs built from real files of the corpus, with one damaged row (or a damaged file) planted.

`IMPORTERS` names, per command that reads rows from a user's file, how to build its input in a fresh folder
for a given damage (`None`: the valid input alone) and the arguments that import it. Valid rows are real:
SCALAR's published cloze questions, L-Eval task documents and prediction files, L-Eval's human-evaluation table,
BibTeX entries of a research group's list, Kaggle arXiv metadata lines, ElaipBench-format rows over a real
paper's text. The lm-eval importer's input needs an exported round: `lmeval_output` builds it from a workspace.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rows import FILE_DAMAGE, ROW_DAMAGE, Raw, damaged_rows, encode, file_damage, json_list, jsonl

Argv = list[str]
Make = Callable[[Path, Path, str | None], Argv]  # (folder, corpus, damage) -> argv without --home

LEVAL_TASK = Path("leval") / "LEval-data" / "Closed-ended-tasks" / "tpo.jsonl"
PREDICTIONS = Path("leval") / "Predictions" / "exam_eval" / "turbo-16k-0613" / "tpo.pred.jsonl"
HUMAN_EVAL = Path("leval") / "Predictions" / "human_eval"
SCALAR_EASY = Path("samples") / "scalar_questions" / "easy"
KAGGLE = Path("metadata") / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"
BIB = Path("lab_publications") / "comp-physics" / "ref.bib"
UNARXIVE = Path("samples") / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
HUMAN_TABLE = Path(__file__).resolve().parents[2] / "scores" / "data" / "leval_human_table5.csv"


def _lines(path: Path, n: int) -> list[dict[str, Any]]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
            if len(out) == n:
                break
    return out


def _plant(path: Path, good: list[dict[str, Any]], damage: str | None, *, form: str = "jsonl") -> None:
    """`path` holding the good rows, one damaged row among them, or the whole file damaged."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write = jsonl if form == "jsonl" else json_list
    if damage in FILE_DAMAGE:
        data = file_damage(write(good), damage)
        if data is None:
            path.mkdir()
        else:
            path.write_bytes(data)
        return
    path.write_bytes(write(damaged_rows(good, damage) if damage else good))


# ---- SCALAR cloze questions (one JSON object per file, or a list) -----------------------------------------------
def cloze_files(d: Path, corpus: Path, damage: str | None) -> Argv:
    src = sorted((corpus / SCALAR_EASY).glob("*.json"))[:2]
    easy = d / "cloze_examples_easy"
    easy.mkdir(parents=True)
    for f in src:
        shutil.copy(f, easy / f.name)
    if damage in FILE_DAMAGE:
        data = file_damage(src[0].read_bytes(), damage)
        if data is None:
            (easy / "2311.99999_1.json").mkdir()
        else:
            (easy / "2311.99999_1.json").write_bytes(data)
    elif damage:
        (easy / "2311.99999_1.json").write_bytes(encode(ROW_DAMAGE[damage](json.loads(src[0].read_bytes()))))
    return ["cloze", "import", str(d), "--round", "imported"]


def cloze_list(d: Path, corpus: Path, damage: str | None) -> Argv:
    good = [json.loads(f.read_bytes()) for f in sorted((corpus / SCALAR_EASY).glob("*.json"))[:2]]
    _plant(d / "scalar_easy.json", good, damage, form="list")
    return ["cloze", "import", str(d / "scalar_easy.json"), "--round", "imported"]


# ---- L-Eval task files ----------------------------------------------------------------------------------------
def leval_task(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "Closed-ended-tasks" / "tpo.jsonl", _lines(corpus / LEVAL_TASK, 2), damage)
    return ["leval", "import", str(d), "--round", "leval-imported"]


# ---- ElaipBench rows (a real paper's text; the row schema of ElaipBench's elabench.jsonl) -----------------------
def elaip_rows(corpus: Path) -> list[dict[str, Any]]:
    paper = _lines(corpus / UNARXIVE, 1)[0]
    text = "\n\n".join(p["text"] for p in paper["body_text"][:40])
    evidence = paper["body_text"][3]["text"]

    def q(stem: str) -> str:
        return (
            stem + "\n" + "\n".join(f"{k}. {o}" for k, o in zip("ABCD", ["one", "two", "three", "four"], strict=True))
        )

    base = {"paper_id": "2212.00001", "paper_content": text, "relevant_passage": evidence}
    return [
        {**base, "question_type": "SA-MCQ", "question": q("Which statement holds?"), "answer": "C"},
        {**base, "question_type": "MA-MCQ", "question": q("Which hold?"), "answer": "A, C"},
        {**base, "question_type": "SA-MCQ", "question": q("Which is stated?"), "answer": "B"},
    ]


def elaip_jsonl(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "elabench.jsonl", elaip_rows(corpus), damage)
    return ["elaip", "import", str(d / "elabench.jsonl"), "--round", "elaip-imported"]


def elaip_list(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "elabench.json", elaip_rows(corpus), damage, form="list")
    return ["elaip", "import", str(d / "elabench.json"), "--round", "elaip-imported"]


def elaip_run(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "elabench.jsonl", elaip_rows(corpus), damage)
    return ["elaip", "run", str(d / "elabench.jsonl"), "--model", "baseline/random-choice", "--runs", "1"]


# ---- L-Eval prediction files ------------------------------------------------------------------------------------
def predictions(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "tpo.pred.jsonl", _lines(corpus / PREDICTIONS, 4), damage)
    return ["score-predictions", str(d / "tpo.pred.jsonl")]


def judged_predictions(d: Path, corpus: Path, damage: str | None) -> Argv:
    good = _lines(corpus / PREDICTIONS, 3)
    _plant(d / "cand" / "tpo.pred.jsonl", good, damage)
    _plant(d / "ref" / "tpo.pred.jsonl", good, None)
    return ["judge-predictions", str(d / "cand" / "tpo.pred.jsonl"), "--against", str(d / "ref" / "tpo.pred.jsonl"),
            "--judge", "baseline/lead"]  # fmt: skip


# ---- human scores (CSV) and the predictions they are compared with ---------------------------------------------------
CSV_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "csv-bom": lambda b: b"\xef\xbb\xbf" + b,
    "csv-missing-column": lambda b: b.replace(b"score", b"points", 1),
    "csv-score-not-a-number": lambda b: b.replace(b"4.04", b"high", 1),
    "csv-score-nan": lambda b: b.replace(b"4.04", b"nan", 1),
    "csv-empty": lambda b: b"",
    "csv-header-only": lambda b: b.splitlines(keepends=True)[0],
    "csv-bad-utf8": lambda b: b.replace(b"claude", b"cl\xff\xfeaude", 1),
    "csv-nul-bytes": lambda b: b.replace(b"claude", b"cl\x00aude", 1),
    "csv-huge-field": lambda b: b + b'x,lie,1.0,"' + b"a" * 200_000 + b'"\n',
    "csv-unclosed-quote": lambda b: b + b'"model,lie,1.0\n',
    "csv-semicolons": lambda b: b.replace(b",", b";"),
    "csv-ragged-rows": lambda b: b + b"a,b\nc,d,e,f,g,h,i\n",
    "csv-binary": lambda b: bytes(range(256)) * 8,
}


def agreement_csv(d: Path, corpus: Path, damage: str | None) -> Argv:
    d.mkdir(parents=True, exist_ok=True)
    data = HUMAN_TABLE.read_bytes()
    (d / "human.csv").write_bytes(CSV_DAMAGE[damage](data) if damage else data)
    preds = sorted((corpus / HUMAN_EVAL).glob("*.pred.jsonl"))[:3]
    return ["agreement", str(d / "human.csv"), *map(str, preds), "--setting", "lie"]


def agreement_predictions(d: Path, corpus: Path, damage: str | None) -> Argv:
    src = sorted((corpus / HUMAN_EVAL).glob("*.pred.jsonl"))[0]
    _plant(d / src.name, _lines(src, 4), damage)
    return ["agreement", str(HUMAN_TABLE), str(d / src.name), "--setting", "lie"]


# ---- publication lists: BibTeX and CSL-JSON ---------------------------------------------------------------------
def _bib_entries(corpus: Path, n: int) -> list[str]:
    text = (corpus / BIB).read_text(encoding="utf-8")
    return ["@" + e.strip() for e in text.split("\n@") if e.strip()][1 : n + 1]


BIB_DAMAGE: dict[str, Callable[[str], bytes]] = {
    "bib-unbalanced-braces": lambda e: e.replace("}", "", 3).encode(),
    "bib-deep-braces": lambda e: ("@article{deep,\n title = " + "{" * 100_000 + "x" + "}" * 100_000 + "}\n").encode(),
    "bib-no-key": lambda e: e.replace("{", "{,", 1).encode(),
    "bib-binary": lambda e: bytes(range(1, 256)) * 4,
    "bib-bad-utf8": lambda e: e.encode().replace(b"Title", b"Ti\xff\xfetle", 1),
    "bib-nul-bytes": lambda e: e.encode().replace(b"Title = {", b"Title = {\x00", 1),
    "bib-huge-field": lambda e: e.replace("year", f"note = {{{'a' * 3_000_000}}},\nyear", 1).encode(),
    "bib-string-macro-loop": lambda e: b"@string{a = b}\n@string{b = a}\n" + e.replace("{2026}", "a").encode(),
    "bib-crossref-self": lambda e: e.replace("year", "crossref = {Bryngelson26},\nyear", 1).encode(),
    "bib-many-authors-and": lambda e: e.replace("S. H. Bryngelson", " and " * 5000, 1).encode(),
    "bib-file-escapes": lambda e: e.replace("bryngelson-report-26.pdf", "../../../etc/passwd", 1).encode(),
}


def bibtex(d: Path, corpus: Path, damage: str | None) -> Argv:
    d.mkdir(parents=True, exist_ok=True)
    good = _bib_entries(corpus, 3)
    bad = [BIB_DAMAGE[damage](good[0]).decode("utf-8", "surrogateescape")] if damage else []
    blob = b"\n\n".join(x.encode("utf-8", "surrogateescape") for x in [good[0], *bad, *good[1:]])
    (d / "ref.bib").write_bytes(blob)
    return ["import-publist", str(d), "--no-parse"]


def csl_items(corpus: Path) -> list[dict[str, Any]]:
    out = []
    for i, rec in enumerate(_lines(corpus / KAGGLE, 3)):
        names = [{"family": p[0], "given": p[1]} for p in rec.get("authors_parsed", [])[:4]]
        out.append({"id": f"item{i}", "type": "article", "title": rec["title"], "author": names,
                    "issued": {"date-parts": [[2007, 4, 1 + i]]}, "DOI": rec.get("doi") or f"10.0/x{i}"})  # fmt: skip
    return out


def csl_json(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "list.json", csl_items(corpus), damage, form="list")
    return ["import-publist", str(d), "--no-parse"]


# ---- arXiv metadata lines for the mirror index --------------------------------------------------------------------
def kaggle(d: Path, corpus: Path, damage: str | None) -> Argv:
    _plant(d / "kaggle.jsonl", _lines(corpus / KAGGLE, 4), damage)
    return ["mirror", "index", str(d / "kaggle.jsonl")]


# ---- lm-evaluation-harness output (results file; its task names an academiceval round) --------------------------
def lmeval_results(d: Path, corpus: Path, damage: str | None) -> Argv:
    """A results file of lm-eval's form for one task exported by academiceval, and a samples file holding real
    L-Eval rows (not academiceval docs: each is reported and skipped)."""
    results = {"config": {"model": "local-chat-completions"}, "model_name": "m",
               "configs": {"tpo": {"metadata": {"academiceval_round": "leval-demo"}}}}  # fmt: skip
    _plant(d / "out" / "results_2026-01-01T00-00-00.json", [results], damage, form="list")
    data = (d / "out" / "results_2026-01-01T00-00-00.json").read_bytes() if damage not in FILE_DAMAGE else b""
    if data.startswith(b"[\n") and damage is None:  # the valid file is the object itself, not a list of it
        (d / "out" / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results))
    _plant(d / "out" / "samples_tpo_2026-01-01T00-00-00.jsonl", _lines(corpus / LEVAL_TASK, 2), None)
    return ["lm-eval", "import", str(d / "out")]


# ---- PDFs for ingest ------------------------------------------------------------------------------------------
PDF_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "pdf-truncated": lambda b: b[: len(b) // 3],
    "pdf-empty": lambda b: b"",
    "pdf-html": lambda b: b"<html><body>Access denied</body></html>",
    "pdf-header-only": lambda b: b"%PDF-1.7\n%%EOF\n",
    "pdf-garbage-body": lambda b: b[:2000] + bytes(range(256)) * 64,
}


def pdfs(d: Path, corpus: Path, damage: str | None) -> Argv:
    d.mkdir(parents=True, exist_ok=True)
    good = corpus / "pdf" / "hltnaacl2004_Peng_CRF.pdf"  # a small real paper (8 pages)
    shutil.copy(good, d / good.name)
    if damage:
        (d / "broken.pdf").write_bytes(PDF_DAMAGE[damage](good.read_bytes()))
    return ["ingest", str(d)]


@dataclass(frozen=True)
class Importer:
    """One way a command reads rows from a user's file: the form, how to build it, which damages apply."""

    command: str
    form: str
    make: Make
    damages: tuple[str, ...]
    valid_exit: int = 0  # the valid input's exit status: it imports (0), unless said otherwise with the reason


JSON_DAMAGES = (*ROW_DAMAGE, *FILE_DAMAGE)
IMPORTERS: list[Importer] = [
    Importer("cloze import", "SCALAR question files", cloze_files, JSON_DAMAGES),
    Importer("cloze import", "SCALAR list (HF form)", cloze_list, JSON_DAMAGES),
    Importer("leval import", "L-Eval task file", leval_task, JSON_DAMAGES),
    Importer("elaip import", "ElaipBench JSONL", elaip_jsonl, JSON_DAMAGES),
    Importer("elaip import", "ElaipBench JSON list", elaip_list, JSON_DAMAGES),
    Importer("elaip run", "ElaipBench JSONL", elaip_run, JSON_DAMAGES),
    Importer("score-predictions", "L-Eval prediction file", predictions, JSON_DAMAGES),
    Importer("judge-predictions", "L-Eval prediction file", judged_predictions, JSON_DAMAGES),
    Importer("agreement", "human scores CSV", agreement_csv, tuple(CSV_DAMAGE)),
    Importer("agreement", "L-Eval prediction file", agreement_predictions, JSON_DAMAGES),
    Importer("import-publist", "BibTeX", bibtex, tuple(BIB_DAMAGE)),
    Importer("import-publist", "CSL-JSON", csl_json, JSON_DAMAGES),
    Importer("mirror index", "Kaggle arXiv metadata", kaggle, JSON_DAMAGES),
    # no samples file of an academiceval doc: "no academiceval task in the lm-eval output" (exit 2) even when valid
    Importer("lm-eval import", "lm-eval results file", lmeval_results, JSON_DAMAGES, valid_exit=2),
    Importer("ingest", "PDF", pdfs, tuple(PDF_DAMAGE)),
]


def is_raw(value: Any) -> bool:
    return isinstance(value, Raw)
