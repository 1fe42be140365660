"""Baselines that need no model: a floor for every leaderboard.

- `lead`: the opening of the available text, cut to the task's target length (the classic lead-k summary).
- `demo-copy`: the label of the demonstration most similar to the target's input; measures how much a
  setting's demos alone already "answer" the task. Without demos it falls back to `lead` (recorded).
- `extractive`: the sentences that best match the task's retrieval query (BM25), up to the target length,
  kept in document order.

They read the sample's fields, not the prompt, so truncation and templates do not change their output.

Multiple-choice baselines (any task of prompt kind "choice": the family's view of the item, `rounds.choice`):
- `random-choice`: a uniformly random option, seeded per item (seed + sample id), so reruns agree.
- `lexical-choice`: the option whose text best matches (BM25) the words around the item's anchor (the cloze
  mask), or the question when the item has no anchor.
- `<guesser>-choice`: the blind guessers of `models.choice_guessers` (`title-match`, `title-overlap`, `bow`,
  `longest`, `newest`, `centroid`; `lexical` is `lexical-choice`): surface cues only, the floor a long-context
  reading task must stay near (the cloze build checks its levels with them).
They answer in the protocol's format, `<answer>KEY</answer>` with the option's key (an index or a letter).
- `first-choice`: always the first option (`<answer>0</answer>`, `<answer>A</answer>` for a task whose options
  are letters, such as ElaipBench's): the floor a position bias alone reaches; its accuracy is the share of golds
  that are the first option, which a test can compute from the round.

L-Eval (`leval-lead`, reading the prompt only, as L-Eval's own reference points would): option "A" for
multiple choice, else the first N words of the document, N from the length instruction (60 without one) —
`leval_lead` (what `academiceval leval run --model baseline/leval-lead` runs too: it is `run` + `export`).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models import citation_baselines as cb
from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.choice_guessers import PER_ITEM, SCORERS, item_view, pick
from academiceval.models.errors import BackendError
from academiceval.models.rag.retrievers import BM25Retriever, TfidfRetriever, top_k
from academiceval.models.truncate import content_field
from academiceval.rounds.choice import ChoiceItem, choice_item
from academiceval.rounds.prompts import retrieval_query
from academiceval.rounds.tokens import count
from academiceval.store.models import Sample
from academiceval.store.tasks import task_spec, task_specs

BASELINES = (
    "lead",
    "demo-copy",
    "extractive",
    "cite-copy",
    "cite-invent",
    "random-choice",
    "lexical-choice",
    "leval-lead",
    "first-choice",
    *(f"{g}-choice" for g in PER_ITEM if g != "lexical"),
)
# cite-*: models.citation_baselines; <guesser>-choice: the blind guessers of models.choice_guessers
GUESSER_BASELINES = {f"{g}-choice": g for g in PER_ITEM if g != "lexical"}
CHOICE_BASELINES = ("random-choice", "lexical-choice", *GUESSER_BASELINES)
# what each baseline does, in one line: `academiceval models` lists these, `run --help` names them (a test keeps both
# in step with BASELINES)
BASELINE_SUMMARIES = {
    "lead": "the opening of the paper's text, cut to the task's target length",
    "demo-copy": "the label of the most similar demonstration (lead when there is none)",
    "extractive": "the sentences best matching the task's query (BM25), in document order",
    "cite-copy": "Related Work: cites every listed paper by its [n] and nothing else (citation precision/recall 1)",
    "cite-invent": "Related Work: cites only works outside the given list (precision 0, many citation-unlisted)",
    "random-choice": "multiple choice (citation cloze, ElaipBench): a seeded random option",
    "lexical-choice": "multiple choice: the option best matching the words around the mask (BM25)",
    "leval-lead": "L-Eval: option A, else the document's first words (L-Eval's own reference point)",
    "first-choice": "multiple choice: always the first option (the position-bias floor)",
    # the blind guessers a cloze round must hold at chance (families/cloze: checked inside the build)
    "title-match-choice": "citation cloze, blind: the option whose title holds the word just before the mask",
    "title-overlap-choice": "citation cloze, blind: the option whose title shares most words with the mask's window",
    "bow-choice": "citation cloze, blind: the option sharing most words with the mask's window (bag of words)",
    "longest-choice": "multiple choice, blind: the longest option",
    "newest-choice": "citation cloze, blind: the most recently published option",
    "centroid-choice": "multiple choice, blind: the option most like the others (never reads the paper)",
}
MASK_WINDOW_WORDS = 50  # words each side of the anchor that form the lexical baseline's query
BASELINE_VERSION = "1"
MIN_SENTENCE_WORDS = 4

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def input_tokens(sample: Sample) -> int:
    """What a baseline reads, in BERT WordPiece tokens (the round's own unit): its input fields, demos and cited
    papers. A baseline sends no prompt, but its record should still say how much text it had."""
    parts = [*sample.fields.values()]
    for d in sample.demos:
        parts += [*d.fields.values(), d.label]
    parts += [f"{c.title} {c.abstract}" for c in sample.citations]
    return count("\n".join(p for p in parts if p))


class BaselineError(BackendError):
    code = "baseline"


def split_sentences(text: str) -> list[str]:
    """Sentences of paper text (regex on end punctuation + capital; no model or download needed)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if para:
            out.extend(s.strip() for s in _SENTENCE_END.split(para) if s.strip())
    return out


def cut_words(text: str, n: int) -> str:
    words = text.split()
    return " ".join(words[:n])


def source_text(sample: Sample) -> tuple[str, str]:
    """(field name, text) a baseline draws from: the abstract for titles, else the paper body."""
    body = content_field(sample.fields)
    order = ["abstract", body] if task_spec(sample.task).label_source == "title" else [body, "abstract"]
    for name in order:
        if name and sample.fields.get(name, "").strip():
            return name, sample.fields[name]
    for name, value in sample.fields.items():
        if value.strip():
            return name, value
    return "", ""


def input_text(fields: dict[str, str]) -> str:
    return "\n\n".join(v for v in fields.values() if v)


class BaselineBackend:
    """Backend protocol implementation for `baseline/<lead|demo-copy|extractive>`."""

    name = "baseline"
    capabilities = Capabilities(reads_sample=True)  # answers come from the sample's fields, not the prompt

    def __init__(
        self,
        model: str,
        *,
        similarity: str = "tfidf",
        target_words: dict[str, int] | None = None,
        templates_dir: str | None = None,
        seed: int = 0,
    ) -> None:
        if model not in BASELINES:
            raise ConfigError(f"unknown baseline {model!r}", source="--model", hint=f"one of {', '.join(BASELINES)}")
        if similarity not in ("tfidf", "bm25"):
            raise ConfigError(f"unknown demo similarity {similarity!r}", hint="tfidf or bm25")
        self.model = model
        self.seed = seed
        self.similarity = similarity
        # target lengths in words, from the task requirements (the writing tasks' `TaskSpec.target_words`)
        self.target_words = {s.name: s.target_words for s in task_specs("writing")} | (target_words or {})
        self.templates_dir = templates_dir

    def cache_identity(self) -> dict[str, Any]:
        out: dict[str, Any] = {"backend": "baseline", "model": self.model, "version": BASELINE_VERSION}
        if self.model == "demo-copy":
            out["similarity"] = self.similarity
        if self.model in CHOICE_BASELINES:
            out["seed"] = self.seed
            out["window_words"] = MASK_WINDOW_WORDS
        else:
            out["target_words"] = dict(sorted(self.target_words.items()))
        return out

    async def aclose(self) -> None:
        return None

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion:
        if self.model in ("leval-lead", "first-choice"):  # prompt-only, cheap: no thread needed
            text = leval_lead(prompt) if self.model == "leval-lead" else first_choice(sample)
            return Completion(
                text=text, output_tokens=len(text.split()), finish_reason="stop", raw={"baseline": self.model}
            )
        # cheap but CPU-bound (BM25 over a paper's sentences): keep it off the event loop
        if self.model in CHOICE_BASELINES:
            return await asyncio.to_thread(self.choose, sample)
        return await asyncio.to_thread(self.run, sample)

    def choose(self, sample: Sample | None) -> Completion:
        """The two multiple-choice baselines, on the family's view of the sample (`rounds.choice.choice_item`)."""
        if sample is None:
            raise BaselineError(f"baseline/{self.model} needs the sample, not only a prompt", source="models.baselines")
        return self.choose_item(choice_item(sample))

    def choose_item(self, item: ChoiceItem) -> Completion:
        if len(item.options) < 2:
            raise BaselineError(
                f"baseline/{self.model} found fewer than 2 options in the item", source="models.baselines"
            )
        if self.model == "random-choice":
            k, raw = random_choice(len(item.options), seed=self.seed, key=item.item_id), {}
        elif self.model in GUESSER_BASELINES:
            name = GUESSER_BASELINES[self.model]
            scores = SCORERS[name](item_view(item))
            k = pick(scores, len(item.options), seed=self.seed, key=f"{item.item_id}:{name}")
            raw = {"scores": None if scores is None else [round(float(x), 4) for x in scores]}
        else:
            k, scores = lexical_choice(item)
            raw = {"scores": [round(float(x), 4) for x in scores]}
        return Completion(
            text=f"<answer>{item.options[k].key}</answer>",
            output_tokens=3,
            finish_reason="stop",
            raw={"baseline": self.model, **raw},
        )

    def run(self, sample: Sample | None) -> Completion:
        if sample is None:
            raise BaselineError(f"baseline/{self.model} needs the sample, not only a prompt", source="models.baselines")
        n = self.target_words.get(sample.task, 200)
        if self.model == "lead":
            text, raw = self._lead(sample, n)
        elif self.model == "demo-copy":
            text, raw = self._demo_copy(sample, n)
        elif self.model.startswith("cite-"):
            text, raw = (cb.cite_copy if self.model == "cite-copy" else cb.cite_invent)(sample), {}
        else:
            text, raw = self._extractive(sample, n)
        raw = {"baseline": self.model, "target_words": n, **raw}
        return Completion(
            text=text,
            input_tokens=input_tokens(sample),
            output_tokens=len(text.split()),
            finish_reason="stop",
            raw=raw,
        )

    # -- the three baselines ----------------------------------------------------------------------------------

    def _lead(self, sample: Sample, n: int) -> tuple[str, dict[str, Any]]:
        name, text = source_text(sample)
        return cut_words(text, n), {"source_field": name}

    def _demo_copy(self, sample: Sample, n: int) -> tuple[str, dict[str, Any]]:
        demos = [d for d in sample.demos if d.label.strip()]
        if not demos:
            text, raw = self._lead(sample, n)
            return text, {**raw, "fallback": "lead", "fallback_reason": "the sample has no demonstrations"}
        retriever = TfidfRetriever() if self.similarity == "tfidf" else BM25Retriever()
        scores = retriever.scores(input_text(sample.fields), [input_text(d.fields) for d in demos])
        best = top_k(scores, 1)[0]
        chosen = demos[best]
        return chosen.label.strip(), {
            "demo_arxiv_id": chosen.arxiv_id,
            "demo_index": sample.demos.index(chosen),
            "similarity": self.similarity,
            "score": round(float(scores[best]), 6),
        }

    def _extractive(self, sample: Sample, n: int) -> tuple[str, dict[str, Any]]:
        name, text = source_text(sample)
        sentences = [s for s in split_sentences(text) if len(s.split()) >= MIN_SENTENCE_WORDS]
        if not sentences:
            return cut_words(text, n), {"source_field": name, "sentences": 0}
        query = retrieval_query(sample, templates_dir=self.templates_dir)
        scores = BM25Retriever().scores(query, sentences)
        chosen: list[int] = []
        used = 0
        for i in top_k(scores, len(sentences)):
            words = len(sentences[i].split())
            if used + words <= n:
                chosen.append(i)
                used += words
            if used >= n - MIN_SENTENCE_WORDS:
                break
        if not chosen:  # every sentence is longer than the target (titles): the best one, cut
            best = top_k(scores, 1)[0]
            return cut_words(sentences[best], n), {"source_field": name, "sentences": [best]}
        chosen.sort()
        return " ".join(sentences[i] for i in chosen), {"source_field": name, "sentences": chosen}


# ---- multiple-choice baselines -----------------------------------------------------------------------------------
def random_choice(n: int, *, seed: int = 0, key: str = "") -> int:
    """A uniformly random option index in 0..n-1, fixed by (seed, item key)."""
    import random

    return random.Random(f"{seed}:{key}").randrange(n)


def anchor_context(context: str, anchor: str, words: int = MASK_WINDOW_WORDS) -> str:
    """The words around the anchor (the context's opening when the anchor is missing)."""
    at = context.find(anchor) if anchor else -1
    if at < 0:
        return " ".join(context.split()[: 2 * words])
    before = context[:at].split()[-words:]
    after = context[at + len(anchor) :].split()[:words]
    return " ".join(before + after)


def lexical_choice(item: ChoiceItem) -> tuple[int, list[float]]:
    """The option whose text scores highest under BM25 for the words around the anchor, or for the question when
    the item has no anchor (ties: the lowest index)."""
    query = anchor_context(item.context, item.anchor) if item.anchor else item.question
    texts = [o.text for o in item.options]
    scores = BM25Retriever().scores(query, texts)
    best = max(range(len(texts)), key=lambda i: (float(scores[i]), -i))
    return best, [float(x) for x in scores]


# ---- L-Eval and first-option baselines -------------------------------------------------------------------------
LEVAL_LEAD_WORDS = 60  # without a length instruction
_LEVAL_CHOICE_SYSTEM = ("Exactly one option is correct", "One or more options may be correct")


def leval_lead(prompt: str) -> str:
    """L-Eval's model-free reference point from its prompt (`families.leval.items` wording): "A" for multiple choice,
    else the document's first N words (N from "Aim for about N words.", else 60)."""
    if any(marker in prompt for marker in _LEVAL_CHOICE_SYSTEM):
        return "A"
    doc = prompt.split("Document:\n", 1)[-1].split("\n\nInstruction:")[0].split("\n\nQuestion:")[0]
    n = int(prompt.rsplit("Aim for about ", 1)[1].split()[0]) if "Aim for about " in prompt else LEVAL_LEAD_WORDS
    return " ".join(doc.split()[:n])


def first_choice(sample: Sample | None) -> str:
    """The first option in the `<answer>` format: "A" for a task whose options are letters, else the index 0. The
    form comes from the task's spec, never from the gold label (a baseline must not read the answer)."""
    lettered = sample is not None and task_spec(sample.task).choice_form == "letters"
    return "<answer>A</answer>" if lettered else "<answer>0</answer>"
