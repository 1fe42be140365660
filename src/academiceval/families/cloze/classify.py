"""Citation type: attributional (the citation credits a named method, model, dataset or tool) vs descriptive
(it supports a claim or describes prior work).

Two classifiers, reported side by side:
- `heuristic_type`: no model. Looks at the words right before the citation for a name: a token with inner
  capitals or digits (`GPT-4`, `ResNet`, `MultiTP`), a run of capitalised words inside a sentence (`the Moral
  Machine experiment`), or such a name followed by a kind noun (`the MultiQ dataset`). Generic acronyms (LLM,
  RL, NLP …) do not count.
- `JudgeClassifier`: any model behind a `prompt -> answer` callable, asked a yes/no question in our own words
  with ~10 words of context each side (as SCALAR's annotator). Every decision is cached in table
  `cloze_type_judgement` with its prompt, context and raw answer, so it can be reviewed and is never paid twice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from academiceval.families.cloze.models import CitationType
from academiceval.store.workspace import Workspace, now_iso, register_schema

JUDGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS cloze_type_judgement (
    key TEXT PRIMARY KEY,                -- sha256 of model identity + prompt
    model TEXT NOT NULL,
    paper_id TEXT,
    citation TEXT NOT NULL,
    context TEXT NOT NULL,
    prompt TEXT NOT NULL,
    answer TEXT NOT NULL,                -- the model's raw answer
    decision TEXT,                       -- attributional / descriptive / NULL when unreadable
    at TEXT NOT NULL
);
"""
register_schema("rounds_cloze_judge", JUDGE_SCHEMA)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


GENERIC_ACRONYMS = _words(
    "LLM LLMs LM LMs AI NLP ML RL DL CV NN NNs DNN DNNs CNN CNNs RNN RNNs GNN GNNs VLM VLMs MLLM MLLMs QA "
    "SOTA GPU GPUs TPU API APIs MDP MDPs ODE ODEs SDE SDEs PDE PDEs KL MSE IID OOD ID RLHF SFT LoRA CoT "
    "ICL IR MT ASR TTS GAN GANs VAE VAEs ViT ViTs MoE DAG DAGs "
)
KIND_NOUNS = _words(
    "dataset datasets benchmark benchmarks model models method methods algorithm algorithms framework "
    "frameworks architecture architectures optimizer library toolkit corpus corpora suite package tool "
    "tools network networks metric metrics score loss system systems platform environment environments "
    "engine simulator protocol technique techniques function layer layers approach decomposition "
    "autoencoder regression operator objective estimator procedure strategy scheme mechanism module block "
    "transformer transformers optimiser solver agent agents pipeline encoder decoder embedding embeddings "
    "test tests game games task tasks experiment "
)
_LEAD_NOISE = re.compile(
    r"(?:[\s(\[,;:]|\b(?:e\.g\.|i\.e\.|see|cf\.|also|and|or|via|of|by|from|in|as)\b)+$", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z0-9][\w\-\+\.']*")
_SENT_END = re.compile(r"[.!?]\s*$")


@dataclass(frozen=True)
class Context:
    before: str
    citation: str
    after: str

    def text(self) -> str:
        return f"{self.before} {self.citation} {self.after}".strip()


def citation_context(text: str, start: int, end: int, *, chars: int = 100, words: int = 10) -> Context:
    """~`words` whitespace words each side, taken from `chars` characters around the span (as SCALAR)."""
    before = text[max(0, start - chars) : start].split()[-words:]
    after = text[end : end + chars].split()[:words]
    return Context(" ".join(before), text[start:end], " ".join(after))


def _name_like(word: str) -> bool:
    w = word.strip(".,;:'\"")
    if not w or w in GENERIC_ACRONYMS or w.rstrip("s") in GENERIC_ACRONYMS:
        return False
    has_alpha = any(c.isalpha() for c in w)
    if re.fullmatch(r"v\d+(\.\d+)*|\d{4}[a-z]?|\d+(st|nd|rd|th|D|d|k|K|M|B)", w):
        return False  # versions, years, ordinals, sizes
    if has_alpha and any(c.isdigit() for c in w):
        return True  # GPT-4, T5, Llama2
    inner_caps = sum(c.isupper() for c in w[1:])
    return inner_caps >= 1 and has_alpha  # ResNet, BERT, MultiTP, DALL-E


def heuristic_type(text: str, start: int, end: int) -> tuple[CitationType, str]:
    """(type, rule that fired). Reads only the section text around the span."""
    head = text[max(0, start - 120) : start]
    if head and (head[-1].isalnum() or head[-1] == "-"):  # the span starts inside a (non-ASCII/hyphenated) name
        head = re.sub(r"\S+$", "", head)
    # inside parentheses, what follows "(" or ";" is still the author list ("(Le Morvan", "(Haydari & Yılmaz")
    cut = max(head.rfind("("), head.rfind(";"))
    if cut >= 0 and len(head) - cut <= 40 and ")" not in head[cut:] and re.search(r"\d{4}", text[start:end]):
        head = head[:cut]
    head = _LEAD_NOISE.sub("", head)
    words = _WORD.findall(head[-100:])
    if not words:
        return "descriptive", "no words before"
    last = words[-1]
    if _name_like(last):
        return "attributional", f"name before: {last}"
    if last.lower() in KIND_NOUNS and len(words) >= 2:
        prev = words[-2]
        if _name_like(prev) or (prev[:1].isupper() and prev.lower() not in {"the", "a", "an", "this", "our"}):
            return "attributional", f"name + kind noun: {prev} {last}"
    # a run of capitalised words inside a sentence ("the Moral Machine experiment (…)")
    run = 0
    scan = words[:-1] if last.lower() in KIND_NOUNS else words
    for i, w in enumerate(reversed(scan)):
        if i > 0 and w.endswith("."):
            break  # the previous sentence ended here: what follows starts a sentence
        if w[:1].isupper() and w not in GENERIC_ACRONYMS and w.rstrip("s") not in GENERIC_ACRONYMS:
            run += 1
        else:
            break
    if run >= 1:
        k = len(words) - (1 if last.lower() in KIND_NOUNS else 0) - run
        first_of_run = words[k]
        idx = head.rfind(first_of_run)
        before_run = head[:idx]
        sentence_start = (
            not before_run.strip() or bool(_SENT_END.search(before_run)) or before_run.rstrip().endswith("\n")
        )
        if not sentence_start and (run >= 2 or first_of_run not in {"In", "The", "We", "This", "Our", "For"}):
            return "attributional", f"capitalised name: {' '.join(words[k : k + run])}"
    return "descriptive", "no name before the citation"


# ---- judge model role ------------------------------------------------------------------------------------------
JUDGE_PROMPT = """Decide whether a citation in a scientific paper credits the *name* of something the cited work \
introduced: a method, model, dataset, benchmark, tool or product. Such names are usually proper nouns or \
acronyms written right before the citation, e.g. "we fine-tune BERT [4]" or "on the ImageNet dataset (Deng \
et al., 2009)". A citation that supports a statement, or describes what earlier work found or did, without \
naming something it introduced, does not count, e.g. "attention improves translation (Bahdanau et al., 2015)".

Answer with one word: Yes if the citation credits such a name, No otherwise.

Context: {context}
Citation: {citation}
Answer:"""


def judge_prompt(ctx: Context) -> str:
    return JUDGE_PROMPT.format(context=ctx.text(), citation=ctx.citation)


def read_judge_answer(answer: str) -> CitationType | None:
    a = answer.strip().lower().lstrip("*\"' ")
    if a.startswith("yes"):
        return "attributional"
    if a.startswith("no"):
        return "descriptive"
    return None


class JudgeClassifier:
    """A judge-model role: `ask(prompt) -> answer` is any backend (a closure over a model call); `model` names it
    in the cache key and the stored decisions."""

    def __init__(self, ask: Callable[[str], str], model: str, ws: Workspace | None = None) -> None:
        self.ask = ask
        self.model = model
        self.ws = ws
        self.calls = 0
        self.cached = 0
        self.unreadable = 0

    def classify(self, text: str, start: int, end: int, *, paper_id: str = "") -> CitationType | None:
        ctx = citation_context(text, start, end)
        prompt = judge_prompt(ctx)
        key = hashlib.sha256(f"{self.model}\n{prompt}".encode()).hexdigest()
        if self.ws is not None:
            row = self.ws.db.execute("SELECT answer FROM cloze_type_judgement WHERE key=?", (key,)).fetchone()
            if row is not None:
                self.cached += 1
                return read_judge_answer(row[0])
        answer = self.ask(prompt)
        self.calls += 1
        decision = read_judge_answer(answer)
        if decision is None:
            self.unreadable += 1
        if self.ws is not None:
            self.ws.db.execute(
                "INSERT OR REPLACE INTO cloze_type_judgement VALUES (?,?,?,?,?,?,?,?,?)",
                (key, self.model, paper_id, ctx.citation, ctx.text(), prompt, answer, decision, now_iso()),
            )
        return decision


def judgements(ws: Workspace, model: str | None = None) -> list[dict[str, object]]:
    """Stored judge decisions for review (all models when None)."""
    sql = "SELECT * FROM cloze_type_judgement" + (" WHERE model=?" if model else "") + " ORDER BY at, key"
    return [dict(r) for r in ws.db.execute(sql, (model,) if model else ())]


SCALAR_TYPES: dict[str, CitationType] = {"method": "attributional", "others": "descriptive"}
