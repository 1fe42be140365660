"""A model in a *role* outside a run (e.g. the citation-type annotator of the cloze family): a synchronous
`prompt -> answer` callable over the one model-call path (`models.generate.Generator`: response cache → retry →
backend), so role calls are cached, retried and keyed exactly like run calls.

    ask = role_ask(load_backend("openai/gpt-4o-mini"), cache=ResponseCache.in_workspace(home))
    judge = JudgeClassifier(ask, "openai/gpt-4o-mini", ws)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from academiceval.models.base import Backend, GenerationOptions
from academiceval.models.generate import Generator


def role_ask(
    backend: Backend,
    *,
    cache: Any = None,
    temperature: float = 0.0,
    max_tokens: int = 8,
) -> Callable[[str], str]:
    """A blocking callable for one short answer per prompt. A failed call returns "" (the role records it as
    unreadable) instead of raising, so one bad answer never stops a build."""
    gen = Generator(backend, cache=cache)
    options = GenerationOptions(temperature=temperature, max_tokens=max_tokens)

    def ask(prompt: str) -> str:
        out = asyncio.run(gen.generate(prompt, options))
        return out.completion.text if out.completion is not None else ""

    return ask
