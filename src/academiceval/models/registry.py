"""The backend factory: a model spec (`openai/<model>`, `hf/<repo-or-path>`, `baseline/<name>`) → Backend.

Providers are registered (`@provider("openai", ...)`): each is one factory, which imports its backend module
only when a model of that provider is asked for (so `import academiceval.models.registry` stays cheap: no torch,
no aiohttp), the keyword options it takes (declared, not read off a constructor's signature) and its
`Capabilities` — what callers ask about a provider before any backend exists: which tokenizer counts the
model's tokens (`tokenizer_for_model`), whether it pools several endpoints, talks to a base URL, or names a local
checkpoint folder (`run_model_name`). Nothing outside this module reads a spec's provider prefix.

Everything that can be checked without sending work is checked here (spec syntax, API key presence, option
names), so a mistyped spec, a missing key or a misspelled option fails before the first sample. A new backend is
one class with `generate` and `capabilities` (`models.base`) plus one `@provider` factory below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Backend, Capabilities
from academiceval.models.errors import MissingAPIKeyError

# Options the runner passes to every backend; each backend takes those it uses and ignores the others.
# Any other option must be one the provider declares, or `load_backend` raises.
SHARED_OPTIONS = frozenset({"timeout", "templates_dir"})


@dataclass(frozen=True)
class BackendRequest:
    """What `load_backend` was asked for, beyond the options: where an OpenAI-compatible server is."""

    spec: str
    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    endpoints: tuple[str, ...] = ()


Factory = Callable[[BackendRequest, dict[str, Any]], Backend]


@dataclass(frozen=True)
class Provider:
    """A registered provider: its prefix, its factory, the options it takes and what it can do."""

    name: str
    build: Factory
    options: frozenset[str]  # keyword options its backends take (SHARED_OPTIONS are always accepted)
    capabilities: Capabilities  # what it can do before a backend exists (a backend's own add what it learns)
    example: str  # how a spec of it looks, for hints


_PROVIDERS: dict[str, Provider] = {}


def provider(
    name: str, *, options: Iterable[str], capabilities: Capabilities, example: str
) -> Callable[[Factory], Factory]:
    """Register the decorated factory as provider `name` (the spec prefix before the first "/")."""

    def register(build: Factory) -> Factory:
        if name in _PROVIDERS:
            raise ConfigError(f"provider {name!r} is already registered")
        _PROVIDERS[name] = Provider(name, build, frozenset(options), capabilities, example)
        return build

    return register


def provider_examples() -> list[str]:
    """How a spec of each registered provider looks (`openai/<model>`), for listings and hints."""
    return [p.example for p in _PROVIDERS.values()]


def parse_spec(spec: str) -> tuple[str, str]:
    """`"openai/gpt-4o-mini"` → `("openai", "gpt-4o-mini")`; the model part may itself contain slashes."""
    name, sep, model = spec.strip().partition("/")
    if not sep or not model or name not in _PROVIDERS:
        raise ConfigError(
            f"model spec {spec!r} is not of the form provider/model",
            hint="use " + ", ".join(p.example for p in _PROVIDERS.values()),
        )
    return name, model


def capabilities_of(spec: str) -> Capabilities:
    """What the provider of `spec` can do, before any backend is built (a bad spec is a ConfigError)."""
    return _PROVIDERS[parse_spec(spec)[0]].capabilities


def _known(spec: str | None) -> tuple[Capabilities, str] | None:
    if not spec or "/" not in spec:
        return None
    name, _, model = spec.partition("/")
    found = _PROVIDERS.get(name)
    return (found.capabilities, model) if found is not None else None


def tokenizer_for_model(model_spec: str | None) -> str | None:
    """The tokenizer spec a model spec implies (`Capabilities.tokenizer`): tiktoken's for an OpenAI-style model,
    the checkpoint's own for a local folder, None (the packaged estimator) otherwise."""
    known = _known(model_spec)
    if known is None:
        return None
    caps, model = known
    if caps.tokenizer == "tiktoken":
        return f"tiktoken:{model}"
    if caps.tokenizer == "checkpoint" and Path(model).expanduser().is_dir():
        return str(Path(model).expanduser())
    return None


def names_local_checkpoint(model_spec: str) -> bool:
    """Whether the spec's provider takes a local checkpoint folder as its model (`Capabilities.local_checkpoint`)."""
    known = _known(model_spec)
    return known is not None and known[0].local_checkpoint


def run_model_name(model_spec: str) -> str:
    """The model as a run directory names it: a local checkpoint (`Capabilities.local_checkpoint`) by its folder
    (`hf/<folder>`), not its whole path; any other spec as given."""
    known = _known(model_spec)
    if known is not None and known[0].local_checkpoint:
        model = known[1]
        if model.startswith(("/", "~", ".")) or Path(model).expanduser().is_dir():
            return f"{model_spec.partition('/')[0]}/{Path(model).expanduser().name}"
    return model_spec


def load_backend(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    endpoints: list[str] | None = None,
    **kw: Any,
) -> Backend:
    """Build the backend a spec names. `kw` passes through (timeout, system_prompt, device, ...): an option the
    provider does not declare is a ConfigError (except the runner-wide `SHARED_OPTIONS`); a None value means
    "the backend's default".

    For `openai/...` the key is read from the environment variable `api_key_env`; a missing key is a
    `MissingAPIKeyError` unless the base URL is on loopback (local vLLM/SGLang servers usually need none).
    The base URL defaults to `$OPENAI_BASE_URL`, then the OpenAI API.
    """
    name, model = parse_spec(spec)
    found = _PROVIDERS[name]
    if endpoints and not found.capabilities.endpoint_pool:
        raise ConfigError(f"several endpoints are for providers that pool them, not {spec}")
    request = BackendRequest(spec, model, base_url, api_key_env, tuple(endpoints or ()))
    return found.build(request, kw)


def _accepted(kw: dict[str, Any], takes: Iterable[str], spec: str) -> dict[str, Any]:
    """The options a backend takes; runner-wide options it does not take are left out; anything else is an error."""
    takes = sorted(takes)
    unknown = sorted(k for k in kw if k not in takes and k not in SHARED_OPTIONS)
    if unknown:
        raise ConfigError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for backend {spec!r}",
            source="models.registry.load_backend",
            hint=f"it takes {', '.join(takes) or 'no options'}; check the spelling",
        )
    return {k: v for k, v in kw.items() if k in takes and v is not None}


def _api_key(request: BackendRequest, urls: list[str], is_loopback: Callable[[str], bool]) -> str | None:
    key = os.environ.get(request.api_key_env) or None
    remote = [u for u in urls if not is_loopback(u)]
    if key is None and remote:
        raise MissingAPIKeyError(
            f"no API key for {request.spec} at {remote[0]}: the environment variable {request.api_key_env} is not set",
            hint=f"export {request.api_key_env}=... (or name another variable: `run --api-key-env NAME`, "
            "`score --judge-api-key-env NAME`); local servers on 127.0.0.1 need none",
        )
    return key


_OPENAI_ONE = frozenset({"timeout", "system_prompt", "connection_limit"})  # OpenAIBackend
_OPENAI_POOL = frozenset(  # EndpointPool
    {"timeout", "system_prompt", "max_connections", "fail_threshold", "cooldown_s", "max_cooldown_s"}
)


@provider(
    "openai",
    options=_OPENAI_ONE | _OPENAI_POOL,
    capabilities=Capabilities(tokenizer="tiktoken", endpoint_pool=True, base_url=True),
    example="openai/<model>",
)
def _openai(request: BackendRequest, kw: dict[str, Any]) -> Backend:
    # aiohttp and the HTTP client: imported when an openai/ model is asked for
    from academiceval.models.endpoints import EndpointPool, parse_endpoints
    from academiceval.models.openai_backend import DEFAULT_BASE_URL, OpenAIBackend, is_loopback, normalize_base_url

    if request.endpoints:
        urls = parse_endpoints(list(request.endpoints))
        key = _api_key(request, urls, is_loopback)
        return EndpointPool(request.model, base_urls=urls, api_key=key, **_accepted(kw, _OPENAI_POOL, request.spec))
    url = normalize_base_url(request.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    key = _api_key(request, [url], is_loopback)
    return OpenAIBackend(request.model, base_url=url, api_key=key, **_accepted(kw, _OPENAI_ONE, request.spec))


@provider(
    "hf",
    options=("device", "dtype", "chat_template", "use_chat_template", "context_length", "max_batch"),
    capabilities=Capabilities(tokenizer="checkpoint", local_checkpoint=True),
    example="hf/<repo-or-path>",
)
def _hf(request: BackendRequest, kw: dict[str, Any]) -> Backend:
    try:  # torch and transformers (the [ml] extra): heavy and optional
        from academiceval.models.hf_backend import HFBackend
    except ImportError as e:
        raise _unavailable(request.spec, e) from None
    return HFBackend(request.model, **_accepted(kw, _PROVIDERS["hf"].options, request.spec))


@provider(
    "baseline",
    options=("similarity", "target_words", "templates_dir", "seed"),
    capabilities=Capabilities(),
    example="baseline/<name>",
)
def _baseline(request: BackendRequest, kw: dict[str, Any]) -> Backend:
    # BM25 / TF-IDF (bm25s, scikit-learn): imported when a baseline is run
    from academiceval.models.baselines import BaselineBackend

    return BaselineBackend(request.model, **_accepted(kw, _PROVIDERS["baseline"].options, request.spec))


def _unavailable(spec: str, e: Exception) -> ConfigError:
    return ConfigError(
        f"backend for {spec!r} is unavailable: {e}",
        hint="install the extra it needs, e.g. pip install 'academiceval[ml]'",
    )
