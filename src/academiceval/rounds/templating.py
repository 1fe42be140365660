"""The jinja2 environment prompts are rendered with (`rounds.prompts`, `rounds.choice`).

jinja2 gives every template a `ChainMap(template globals, environment globals)`. Rendering then copies that
ChainMap into a dict for each new context, and each `{% import %}` of a macro file subtracts its keys from a
set. Both go through Python-level `ChainMap` methods. Our prompt templates import two macro files, so this
came to more than half of a prompt's render time (~47 → ~19 µs per abstract prompt, measured in the runner's
profile). `PromptEnvironment` gives each template a plain dict instead: the environment's globals overlaid with
the template's own. The rendered text is the same. The one difference is that later changes to
`Environment.globals` no longer reach templates already loaded. jinja2 already says not to make such changes
(`Environment.make_globals`), and the prompt environments never change their globals.

Each macro call (`{{ b.body_block(body) }}`, `{{ r.abstract() }}`: three per writing prompt) goes through
`Context.call`, which asks twice whether the callable wants the context injected, and then through
`Macro.__call__`, which sorts positional, keyword, caller and catch-all arguments. A call with exactly the macro's
positional arguments and nothing else needs none of that: `PromptContext.call` hands them to the macro's function
directly, as `Macro.__call__` itself ends up doing (~10 → ~7 µs per abstract prompt); every other call takes
jinja2's own path.

`Template.render(**vars)` copies the variables into a dict, hands it to `Template.new_context`, which calls the
module function `runtime.new_context`, which copies it again over the template's globals and builds the context.
`PromptTemplate.render` builds the same context (the same parent dict: globals, then the variables over them; the
same context class, name, blocks and globals) in one step and runs the same `root_render_func` with the same error
handling (~6.1 → ~5.0 µs per abstract prompt). Positional arguments and async environments take jinja2's path.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import jinja2
from jinja2.runtime import Context, Macro

# The short path uses two private names of jinja2 3.1's Macro; a jinja2 without them takes jinja2's own path
# (slower, same text), and tests/rounds/test_templating.py compares both paths against jinja2's rendering.
_PLAIN_MACRO_CALLS = hasattr(Macro, "_invoke") and "_argument_count" in Macro.__init__.__code__.co_names


class PromptContext(Context):
    """jinja2's template context with a short path for plain macro calls (see the module docstring)."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # jinja2's own signature
        if (
            _PLAIN_MACRO_CALLS
            and type(__obj) is Macro
            and not kwargs
            and len(args) == __obj._argument_count
            and not (__obj.caller or __obj.catch_kwargs or __obj.catch_varargs)
        ):
            # what Macro.__call__ does with these arguments: the eval context's autoescape, then `_invoke`;
            # a StopIteration out of the call is an undefined value, as in Context.call
            try:
                return __obj._invoke(list(args), __self.eval_ctx.autoescape)
            except StopIteration:
                return __self.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception"
                )
        return super().call(__obj, *args, **kwargs)


class PromptTemplate(jinja2.Template):
    """A jinja2 template whose keyword-only `render` builds its context in one step (see the module docstring)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        env = self.environment
        if args or env.is_async:
            return super().render(*args, **kwargs)
        # = runtime.new_context(env, name, blocks, dict(**kwargs), shared=False, globals, locals=None)
        ctx = env.context_class(env, {**self.globals, **kwargs}, self.name, self.blocks, globals=self.globals)
        try:
            return env.concat(self.root_render_func(ctx))  # type: ignore[no-any-return]
        except Exception:
            env.handle_exception()


class PromptEnvironment(jinja2.Environment):
    """A `jinja2.Environment` whose templates' globals are a plain dict (see the module docstring), with an
    unbounded template cache (`cache_size=-1`, a plain dict) unless told otherwise: a prompt environment holds a
    few dozen templates, and jinja2's default LRU cache takes a lock and reorders a queue on every look-up (three
    per prompt: the template and the two macro files it imports). Its templates are `PromptTemplate`s and render
    with `PromptContext`."""

    context_class = PromptContext
    template_class = PromptTemplate

    def __init__(self, **options: Any) -> None:
        options.setdefault("cache_size", -1)
        super().__init__(**options)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}
