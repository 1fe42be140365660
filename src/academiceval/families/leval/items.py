"""L-Eval's task files as a round family: one item per (instruction, reference) pair, runnable with any backend.

Source: `LEval-data/{Closed,Open}-ended-tasks/<task>.jsonl`, one long document per line with parallel
`instructions` / `outputs` lists and an `evaluation` tag (exam, f1, rouge, LLM, human) that applies to the whole
document. An item keeps: the task id (= the file stem, the key `scoring.TASKS` dispatches on), the document
and question indices, the tag, the document's `source`, and the reference.

Prompt conventions follow L-Eval's structure (`Baselines/LEval_config.py`, `*-test.py`), in our own wording:
a system message per kind of task, then the document, then the question (closed-ended) or the instruction
(open-ended). The **length instruction** (L-Eval's LIE) is added to open-ended instructions by default, with
N = the number of whitespace-separated words of that item's reference (L-Eval's `len(out.split())`); every item
records N, the wording used and whether it was on. Closed-ended answers are parsed by `scoring`; GSM keeps
the phrase "The answer is" because L-Eval's parser looks for it. Output length: 512 new tokens (L-Eval's).

Truncation follows L-Eval's policy (`fit_document`): only the document is cut, at word granularity, from the
right (codeU: from the left, the call to evaluate is at the end), in steps of 250 words until it fits the
budget, and the number of words cut is recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel

from academiceval.families.leval import SPEC

FAMILY = SPEC.name  # "leval"
MAX_NEW_TOKENS = SPEC.max_new_tokens  # 512, L-Eval's
LIE_WORDING = "Aim for about {n} words."
OPEN_ENDED_TAGS = ("f1", "rouge", "LLM", "human")

#: task id → kind of answer extraction (L-Eval's closed-ended tasks); open-ended ids use the row's tag.
TASKS: dict[str, str] = {
    "coursera": "choice-multi",
    "quality": "choice",
    "tpo": "choice",
    "gsm100": "math",
    "codeU": "code",
    "topic_retrieval_longchat": "topic",
    "sci_fi": "scifi",
    **{
        t: "text"
        for t in (
            "financial_qa",
            "gov_report_summ",
            "legal_contract_qa",
            "meeting_summ",
            "multidoc_qa",
            "narrative_qa",
            "natural_question",
            "news_summ",
            "paper_assistant",
            "patent_summ",
            "review_summ",
            "scientific_qa",
            "tv_show_summ",
        )
    },
}

SYSTEM = {
    "choice": (
        "You will read a long document and then answer a multiple-choice question about it. Exactly one option "
        "is correct: reply with its letter only (for example B)."
    ),
    "choice-multi": (
        "You will read a long document and then answer a multiple-choice question about it. One or more options "
        "may be correct: reply with the letters of every correct option and nothing else (for example A or BD)."
    ),
    "math": (
        "Worked questions with their answers come first, then a new question. Reason step by step and finish "
        "with the sentence 'The answer is N.' where N is the number."
    ),
    "topic": (
        "Below is the record of an earlier conversation that went through several topics; at the start of each "
        "topic the user named it. Answer the question with the topic's name only."
    ),
    "code": (
        "Below is a code base of many functions with their comments, followed by a call. Work out what the "
        "call prints and state that final output."
    ),
    "scifi": (
        "You will read a science-fiction story and then judge a statement. Answer True or False, following the "
        "question's instruction about whether to rely on the story or on real-world facts."
    ),
    "text": (
        "You will read a long document and then follow an instruction about it: a summary, an answer to a "
        "question about it, or a piece of writing based on it."
    ),
}
USER_EXAM = "Document:\n{document}\n\nQuestion: {instruction}\nGive the answer only, without explanation.\nAnswer:"
USER_PLAIN = "{document}\n\n{instruction}"  # GSM few-shot and CodeU: the document ends where the question starts
USER_OPEN = "Document:\n{document}\n\nInstruction: {instruction}{length}\nOutput:"
TEMPLATES_SHA256 = hashlib.sha256(
    json.dumps([SYSTEM, USER_EXAM, USER_PLAIN, USER_OPEN, LIE_WORDING], sort_keys=True).encode()
).hexdigest()


class LEvalItem(BaseModel):
    sample_id: str  # "leval/<task>/<doc>-<question>"
    round: str
    family: str = FAMILY
    task: str  # L-Eval's task id (file stem)
    doc_index: int
    question_index: int
    split: str = "test"
    evaluation: str  # the document's tag: exam, f1, rouge, LLM, human
    source: str = ""
    instruction: str
    document: str
    label: str  # the reference output
    length_words: int  # N of the length instruction: len(label.split())
    max_new_tokens: int = MAX_NEW_TOKENS


def kind_of(task: str) -> str:
    return TASKS.get(task, "text")


def read_task_file(path: str | Path, *, round_name: str = "leval") -> list[LEvalItem]:
    path = Path(path)
    task = path.name.removesuffix(".jsonl")
    items: list[LEvalItem] = []
    with path.open(encoding="utf-8") as fh:
        for d, line in enumerate(fh):
            if not line.strip():
                continue
            doc = json.loads(line)
            if len(doc["instructions"]) != len(doc["outputs"]):
                raise ValueError(
                    f"{path}: document {d} has {len(doc['instructions'])} instructions, {len(doc['outputs'])} outputs"
                )
            for q, (inst, out) in enumerate(zip(doc["instructions"], doc["outputs"], strict=True)):
                items.append(
                    LEvalItem(
                        sample_id=f"{FAMILY}/{task}/{d}-{q}",
                        round=round_name,
                        task=task,
                        doc_index=d,
                        question_index=q,
                        evaluation=doc.get("evaluation", ""),
                        source=doc.get("source") or "",
                        instruction=inst,
                        document=doc["input"],
                        label=out,
                        length_words=len(out.split()),
                    )
                )
    return items


def read_task_dir(
    data_dir: str | Path, *, round_name: str = "leval", tasks: Iterable[str] | None = None
) -> list[LEvalItem]:
    wanted = set(tasks) if tasks else None
    out: list[LEvalItem] = []
    for path in sorted(Path(data_dir).glob("*/*.jsonl")) or sorted(Path(data_dir).glob("*.jsonl")):
        if wanted is None or path.stem in wanted:
            out += read_task_file(path, round_name=round_name)
    return out


def fit_document(
    document: str, budget_tokens: int, count: Callable[[str], int], *, keep: str = "head", step_words: int = 250
) -> tuple[str, int]:
    """L-Eval's cut: while the document has more than `budget_tokens` tokens, keep `budget - cut` words
    (split on single spaces) from the head (or the tail) and grow `cut` by `step_words`. Returns (text, words cut)."""
    words = document.split(" ")
    text, cut = document, 0
    while count(text) > budget_tokens and budget_tokens - cut > 0:
        n = budget_tokens - cut
        text = " ".join(words[:n] if keep == "head" else words[-n:])
        cut += step_words
    return text, len(words) - len(text.split(" "))


def render(item: LEvalItem, *, length_instruction: bool = True, document: str | None = None) -> tuple[str, str, dict]:
    """(system, user, what was used) for one item."""
    kind = kind_of(item.task)
    doc = item.document if document is None else document
    lie = length_instruction and item.evaluation in OPEN_ENDED_TAGS and kind == "text"
    if kind == "text" or item.evaluation in OPEN_ENDED_TAGS:
        length = " " + LIE_WORDING.format(n=item.length_words) if lie else ""
        user = USER_OPEN.format(document=doc, instruction=item.instruction, length=length)
    elif kind in ("math", "code"):
        user = USER_PLAIN.format(document=doc, instruction=item.instruction)
    else:
        user = USER_EXAM.format(document=doc, instruction=item.instruction)
    meta = {
        "kind": kind,
        "length_instruction": lie,
        "length_words": item.length_words if lie else None,
        "length_wording": LIE_WORDING if lie else None,
        "templates_sha256": TEMPLATES_SHA256,
    }
    return SYSTEM[kind], user, meta
