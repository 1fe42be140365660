"""ElaipBench-format multiple-choice items: import, prompts, and intra-paper retrieval as a setting.

Row schema (ElaipBench's `elabench.jsonl`, see `../shared/research/scalar_leval_elaip_anchor.md` §3):
`paper_id`, `question_type` ("SA-MCQ": exactly one correct option; "MA-MCQ": two or more), `question` (the stem
with options A–D embedded), `answer` (the letters, e.g. "B" or "ACD"), `relevant_passage` (the evidence),
`paper_content` (the paper's full text). There is no id field: an item's id is its row index.

A row that does not fit (unknown type, answer letters outside A–D, an SA row with several letters) is not
imported; `read_rows` returns it among the rejects with the reason, so a count is always reported. An MA row with a
single letter is imported as published and *flagged* (`ElaipItem.flags`: "ma-single-letter"): ElaipBench's §3.2.1
allows "one or more" correct answers for MA questions (its guideline 7 says two or three), and its published file
has two such rows. Its prompt says "one or more of the options are correct" (`elaipbench_open.j2`), since "two or
more" would be false for it; it is scored by the same strict set match and counted as MA.

Settings (`context_for`):
- `full` — the whole paper (ElaipBench's base setting; its papers fit a 32k window);
- `rag-bm25` / `rag-dense` — ElaipBench's intra-paper RAG (§4.6, A.6): the whole paper *and* the top-k (5) passages
  retrieved from it for the question as auxiliary knowledge (`AUX_HEADER`), passages of ≤ 512 tokens cut on
  sentence boundaries, shown in descending retrieval score; when the whole prompt exceeds the budget (32,768 tokens)
  the retrieved passages are cut round-robin (`trim_round_robin`), never the paper;
- `passages-bm25` / `passages-dense` — the top-k passages *instead of* the paper, in paper order, no budget (what
  `rag-*` meant before: a retrieval-only reading ElaipBench does not run, kept under its own name);
- `evidence` — the relevant passage only (an oracle upper bound).
Passages are ranked by `models.rag.retrievers` through `retrieval.retrieval_for` (bm25s; for dense the packaged
all-MiniLM-L6-v2 by default, or any local sentence-embedding checkpoint by path — ElaipBench used BGE-m3, which is
not available offline, and rank_bm25's BM25Okapi).

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
Setting = Literal["full", "rag-bm25", "rag-dense", "passages-bm25", "passages-dense", "evidence"]
SETTINGS: tuple[str, ...] = ("full", "rag-bm25", "rag-dense", "passages-bm25", "passages-dense", "evidence")
AUX_SETTINGS = ("rag-bm25", "rag-dense")  # the paper + retrieved passages as auxiliary knowledge (ElaipBench's RAG)
PASSAGE_SETTINGS = ("passages-bm25", "passages-dense")  # the passages instead of the paper
RETRIEVAL_SETTINGS = AUX_SETTINGS + PASSAGE_SETTINGS
BUDGET_TOKENS = 32_768  # ElaipBench A.6.2: paper + snippets within 32,768 tokens
MA_SINGLE = "ma-single-letter"  # the flag of an MA row published with one letter

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "elaipbench.j2"  # and its closing, elaipbench_closing.j2 (the rule of SA / MA items and the format)
TEMPLATE_OPEN = "elaipbench_open.j2"  # the same text; its closing says "one or more" (flagged MA rows)
COT_SUFFIX = "\nThink step by step before giving the final answer in the tags."
AUX_HEADER = (
    "Auxiliary knowledge: passages retrieved from the paper for this question, most relevant first. They are "
    "excerpts of the paper above; consult them alongside it."
)
PROMPT_SHA256 = hashlib.sha256(
    json.dumps(
        [
            (TEMPLATES / n).read_text(encoding="utf-8")
            for n in (TEMPLATE, closing_name(TEMPLATE), TEMPLATE_OPEN, closing_name(TEMPLATE_OPEN))
        ]
        + [COT_SUFFIX, AUX_HEADER]
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
    flags: list[str] = []  # imported as published but unusual: "ma-single-letter"


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
                flags=[MA_SINGLE] if qtype == "MA-MCQ" and len(answer) == 1 else [],
            )
        )
    return items, rejects


def flag_counts(items: Iterable[ElaipItem]) -> dict[str, int]:
    """How many imported items carry each flag (a round's manifest notes them)."""
    out: dict[str, int] = {}
    for it in items:
        for f in it.flags:
            out[f] = out.get(f, 0) + 1
    return out


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


def passage_units(text: str, *, count: Callable[[str], int], size: int = 512) -> list[list[str]]:
    """Consecutive sentences packed into passages of at most `size` tokens, each passage as its sentences (a
    sentence longer than `size` is cut on words into pieces that count as sentences). Round-robin trimming takes
    whole sentences off these units, so a trimmed snippet still begins and ends on a sentence boundary."""
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
    out: list[list[str]] = []
    current: list[str] = []
    for unit in units:
        if current and count(" ".join([*current, unit])) > size:
            out.append(current)
            current = []
        current.append(unit)
    if current:
        out.append(current)
    return out


def passages(text: str, *, count: Callable[[str], int], size: int = 512) -> list[str]:
    """Consecutive sentences packed into passages of at most `size` tokens (a longer sentence is cut on words).

    `count` is the tokenizer's counter (`retrieval.retrieval_for` passes the packaged WordPiece one)."""
    return [" ".join(u) for u in passage_units(text, count=count, size=size)]


def with_knowledge(paper: str, snippets: list[list[str]]) -> str:
    """The paper followed by the auxiliary-knowledge block: numbered snippets in the order given (score order)."""
    kept = [" ".join(s) for s in snippets if s]
    if not kept:
        return paper
    block = "\n\n".join(f"[{i}] {text}" for i, text in enumerate(kept, 1))
    return f"{paper}\n\n{AUX_HEADER}\n\n{block}"


def trim_round_robin(snippets: list[list[str]], over: int, count: Callable[[str], int]) -> tuple[list[list[str]], int]:
    """Cut at least `over` tokens from the snippets, round-robin: each round visits the snippets from the lowest
    score to the highest (`snippets` is in descending score order) and takes the last sentence off each; a snippet
    with no sentence left is emptied. Returns the trimmed snippets, aligned with the input (an emptied one stays as
    `[]`, so the caller knows which passages are still shown), and the number of sentences removed.

    ElaipBench (A.6.2) says "round-robin truncation over retrieved items" when paper + snippets exceed the budget,
    with snippets kept on sentence boundaries; which item a round starts with is not said — lowest score first
    keeps the best snippet longest."""
    out = [list(s) for s in snippets]
    removed_tokens = removed = 0
    while removed_tokens < over and any(out):
        for s in reversed(out):
            if not s:
                continue
            removed_tokens += count(s.pop())
            removed += 1
            if removed_tokens >= over:
                break
    return out, removed


def is_retrieval(setting: str) -> bool:
    return setting in RETRIEVAL_SETTINGS


def context_for(
    item: ElaipItem,
    setting: str = "full",
    *,
    top_k: int = 5,
    size: int = 512,
    retriever: Any = None,
    count: Callable[[str], int] | None = None,
    budget: int | None = BUDGET_TOKENS,
    measure: Callable[[str], int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The text shown to the model for one setting, and what was chosen (passage indices and scores).

    The retrieval settings need a `retriever` (anything with `scores(query, docs)` and `identity()`, e.g.
    `models.rag.retrievers`) and a token `count` (passage sizes); `retrieval.retrieval_for(setting)` supplies both.
    `rag-*` keeps the whole prompt (`render` of the item on the context, counted by `measure`, default `count`)
    within `budget` tokens by trimming the snippets round-robin (None: no budget)."""
    if setting == "full":
        return item.paper_content, {"setting": setting}
    if setting == "evidence":
        return item.relevant_passage, {"setting": setting}
    if setting not in RETRIEVAL_SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
    if retriever is None or count is None:
        raise ValueError(f"setting {setting!r} needs a retriever and a token counter")
    units = passage_units(item.paper_content, size=size, count=count)
    chunks = [" ".join(u) for u in units]
    scores = retriever.scores(item.question, chunks)
    ranked = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))[:top_k]
    meta: dict[str, Any] = {
        "setting": setting,
        "retriever": retriever.identity(),
        "passages": len(chunks),
        "top_k": top_k,
        "passage_tokens": size,
    }
    if setting in PASSAGE_SETTINGS:
        chosen = sorted(ranked)  # shown in paper order, instead of the paper
        meta.update(chosen=chosen, scores=[round(float(scores[i]), 6) for i in chosen])
        return "\n\n".join(chunks[i] for i in chosen), meta
    # rag-*: the paper, then the snippets in descending score, the whole prompt within the budget
    snippets = [list(units[i]) for i in ranked]
    meta.update(mode="paper+snippets", chosen=ranked, scores=[round(float(scores[i]), 6) for i in ranked])
    measure = measure or count
    context = with_knowledge(item.paper_content, snippets)
    tokens = measure(render(item, context))
    trimmed = 0
    while budget is not None and tokens > budget and any(snippets):
        snippets, n = trim_round_robin(snippets, tokens - budget, count)
        trimmed += n
        context = with_knowledge(item.paper_content, snippets)
        tokens = measure(render(item, context))
    kept = [i for i, s in zip(ranked, snippets, strict=True) if s]
    meta.update(
        kept=kept,  # the passages still shown (score order), after trimming
        budget=budget,
        prompt_tokens=tokens,
        sentences_trimmed=trimmed,
        snippets_kept=len(kept),
        over_budget=budget is not None and tokens > budget,  # the paper alone does not fit: it is never cut here
    )
    return context, meta


def choice_of(item: ElaipItem, context: str, item_id: str | None = None) -> ChoiceItem:
    """The item as core multiple choice: the paper text (or passages) is the context, the stem the question,
    A–D the options (their texts when the stem lists them one per line), multi for MA-MCQ items (a flagged MA row
    with one letter gets the closing that says "one or more")."""
    return ChoiceItem(
        item_id=item_id or item.sample_id,
        template=TEMPLATE_OPEN if MA_SINGLE in item.flags else TEMPLATE,
        template_dir=str(TEMPLATES),
        context=context,
        question=item.question.strip(),
        options=[ChoiceOption(key=k, text=item.options.get(k, "")) for k in "ABCD"],
        gold=list(item.answer),
        multi=item.question_type == "MA-MCQ",
        caption=f"{item.question_type} · {item.source}" + (f" · {', '.join(item.flags)}" if item.flags else ""),
    )


def render(item: ElaipItem, context: str, *, cot: bool = False) -> str:
    """The prompt of one item on a context (the core multiple-choice rendering; `cot` adds the CoT request)."""
    return render_choice(choice_of(item, context)) + (COT_SUFFIX if cot else "")
