"""The jinja2 environment prompts are rendered with (`rounds.prompts`, `rounds.choice`).

jinja2 gives every template a `ChainMap(template globals, environment globals)`. Rendering then copies that
ChainMap into a dict for each new context, and each `{% import %}` of a macro file subtracts its keys from a
set. Both go through Python-level `ChainMap` methods. Our prompt templates import two macro files, so this
came to more than half of a prompt's render time (~47 → ~19 µs per abstract prompt, measured in the runner's
profile). `PromptEnvironment` gives each template a plain dict instead: the environment's globals overlaid with
the template's own. The rendered text is the same. The one difference is that later changes to
`Environment.globals` no longer reach templates already loaded. jinja2 already says not to make such changes
(`Environment.make_globals`), and the prompt environments never change their globals.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import jinja2


class PromptEnvironment(jinja2.Environment):
    """A `jinja2.Environment` whose templates' globals are a plain dict (see the module docstring), with an
    unbounded template cache (`cache_size=-1`, a plain dict) unless told otherwise: a prompt environment holds a
    few dozen templates, and jinja2's default LRU cache takes a lock and reorders a queue on every look-up (three
    per prompt: the template and the two macro files it imports)."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("cache_size", -1)
        super().__init__(**options)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}
