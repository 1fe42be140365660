"""ElaipBench-format multiple-choice items: import, prompts, and intra-paper retrieval as a setting.

Row schema (ElaipBench's `elabench.jsonl`, see `../shared/research/scalar_leval_elaip_anchor.md` §3):
`paper_id`, `question_type` ("SA-MCQ": exactly one correct option; "MA-MCQ": two or more), `question` (the stem
with options A–D embedded), `answer` (the letters, e.g. "B" or "ACD"), `relevant_passage` (the evidence),
`paper_content` (the paper's full text). There is no id field: an item's id is its row index.

A row that does not fit (unknown type, answer letters outside A–D, an SA row with several letters) is not
imported; `read_rows` returns it among the rejects with the reason, so a count is always reported.

Settings (`context_for`): `full` — the whole paper (ElaipBench's base setting; papers fit a 32k window); `rag-bm25`
/ `rag-dense` — the top-k passages of the paper itself for the question (ElaipBench's RAG variant: passages of ~512
tokens cut on sentence boundaries, top 5), ranked by `models.rag.retrievers` through `retrieval.retrieval_for`
(bm25s; the packaged all-MiniLM-L6-v2 for dense — ElaipBench used BGE-m3, which is not available offline; any local
checkpoint can be passed); `evidence` — the relevant passage only (an oracle upper bound).

ElaipBench's own base prompt and answer parser are not published; ours (`templates/elaipbench.j2`, rendered by the
core multiple-choice path `rounds.choice`) asks for the letters inside `<answer>…</answer>` and is parsed strictly
by `scores.mcq.parse_answer_set` (see `scoring`), so every number is "ElaipBench data, academiceval protocol",
and `PROMPT_SHA256` (of the templates) goes with every result.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from academiceval.families.elaip import SPEC
from academiceval.rounds.choice import ChoiceItem, ChoiceOption, closing_name, render_choice

FAMILY = SPEC.name  # "elaipbench"
QUESTION_TYPES = ("SA-MCQ", "MA-MCQ")
Setting = Literal["full", "rag-bm25", "rag-dense", "evidence"]
SETTINGS: tuple[str, ...] = ("full", "rag-bm25", "rag-dense", "evidence")

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "elaipbench.j2"  # and its closing, elaipbench_closing.j2 (the rule of SA / MA items and the format)
COT_SUFFIX = "\nThink step by step before giving the final answer in the tags."
PROMPT_SHA256 = hashlib.sha256(
    json.dumps(
        [(TEMPLATES / n).read_text(encoding="utf-8") for n in (TEMPLATE, closing_name(TEMPLATE))] + [COT_SUFFIX]
    ).encode()
).hexdigest()

_OPTION = re.compile(r"(?m)^\s*\(?([A-D])[).:]\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n")


class ElaipItem(BaseModel):
    sample_id: str  # "elaipbench/<row index>"
    family: str = FAMILY
    source: str = "ElaipBench"  # generated items say "elaipbench-style (not ElaipBench)"
    row: int
    paper_id: str
    question_type: str
    question: str
    options: dict[str, str]  # parsed from the stem when it lists them one per line (for display only)
    answer: str  # sorted letters, e.g. "ACD"
    relevant_passage: str = ""
    paper_content: str = ""


def normalise_answer(answer: str) -> str:
    letters = re.findall(r"[A-Za-z]", answer)
    return "".join(sorted({c.upper() for c in letters}))


def read_rows(rows: Iterable[dict[str, Any]], *, source: str = "ElaipBench") -> tuple[list[ElaipItem], list[dict]]:
    items: list[ElaipItem] = []
    rejects: list[dict] = []
    for i, row in enumerate(rows):
        qtype = str(row.get("question_type", "")).strip()
        answer = normalise_answer(str(row.get("answer", "")))
        reason = None
        if qtype not in QUESTION_TYPES:
            reason = f"question_type {qtype!r} is not one of {', '.join(QUESTION_TYPES)}"
        elif not answer or set(answer) - set("ABCD"):
            reason = f"answer {row.get('answer')!r} is not a set of letters A–D"
        elif qtype == "SA-MCQ" and len(answer) != 1:
            reason = f"SA-MCQ with {len(answer)} correct letters"
        elif qtype == "MA-MCQ" and len(answer) < 2:
            reason = "MA-MCQ with a single correct letter"
        elif not str(row.get("question", "")).strip():
            reason = "empty question"
        if reason:
            rejects.append({"row": i, "paper_id": row.get("paper_id"), "reason": reason})
            continue
        question = str(row["question"])
        items.append(
            ElaipItem(
                sample_id=f"{FAMILY}/{i}",
                source=source,
                row=i,
                paper_id=str(row.get("paper_id", "")),
                question_type=qtype,
                question=question,
                options=dict(_OPTION.findall(question)),
                answer=answer,
                relevant_passage=str(row.get("relevant_passage") or ""),
                paper_content=str(row.get("paper_content") or ""),
            )
        )
    return items, rejects


def read_file(path: str | Path, *, source: str = "ElaipBench") -> tuple[list[ElaipItem], list[dict]]:
    """`elabench.jsonl` (one row per line) or a JSON list of rows."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return read_rows(rows, source=source)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def passages(text: str, *, count: Callable[[str], int], size: int = 512) -> list[str]:
    """Consecutive sentences packed into passages of at most `size` tokens (a longer sentence is cut on words).

    `count` is the tokenizer's counter (`retrieval.retrieval_for` passes the packaged WordPiece one)."""
    units: list[str] = []
    for sent in sentences(text):
        if count(sent) <= size:
            units.append(sent)
            continue
        piece: list[str] = []
        for w in sent.split():
            if piece and count(" ".join([*piece, w])) > size:
                units.append(" ".join(piece))
                piece = []
            piece.append(w)
        if piece:
            units.append(" ".join(piece))
    out: list[str] = []
    current: list[str] = []
    for unit in units:
        if current and count(" ".join([*current, unit])) > size:
            out.append(" ".join(current))
            current = []
        current.append(unit)
    if current:
        out.append(" ".join(current))
    return out


def context_for(
    item: ElaipItem,
    setting: str = "full",
    *,
    top_k: int = 5,
    size: int = 512,
    retriever: Any = None,
    count: Callable[[str], int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The text shown to the model for one setting, and what was chosen (passage indices and scores).

    The RAG settings need a `retriever` (anything with `scores(query, docs)` and `identity()`, e.g.
    `models.rag.retrievers`) and a token `count`; `runs.elaip.retrieval_for(setting)` supplies both."""
    if setting == "full":
        return item.paper_content, {"setting": setting}
    if setting == "evidence":
        return item.relevant_passage, {"setting": setting}
    if setting not in ("rag-bm25", "rag-dense"):
        raise ValueError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
    if retriever is None or count is None:
        raise ValueError(f"setting {setting!r} needs a retriever and a token counter")
    chunks = passages(item.paper_content, size=size, count=count)
    scores = retriever.scores(item.question, chunks)
    ranked = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))[:top_k]
    chosen = sorted(ranked)  # shown in paper order
    meta = {
        "setting": setting,
        "retriever": retriever.identity(),
        "passages": len(chunks),
        "top_k": top_k,
        "chosen": chosen,
        "scores": [round(float(scores[i]), 6) for i in chosen],
        "passage_tokens": size,
    }
    return "\n\n".join(chunks[i] for i in chosen), meta


def choice_of(item: ElaipItem, context: str, item_id: str | None = None) -> ChoiceItem:
    """The item as core multiple choice: the paper text (or passages) is the context, the stem the question,
    A–D the options (their texts when the stem lists them one per line), multi for MA-MCQ items."""
    return ChoiceItem(
        item_id=item_id or item.sample_id,
        template=TEMPLATE,
        template_dir=str(TEMPLATES),
        context=context,
        question=item.question.strip(),
        options=[ChoiceOption(key=k, text=item.options.get(k, "")) for k in "ABCD"],
        gold=list(item.answer),
        multi=item.question_type == "MA-MCQ",
        caption=f"{item.question_type} · {item.source}",
    )


def render(item: ElaipItem, context: str, *, cot: bool = False) -> str:
    """The prompt of one item on a context (the core multiple-choice rendering; `cot` adds the CoT request)."""
    return render_choice(choice_of(item, context)) + (COT_SUFFIX if cot else "")
