"""Turning a sample into the prompt actually sent, with the run's options bound once.

`academiceval.models.prepare.prepare_prompt` owns rendering, truncation with the model's tokenizer and
retrieval; a run without budget, retrieval, probe, length instruction or explicit tokenizer renders the round's
templates directly with `rounds.prompts.render_prompt` (the same text, without counting tokens the server
counts anyway). Which one ran is recorded in `run.json` (`prompt_preparation`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from academiceval import __version__
from academiceval.models.prepare import PreparedPrompt, prepare_prompt
from academiceval.models.rag import RagConfig
from academiceval.models.registry import tokenizer_for_model
from academiceval.models.tokenize import load_tokenizer
from academiceval.rounds.prompts import render_prompt
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample
from academiceval.store.tasks import find_spec


def length_instruction_for(option: bool | None, tasks: set[str] | frozenset[str]) -> bool:
    """The length instruction a run gives: the option when set, else the protocol default of its tasks (L-Eval's
    LIE on its open-ended items: `TaskSpec.length_instruction`); False turns it off, True on for every task."""
    if option is not None:
        return option
    return any((spec := find_spec(t)) is not None and spec.length_instruction for t in tasks)


_MEMO_JSON = json.JSONEncoder(default=str)  # one encoder for every memo (json.dumps builds one per call)


@dataclass
class Prepared:
    prompt: str
    prompt_sha256: str
    input_tokens: int = 0
    tokens_cut: int = 0
    truncation: str = "none"
    skipped: bool = False  # too long and --on-overflow skip
    reason: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    retrieved_texts: list[str] = field(default_factory=list)  # RAG: chunk texts in rank order (not memoised)

    def memo_json(self) -> str:
        """Everything but the prompt text (the response cache's prompt memo)."""
        d = {
            "prompt_sha256": self.prompt_sha256,
            "input_tokens": self.input_tokens,
            "tokens_cut": self.tokens_cut,
            "truncation": self.truncation,
            "skipped": self.skipped,
            "reason": self.reason,
            "extras": self.extras,
        }
        return _MEMO_JSON.encode(d)  # = json.dumps(d, default=str)

    @classmethod
    def from_memo(cls, blob: str) -> Prepared:
        # pydantic-core's parser: the same values as json.loads at a fraction of the cost (one per replayed sample)
        return cls(prompt="", **from_json(blob))


# the code and templates a prepared prompt depends on: part of the memo fingerprint, so an edit invalidates it
_PIPELINE = (
    "academiceval.models.prepare",
    "academiceval.models.truncate",
    "academiceval.models.tokenize",
    "academiceval.models.rag",
    "academiceval.rounds.prompts",
    "academiceval.runs.prepare",
)


@functools.lru_cache(maxsize=16)
def _fingerprint_hasher(fingerprint: bytes) -> Any:
    return hashlib.sha256(fingerprint)


def _digest_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _module_files(name: str) -> list[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return []
    origin = Path(spec.origin)
    if origin.name == "__init__.py":
        return sorted(origin.parent.rglob("*.py"))
    return [origin]


class PromptPreparer:
    """Binds the run-wide preparation options once; `__call__(sample, max_tokens)` → Prepared."""

    def __init__(
        self,
        *,
        context_length: int | None = None,
        tokenizer: str | None = None,
        on_overflow: str = "truncate",
        rag: RagConfig | dict[str, Any] | str | None = None,
        probe: str | None = None,
        length_instruction: bool = False,
        model: str | None = None,
        templates_dir: str | Path | None = None,
        force_fitting: bool = False,
        prompt_suffix: str | None = None,
    ) -> None:
        self.rag = RagConfig.coerce(rag)
        self.prompt_suffix = prompt_suffix or None  # appended after rendering and fitting (a preset's CoT line)
        self.context_length, self.tokenizer, self.on_overflow = context_length, tokenizer, on_overflow
        self.probe, self.length_instruction, self.model = probe, length_instruction, model
        self.templates_dir = templates_dir
        self.force_fitting = force_fitting  # --count-tokens: always count, even without a budget
        # what decides the prompt besides the sample (the prompt memo's fingerprint); None means "not asked for"
        given = {
            "context_length": context_length,
            "tokenizer": tokenizer,
            "on_overflow": on_overflow,
            "rag": self.rag.model_dump(exclude_none=True) if self.rag else None,
            "probe": probe,
            "length_instruction": length_instruction or None,
            "model": model,
            "prompt_suffix": self.prompt_suffix,
        }
        self.options = {k: v for k, v in given.items() if v is not None or k == "context_length"}
        self.name = "models.prepare.prepare_prompt" if self.needs_fitting else "rounds.prompts.render_prompt"

    @property
    def needs_fitting(self) -> bool:
        """Only budgets, retrieval, probes, a length instruction or an explicit tokenizer need `prepare_prompt`;
        otherwise the plain rendering is the same text, and counting tokens locally would only cost CPU (the
        server reports the real count)."""
        return self.force_fitting or any(
            (self.context_length, self.rag, self.probe, self.length_instruction, self.tokenizer)
        )

    def fingerprint(self) -> bytes:
        """What, besides the sample and the output length, decides the prepared prompt: renderer, options,
        template files and the pipeline's source code. Used to key the prompt memo."""
        templates = self.templates_dir
        if templates is None:
            spec = importlib.util.find_spec("academiceval.rounds.prompts")
            templates = Path(spec.origin).parent / "templates" if spec and spec.origin else None
        tpl_files = sorted(Path(templates).rglob("*")) if templates and Path(templates).is_dir() else []
        code = [f for m in _PIPELINE for f in _module_files(m)]
        doc = {
            "renderer": self.name,
            "options": self.options,
            "templates": _digest_files([f for f in tpl_files if f.is_file()]),
            "code": _digest_files(code),
            "version": __version__,
        }
        return json.dumps(doc, sort_keys=True, default=str).encode()

    def memo_key(self, fingerprint: bytes, sample: Sample, max_tokens: int, round_sha256: str | None = None) -> str:
        """Sample identity: (verified round manifest sha256, sample id) when known — a round's files are checked
        against its manifest before a run — else the digest of the sample's content."""
        if round_sha256:
            ident = f"{round_sha256}/{sample.sample_id}"
        else:
            ident = sha256_hex(sample.model_dump_json())
        h = _fingerprint_hasher(fingerprint).copy()  # = sha256(fingerprint + suffix), the long prefix hashed once
        h.update(f"|{ident}|{max_tokens}".encode())
        return h.hexdigest()

    def __call__(self, sample: Sample, max_tokens: int) -> Prepared:
        suffix = self.prompt_suffix or ""
        if not self.needs_fitting:
            prompt = render_prompt(sample, templates_dir=self.templates_dir) + suffix
            return Prepared(prompt=prompt, prompt_sha256=sha256_hex(prompt))
        tok: Any = self.tokenizer
        reserve = 0
        if suffix:  # appended after fitting: its tokens (+2 for a merge at the seam) are kept free of the budget
            tok = load_tokenizer(self.tokenizer if self.tokenizer is not None else tokenizer_for_model(self.model))
            reserve = tok.count(suffix) + 2
        out = prepare_prompt(
            sample,
            tokenizer=tok,
            context_length=self.context_length,
            max_output_tokens=max_tokens + reserve,
            templates_dir=self.templates_dir,
            rag=self.rag,
            probe=self.probe,
            length_instruction=self.length_instruction,
            on_overflow=self.on_overflow,
            model=self.model,
        )
        if suffix:
            out = out.model_copy(
                update={
                    "prompt": out.prompt + suffix,
                    "prompt_sha256": sha256_hex(out.prompt + suffix),
                    "input_tokens": tok.count_prompt(out.prompt + suffix),
                    "full_tokens": out.full_tokens + tok.count(suffix),
                }
            )
        return Prepared(
            prompt=out.prompt,
            prompt_sha256=out.prompt_sha256 or sha256_hex(out.prompt),
            input_tokens=out.input_tokens,
            tokens_cut=out.tokens_cut,
            truncation=out.policy or "none",
            skipped=out.skipped,
            reason=out.reason,
            extras=_extras(out),
            retrieved_texts=list(out.retrieved_texts),
        )


_EXTRA_KEYS = (
    "full_tokens",
    "demos_dropped",
    "citations_dropped",
    "chunks_dropped",
    "variant",
    "length_words",
    "words_cut",
)


def _extras(out: PreparedPrompt) -> dict[str, Any]:
    """What the record should say about how the prompt was made (beyond tokens and policy)."""
    extras: dict[str, Any] = {}
    for k in _EXTRA_KEYS:
        v = getattr(out, k)
        if v not in (None, 0, ""):
            extras[k] = v
    tok = out.tokenizer
    if tok.get("name"):
        extras["tokenizer"] = tok.get("name")
        if tok.get("fallback_reason"):
            extras["tokenizer_fallback"] = True
    if out.retrieved:
        extras["retrieved"] = out.retrieved
    return extras
