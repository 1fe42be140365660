"""From a sample to the exact prompt a model receives: probes, retrieval, length instruction, budget fitting.

`prepare_prompt` is the one place where the runner's options (context length, output reserve, probe, RAG,
overflow policy) meet the round's templates. It always renders through `rounds.prompts.render_prompt`, also
after every cut, so the text that is counted is the text that is sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from academiceval.errors import ConfigError
from academiceval.models.rag import RagConfig, Ranked, chunk_sample, retrieve, retrieve_text, split_tokens
from academiceval.models.registry import tokenizer_for_model
from academiceval.models.tokenize import Tokenizer, load_tokenizer
from academiceval.models.truncate import PROTECTED_FIELDS, Fitter, Parts
from academiceval.rounds.choice import choice_item, fit_choice, render_choice
from academiceval.rounds.document_qa import DOCUMENT_FIELD, INSTRUCTION_FIELD, document_port
from academiceval.rounds.prompts import render_prompt
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample
from academiceval.store.tasks import task_spec

Probe = Literal["title-only", "no-context"]
PROBES: tuple[str, ...] = ("title-only", "no-context")
OnOverflow = Literal["truncate", "skip"]


class PreparedPrompt(BaseModel):
    """The prompt for one sample and an exact account of how it was made to fit."""

    sample_id: str = ""
    prompt: str
    prompt_sha256: str
    input_tokens: int  # counted with `tokenizer`, including the backend's fixed prompt wrapping
    full_tokens: int = 0  # the same count before any cut
    tokens_cut: int = 0  # full_tokens - input_tokens
    budget: int | None = None  # context length - output tokens (None: no limit known)
    policy: str = "none"  # "none" or the cuts applied in order, e.g. "demos-dropped+body-tail-cut"
    skipped: bool = False
    reason: str | None = None
    demos_kept: int = 0
    demos_dropped: int = 0
    citations_dropped: int = 0
    chunks_dropped: int = 0
    probe: str | None = None
    variant: str | None = None
    length_words: int | None = None
    words_cut: int = 0  # L-Eval items: words cut from the document (L-Eval's own unit)
    tokenizer: dict[str, Any] = Field(default_factory=dict)
    retrieved: list[dict[str, Any]] = Field(default_factory=list)  # chunk id, source, score, rank (RAG only)
    # texts of the retrieved chunks in rank order (RAG only): what a baseline reads instead of the full inputs
    retrieved_texts: list[str] = Field(default_factory=list, exclude=True)


def _render(sample: Sample, parts: Parts, *, variant: str | None, templates_dir: Any, length_words: int | None) -> str:
    view = sample.model_copy(update={"fields": parts.fields, "demos": parts.demos, "citations": parts.citations})
    return render_prompt(
        view,
        variant=variant,
        templates_dir=templates_dir,
        retrieved=parts.retrieved,
        length_words=length_words,
    )


def _sha256(text: str) -> str:
    return sha256_hex(text)


def probe_parts(sample: Sample, probe: str) -> tuple[Parts | None, str | None]:
    """The inputs a probe leaves, or (None, reason) when the probe does not apply to the task.

    title-only: every input field emptied except the title (AcademicEval's memorisation check; meaningless for
    the title task, whose label is the title). no-context: the paper content is emptied, the short required
    fields (title/abstract) stay; demos and citations go.
    """
    if probe == "title-only":
        title = sample.fields.get("title", "")
        title_is_label = task_spec(sample.task).label_source == "title"
        if title_is_label or not title:
            why = "the title is the label" if title_is_label else "the sample has no title field"
            return None, f"probe title-only does not apply to {sample.task} samples ({why})"
        return Parts(fields={k: (v if k == "title" else "") for k, v in sample.fields.items()}), None
    if probe == "no-context":
        fields = {k: (v if k in PROTECTED_FIELDS else "") for k, v in sample.fields.items()}
        return Parts(fields=fields), None
    raise ConfigError(f"unknown probe {probe!r}", source="--probe", hint="use title-only or no-context")


def prepare_prompt(
    sample: Sample,
    *,
    tokenizer: Tokenizer | str | None = None,
    context_length: int | None,
    max_output_tokens: int,
    templates_dir: str | Path | None = None,
    variant: str | None = None,
    rag: RagConfig | dict[str, Any] | str | None = None,
    probe: str | None = None,
    length_instruction: bool = False,
    on_overflow: OnOverflow = "truncate",
    model: str | None = None,
) -> PreparedPrompt:
    """Render `sample` for a model with `context_length` tokens, leaving `max_output_tokens` for the answer.

    Cuts only paper content (see `truncate`); with `on_overflow="skip"` a too-long sample is marked skipped
    instead (its full prompt and count are still returned, for `--count-tokens`). `tokenizer` may be a
    `Tokenizer` or a spec; when it is None the model spec picks one (tiktoken for `openai/...`, the checkpoint's
    own for a local `hf/...`), else the bert-base-uncased estimator.
    """
    rag = RagConfig.coerce(rag)
    if on_overflow not in ("truncate", "skip"):
        raise ConfigError(f"unknown overflow policy {on_overflow!r}", source="--on-overflow", hint="truncate or skip")
    if probe is not None and rag is not None:
        raise ConfigError("a probe cannot be combined with retrieval", source="--probe/--rag")
    tok = load_tokenizer(tokenizer if tokenizer is not None else tokenizer_for_model(model))
    length_words = len(sample.label.split()) if length_instruction else None
    budget = None if context_length is None else context_length - max_output_tokens
    if budget is not None and budget <= 0:
        raise ConfigError(
            f"context length {context_length} leaves no room after {max_output_tokens} output tokens",
            source="--context-length",
        )
    base = PreparedPrompt(
        sample_id=sample.sample_id,
        prompt="",
        prompt_sha256="",
        input_tokens=0,
        budget=budget,
        probe=probe,
        variant=variant,
        length_words=length_words,
        tokenizer=tok.identity(),
    )

    kind = task_spec(sample.task).prompt_kind
    if kind == "document_qa" and rag is not None:
        # long-document QA (L-Eval): the document's own chunks retrieved for the instruction replace the document
        # (L-Eval's retrieval baselines); the family's prompt and document cut then apply as without retrieval
        ranked = retrieve_text(
            sample.fields.get(DOCUMENT_FIELD, ""),
            sample.fields.get(INSTRUCTION_FIELD, ""),
            rag,
            tok,
            source=DOCUMENT_FIELD,
        )
        _record_retrieved(base, ranked)
        base.variant = "rag"
        view = sample.model_copy(
            update={"fields": {**sample.fields, DOCUMENT_FIELD: "\n\n".join(r.chunk.text for r in ranked)}}
        )
        return _prepare_document(view, tok, budget, length_instruction, on_overflow, base)
    if kind != "writing":
        if probe is not None or rag is not None:  # their inputs are fixed by the task's protocol
            why = f"{'probe ' + probe if probe else 'retrieval'} does not apply to {sample.task} items"
            return base.model_copy(update={"skipped": True, "reason": why, "policy": "not_applicable"})
        if kind == "choice":
            return _prepare_choice(sample, tok, budget, templates_dir, on_overflow, base)
        return _prepare_document(sample, tok, budget, length_instruction, on_overflow, base)

    parts = Parts(fields=dict(sample.fields), demos=list(sample.demos), citations=list(sample.citations))
    if probe is not None:
        probed, why = probe_parts(sample, probe)
        if probed is None:
            return base.model_copy(update={"skipped": True, "reason": why, "policy": "not_applicable"})
        parts = probed
        variant = variant or "plain"
    if rag is not None:
        ranked = retrieve(sample, rag, tok, templates_dir=templates_dir)
        _record_retrieved(base, ranked)
        # The retrieved chunks replace the long inputs: the template shows them instead of body/demos/citations.
        fields = {k: (v if k in PROTECTED_FIELDS else "") for k, v in sample.fields.items()}
        parts = Parts(fields=fields, retrieved=[r.chunk.text for r in ranked])
        variant = "rag"
    base.variant = variant

    def render(p: Parts) -> str:
        return _render(sample, p, variant=variant, templates_dir=templates_dir, length_words=length_words)

    fitter = Fitter(render, tok, budget if budget is not None else 1 << 62)
    if budget is None or on_overflow == "skip":
        prompt, tokens = fitter.measure(parts)
        update: dict[str, Any] = {"prompt": prompt, "input_tokens": tokens, "full_tokens": tokens}
        update["demos_kept"] = len(parts.demos)
        if budget is not None and tokens > budget:
            update.update(_skipped_over_budget(tokens, budget))
        return _finish(base, update)

    fit = fitter.fit(parts)
    update = {
        "prompt": fit.prompt,
        "input_tokens": fit.input_tokens,
        "full_tokens": fit.full_tokens,
        "tokens_cut": fit.tokens_cut,
        "policy": fit.policy,
        "demos_kept": len(fit.parts.demos),
        "demos_dropped": fit.demos_dropped,
        "citations_dropped": fit.citations_dropped,
        "chunks_dropped": fit.chunks_dropped,
    }
    if not fit.fits:
        update.update(
            skipped=True,
            reason=(
                f"the parts that are never cut (instruction, title, abstract, headers) need {fit.input_tokens} "
                f"tokens, more than the budget {budget}"
            ),
        )
    return _finish(base, update)


def retrieval_chunks(
    sample: Sample, rag: RagConfig, *, tokenizer: Tokenizer | str | None = None, model: str | None = None
) -> list[tuple[str, int]]:
    """(text, tokens) of every chunk `prepare_prompt` ranks for `sample` under `rag` (what a dense retriever
    embeds), cut exactly as it cuts them: the document of a long-document QA item, the own inputs of a writing
    sample, nothing for the other kinds (retrieval does not apply to them)."""
    tok = load_tokenizer(tokenizer if tokenizer is not None else tokenizer_for_model(model))
    kind = task_spec(sample.task).prompt_kind
    if kind == "document_qa":
        return split_tokens(sample.fields.get(DOCUMENT_FIELD, ""), tok, rag.chunk_size, rag.chunk_overlap)
    if kind != "writing":
        return []
    return [(c.text, c.tokens) for c in chunk_sample(sample, tok, size=rag.chunk_size, overlap=rag.chunk_overlap)]


def _record_retrieved(base: PreparedPrompt, ranked: list[Ranked]) -> None:
    """What retrieval chose, on the prepared prompt: chunk ids, sources, scores and ranks; the texts in rank order."""
    base.retrieved = [
        {"chunk_id": r.chunk.chunk_id, "source": r.chunk.source, "score": round(r.score, 6), "rank": r.rank}
        for r in ranked
    ]
    base.retrieved_texts = [r.chunk.text for r in ranked]


class _ChoiceCounter:
    """The tokenizer as `rounds.choice.fit_choice` uses it (count; longest prefix within n tokens)."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self.name = tok.name

    def count(self, text: str) -> int:
        return self.tok.count(text)

    def prefix(self, text: str, n: int) -> str:
        return self.tok.truncate_tail(text, n)


def _prepare_choice(
    sample: Sample,
    tok: Tokenizer,
    budget: int | None,
    templates_dir: str | Path | None,
    on_overflow: str,
    base: PreparedPrompt,
) -> PreparedPrompt:
    """Multiple choice: the task's template on the family's view of the item (`rounds.choice`); over budget, only
    content is cut (the context around its anchor first, then every option evenly), never an instruction, the
    question or an option's key (`rounds.choice.fit_choice`)."""
    item = choice_item(sample)
    prompt = render_choice(item, templates_dir=templates_dir)
    full = tok.count_prompt(prompt)
    if budget is None or full <= budget or on_overflow == "skip":
        update: dict[str, Any] = {"prompt": prompt, "input_tokens": full, "full_tokens": full}
        if budget is not None and full > budget:
            update.update(_skipped_over_budget(full, budget))
        return _finish(base, update)
    fitted = fit_choice(item, budget - tok.prompt_overhead, _ChoiceCounter(tok), templates_dir=templates_dir)
    n = tok.count_prompt(fitted.prompt)
    update = {
        "prompt": fitted.prompt,
        "input_tokens": n,
        "full_tokens": full,
        "tokens_cut": max(0, full - n),
        "policy": fitted.policy,
    }
    if fitted.over_budget:
        update.update(skipped=True, reason=f"the instructions alone need more than the budget {budget}")
    return _finish(base, update)


def _prepare_document(
    sample: Sample, tok: Tokenizer, budget: int | None, length_instruction: bool, on_overflow: str, base: PreparedPrompt
) -> PreparedPrompt:
    """Long-document QA: the family's prompt (`rounds.document_qa`; the length instruction when asked); over
    budget, only the document is cut, the family's way (L-Eval: words from the right, codeU from the left,
    250-word steps), to the budget left after the rest of the prompt."""
    document_prompt = document_port(sample)
    prompt, meta = document_prompt(sample, length_instruction=length_instruction)
    full = tok.count_prompt(prompt)
    update: dict[str, Any] = {"prompt": prompt, "input_tokens": full, "full_tokens": full}
    update["length_words"] = meta.get("length_words")
    if budget is None or full <= budget:
        return _finish(base, update)
    if on_overflow == "skip":
        return _finish(base, {**update, **_skipped_over_budget(full, budget)})
    empty = sample.model_copy(update={"fields": {**sample.fields, DOCUMENT_FIELD: ""}})
    rest = tok.count_prompt(document_prompt(empty, length_instruction=length_instruction)[0])
    if budget - rest <= 0:
        why = f"the prompt without its document needs {rest} tokens, more than the budget {budget}"
        return _finish(base, {**update, "skipped": True, "reason": why})
    prompt, meta = document_prompt(
        sample, length_instruction=length_instruction, budget_tokens=budget - rest, count=tok.count
    )
    n = tok.count_prompt(prompt)
    update = {**update, "prompt": prompt, "input_tokens": n, "tokens_cut": max(0, full - n)}
    update.update(policy=meta.get("policy", "document-cut"), words_cut=meta.get("words_cut", 0))
    if n > budget:
        update.update(skipped=True, reason=f"still {n} tokens after the document cut (budget {budget})")
    return _finish(base, update)


def _skipped_over_budget(tokens: int, budget: int) -> dict[str, Any]:
    """What `on_overflow="skip"` records on a prompt over its budget (every task family says it the same way)."""
    return {"skipped": True, "policy": "skip", "reason": f"input of {tokens} tokens exceeds the budget {budget}"}


def _finish(base: PreparedPrompt, update: dict[str, Any]) -> PreparedPrompt:
    out = base.model_copy(update=update)
    out.prompt_sha256 = _sha256(out.prompt)
    return out
