"""Turning a sample into the prompt actually sent: a thin adapter over the models area's `prepare_prompt`.

`academiceval.models.prepare.prepare_prompt` owns rendering, truncation with the model's tokenizer and
retrieval. When it is not installed the runner falls back to `rounds.prompts.render_prompt` (no truncation,
recorded as such in `run.json`), so a run never silently pretends to have truncated.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.rounds.models import Sample

# the original AcademicEval reserves these many output tokens per task (title, abstract, intro, related work)
DEFAULT_MAX_TOKENS: dict[str, int] = {"title": 32, "abstract": 512, "introduction": 1536, "related_work": 1024}


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
        return json.dumps(d, default=str)

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


def sha256_text(text: str) -> str:
    """The same hash as `rounds.prompts.prompt_sha256` (sha256 of the UTF-8 text)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _attr(obj: Any, *names: str, default: Any = None) -> Any:
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


class PromptPreparer:
    """Binds the run-wide preparation options once; `__call__(sample, max_tokens)` → Prepared."""

    def __init__(self, *, force_fitting: bool = False, **options: Any) -> None:
        # context_length=None is meaningful (no limit known); other None values mean "not asked for"
        self.options = {k: v for k, v in options.items() if v is not None or k == "context_length"}
        self.force_fitting = force_fitting  # --count-tokens: always count, even without a budget
        self._fn, self.name = self._resolve(self.needs_fitting)
        self._params = self._accepted_params(self._fn)
        self._base_kwargs: dict[str, Any] | None = None
        self._takes_max_tokens = True

    @property
    def needs_fitting(self) -> bool:
        """Only budgets, retrieval, probes, a length instruction or an explicit tokenizer need `prepare_prompt`;
        otherwise the plain rendering is the same text, and counting tokens locally would only cost CPU (the
        server reports the real count)."""
        o = self.options
        return self.force_fitting or any(
            o.get(k) for k in ("context_length", "rag", "probe", "length_instruction", "tokenizer")
        )

    @staticmethod
    def _resolve(fitting: bool) -> tuple[Callable[..., Any], str]:
        """Budgets, retrieval and probes go through `models.prepare`; otherwise the round's templates render the
        prompt directly (the same text, without counting tokens the server will count anyway)."""
        if fitting:
            from academiceval.models.prepare import prepare_prompt

            return prepare_prompt, "models.prepare.prepare_prompt"
        from academiceval.rounds.prompts import render_prompt

        return render_prompt, "rounds.prompts.render_prompt"

    @staticmethod
    def _accepted_params(fn: Callable[..., Any]) -> set[str] | None:
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return None
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return None
        return set(params)

    def fingerprint(self) -> bytes:
        """What, besides the sample and the output length, decides the prepared prompt: renderer, options,
        template files and the pipeline's source code. Used to key the prompt memo."""
        templates = self.options.get("templates_dir")
        if templates is None:
            spec = importlib.util.find_spec("academiceval.rounds.prompts")
            templates = Path(spec.origin).parent / "templates" if spec and spec.origin else None
        tpl_files = sorted(Path(templates).rglob("*")) if templates and Path(templates).is_dir() else []
        code = [f for m in _PIPELINE for f in _module_files(m)]
        doc = {
            "renderer": self.name,
            "options": {k: v for k, v in self.options.items() if k != "templates_dir"},
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
            ident = hashlib.sha256(sample.model_dump_json().encode()).hexdigest()
        h = _fingerprint_hasher(fingerprint).copy()  # = sha256(fingerprint + suffix), the long prefix hashed once
        h.update(f"|{ident}|{max_tokens}".encode())
        return h.hexdigest()

    def _kwargs(self, max_tokens: int) -> dict[str, Any]:
        base = self._base_kwargs
        if base is None:
            base = self._base_kwargs = self._check_kwargs()
        if self._takes_max_tokens:
            return {**base, "max_output_tokens": max_tokens}
        return base

    def _check_kwargs(self) -> dict[str, Any]:
        """The options the renderer accepts (computed once); an option it cannot honour is a ConfigError."""
        self._takes_max_tokens = self._params is None or "max_output_tokens" in self._params
        if self._params is None:
            return dict(self.options)
        unknown = {
            k for k, v in self.options.items() if k not in self._params and v not in (False, None, "", "truncate")
        }
        unknown -= {"model", "templates_dir"}
        if unknown:
            raise ConfigError(
                f"{self.name} does not support {', '.join(sorted(unknown))}",
                hint="these options need academiceval.models.prepare (truncation, retrieval, probes)",
            )
        return {k: v for k, v in self.options.items() if k in self._params}

    def __call__(self, sample: Sample, max_tokens: int) -> Prepared:
        out = self._fn(sample, **self._kwargs(max_tokens))
        if isinstance(out, str):
            return Prepared(prompt=out, prompt_sha256=sha256_text(out))
        prompt = _attr(out, "prompt", "text")
        if not isinstance(prompt, str):
            prompt = "" if prompt is None else str(prompt)
        skipped = bool(_attr(out, "skipped", "skip", default=False))
        return Prepared(
            prompt=prompt,
            prompt_sha256=_attr(out, "prompt_sha256", default=None) or sha256_text(prompt),
            input_tokens=int(_attr(out, "input_tokens", "tokens", default=0) or 0),
            tokens_cut=int(_attr(out, "tokens_cut", default=0) or 0),
            truncation=str(_attr(out, "truncation", "policy", default="none") or "none"),
            skipped=skipped,
            reason=_attr(out, "reason", "skip_reason", default=None),
            extras=_extras(out),
            retrieved_texts=list(_attr(out, "retrieved_texts", default=None) or []),
        )


_EXTRA_KEYS = ("full_tokens", "demos_dropped", "citations_dropped", "chunks_dropped", "variant", "length_words")


def _extras(out: Any) -> dict[str, Any]:
    """What the record should say about how the prompt was made (beyond tokens and policy)."""
    extras: dict[str, Any] = {}
    for k in _EXTRA_KEYS:
        v = _attr(out, k, default=None)
        if v not in (None, 0, ""):
            extras[k] = v
    tok = _attr(out, "tokenizer", default=None)
    if isinstance(tok, dict) and tok.get("name"):
        extras["tokenizer"] = tok.get("name")
        if tok.get("fallback_reason"):
            extras["tokenizer_fallback"] = True
    retrieved = _attr(out, "retrieved", default=None)
    if retrieved:
        extras["retrieved"] = retrieved
    return extras
