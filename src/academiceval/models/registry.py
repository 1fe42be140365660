"""The backend factory: a model spec (`openai/<model>`, `hf/<repo-or-path>`, `baseline/<name>`) → Backend.

Everything that can be checked without sending work is checked here (spec syntax, API key presence), so a
mistyped spec or a missing key fails before the first sample. Heavy backends are imported lazily so that
`import academiceval.models.registry` stays cheap (no torch).
"""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Backend
from academiceval.runs.errors import MissingAPIKeyError

PROVIDERS = ("openai", "hf", "baseline")


def parse_spec(spec: str) -> tuple[str, str]:
    """`"openai/gpt-4o-mini"` → `("openai", "gpt-4o-mini")`; the model part may itself contain slashes."""
    provider, sep, model = spec.strip().partition("/")
    if not sep or not model or provider not in PROVIDERS:
        raise ConfigError(
            f"model spec {spec!r} is not of the form provider/model",
            hint="use openai/<model>, hf/<repo-or-path> or baseline/<lead|demo-copy|extractive>",
        )
    return provider, model


def _lazy(module: str, attr: str, spec: str) -> Any:
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(
            f"backend for {spec!r} is unavailable: {module}.{attr} cannot be imported ({e})",
            hint="install the extra it needs, e.g. pip install 'academiceval[ml]'",
        ) from None


def load_backend(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    **kw: Any,
) -> Backend:
    """Build the backend a spec names. `kw` passes through (timeout, system_prompt, device, ...).

    For `openai/...` the key is read from the environment variable `api_key_env`; a missing key is a
    `MissingAPIKeyError` unless the base URL is on loopback (local vLLM/SGLang servers usually need none).
    The base URL defaults to `$OPENAI_BASE_URL`, then the OpenAI API.
    """
    provider, model = parse_spec(spec)
    if provider == "openai":
        from academiceval.models.openai_backend import DEFAULT_BASE_URL, OpenAIBackend, is_loopback, normalize_base_url

        url = normalize_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        key = os.environ.get(api_key_env) or None
        if key is None and not is_loopback(url):
            raise MissingAPIKeyError(
                f"no API key for {spec} at {url}: the environment variable {api_key_env} is not set",
                hint=f"export {api_key_env}=... (or pass --api-key-env NAME); local servers on 127.0.0.1 need none",
            )
        allowed = {"timeout", "system_prompt", "connection_limit"}
        return OpenAIBackend(model, base_url=url, api_key=key, **{k: v for k, v in kw.items() if k in allowed})
    if provider == "hf":
        cls = _lazy("academiceval.models.hf_backend", "HFBackend", spec)
    else:
        cls = _lazy("academiceval.models.baselines", "BaselineBackend", spec)
    return cls(model, **_accepted(cls, kw))


def _accepted(cls: Any, kw: dict[str, Any]) -> dict[str, Any]:
    """Only the keyword arguments the constructor takes (runner-wide options such as timeout are optional)."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return kw
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kw
    return {k: v for k, v in kw.items() if k in params and v is not None}
