"""The backend factory: a model spec (`openai/<model>`, `hf/<repo-or-path>`, `baseline/<name>`) → Backend.

Everything that can be checked without sending work is checked here (spec syntax, API key presence, option
names), so a mistyped spec, a missing key or a misspelled option fails before the first sample. Heavy backends
are imported lazily so that `import academiceval.models.registry` stays cheap (no torch).
"""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Backend
from academiceval.models.errors import MissingAPIKeyError

PROVIDERS = ("openai", "hf", "baseline")
# Options the runner passes to every backend; each backend takes those it uses and ignores the others.
# Any other option must be a parameter of the backend's constructor, or `load_backend` raises.
SHARED_OPTIONS = frozenset({"timeout", "templates_dir"})


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
    endpoints: list[str] | None = None,
    **kw: Any,
) -> Backend:
    """Build the backend a spec names. `kw` passes through (timeout, system_prompt, device, ...): an option the
    backend's constructor does not take is a ConfigError (except the runner-wide `SHARED_OPTIONS`); a None value
    means "the backend's default".

    For `openai/...` the key is read from the environment variable `api_key_env`; a missing key is a
    `MissingAPIKeyError` unless the base URL is on loopback (local vLLM/SGLang servers usually need none).
    The base URL defaults to `$OPENAI_BASE_URL`, then the OpenAI API.
    """
    provider, model = parse_spec(spec)
    if endpoints and provider != "openai":
        raise ConfigError(f"several endpoints are for openai/ models only, not {spec}")
    if provider == "openai" and endpoints:
        from academiceval.models.endpoints import EndpointPool, parse_endpoints
        from academiceval.models.openai_backend import is_loopback

        urls = parse_endpoints(endpoints)
        key = os.environ.get(api_key_env) or None
        remote = [u for u in urls if not is_loopback(u)]
        if key is None and remote:
            raise MissingAPIKeyError(
                f"no API key for {spec} at {remote[0]}: the environment variable {api_key_env} is not set",
                hint=f"export {api_key_env}=... (or pass --api-key-env NAME); local servers on 127.0.0.1 need none",
            )
        opts = _accepted(EndpointPool, kw, spec, exclude={"base_urls", "api_key"})
        return EndpointPool(model, base_urls=urls, api_key=key, **opts)
    if provider == "openai":
        from academiceval.models.openai_backend import DEFAULT_BASE_URL, OpenAIBackend, is_loopback, normalize_base_url

        url = normalize_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        key = os.environ.get(api_key_env) or None
        if key is None and not is_loopback(url):
            raise MissingAPIKeyError(
                f"no API key for {spec} at {url}: the environment variable {api_key_env} is not set",
                hint=f"export {api_key_env}=... (or pass --api-key-env NAME); local servers on 127.0.0.1 need none",
            )
        # the URL and key are resolved above; the constructor's own base_url/api_key are not options here
        opts = _accepted(OpenAIBackend, kw, spec, exclude={"base_url", "api_key"})
        return OpenAIBackend(model, base_url=url, api_key=key, **opts)
    if provider == "hf":
        cls = _lazy("academiceval.models.hf_backend", "HFBackend", spec)
    else:
        cls = _lazy("academiceval.models.baselines", "BaselineBackend", spec)
    return cls(model, **_accepted(cls, kw, spec))


def backend_options(cls: Any, *, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The keyword options a backend class takes (its constructor's keyword parameters after the model)."""
    params = inspect.signature(cls).parameters
    return [name for name, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in exclude]


def _accepted(cls: Any, kw: dict[str, Any], spec: str, *, exclude: frozenset[str] | set[str] = frozenset()) -> dict:
    """The options `cls` takes; runner-wide options it does not take are left out; anything else is an error."""
    takes = backend_options(cls, exclude=exclude)
    unknown = sorted(k for k in kw if k not in takes and k not in SHARED_OPTIONS)
    if unknown:
        raise ConfigError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for backend {spec!r}",
            source="models.registry.load_backend",
            hint=f"{cls.__name__} takes {', '.join(takes) or 'no options'}; check the spelling",
        )
    return {k: v for k, v in kw.items() if k in takes and v is not None}
