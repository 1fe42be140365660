"""Secrets never stored (issue 26, item 6): the one scrubber for every URL, header and command line that ends
up in a file, and private (0600) creation of files that hold what a user would not share.

A key reaches the workspace by three routes, and each has one gate here:

- **a URL**: `--base-url http://user:KEY@host/v1`, `--judge-base-url http://h/v1?api_key=KEY`, a `--source` or
  `--api-url` with a token. `scrub_url` replaces the whole user-info with `***` (a user name alone can be the
  key: `https://KEY@host`) and the value of every query or fragment parameter whose name says it holds a secret
  (`api_key`, `key`, `token`, `access_token`, `sig`, `X-Amz-Signature`, …; see `is_secret_name`).
- **a header or an assignment**: `Authorization: Bearer KEY`, `api-key: KEY`, `{"x-api-key": "KEY"}`,
  `password=KEY` — the value is replaced when the *name* is a secret's name, in text (`scrub_text`) or as a
  mapping key (`scrub`).
- **a command line** (the run lock names its holder's command): `scrub_argv` also catches a secret flag given
  with its value as the next argument (`--api-key KEY`), and well-known key shapes (`sk-…`, `hf_…`, `ghp_…`,
  `AKIA…`) anywhere.

`scrub(obj)` walks any JSON-like value (dicts, lists, strings), so a config gains a URL field and it is covered:
`store.models.StrictConfig.stored()` — the form every stage config is kept in (`run.json`, each `scores.jsonl`
line, the round manifest) — passes through it, and so does `runs.lock`'s holder record. Names are matched
whole, so `max_tokens`, `api_key_env` (a variable's *name*) or `author_key` are left alone. Scrubbing is
idempotent and never raises.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

MASK = "***"

# A name holds a secret when, lower-cased with `-`, `.`, spaces and camelCase humps turned into `_`, it *ends*
# in one of these words (`hf_token`, `x_amz_signature`, `ocp_apim_subscription_key`, `client_secret`) or is
# one of the short generic ones exactly (optionally with an `x_` prefix: `key`, `x_key`, `sig`).
_TAIL = (
    r"api_?key|secret|password|passwd|token|access_?token|refresh_?token|id_token|auth_?token|private_?token"
    r"|subscription_?key|access_?key|secret_?key|private_?key|signature|credentials?|authorization|bearer"
    r"|cookie|jwt|session_?token|session_?id|passphrase"
)
_EXACT = r"key|sig|auth|pwd|pass|session|sessionid"
_SECRET_NAME = re.compile(rf"^(?:(?:.*_)?(?:{_TAIL})|(?:x_)?(?:{_EXACT}))$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[-.\s]+")

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
# name [:=] value, as in a header line, a query-like pair or a JSON member ("api_key": "..."); the value may be
# preceded by an auth scheme (Bearer / Basic / Token)
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][\w.\-]*)(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<scheme>(?:Bearer|Basic|Token|Digest)\s+)?"
    r"(?P<value>[^\s\"'&,;)}\]]+)",
    re.IGNORECASE,
)
_AUTH_SCHEME = re.compile(r"\b(?P<scheme>Bearer|Basic|Token|Digest)(?P<sp>\s+)(?P<value>[A-Za-z0-9._~+/=\-]{8,})")
# key shapes recognisable on their own: OpenAI / Anthropic (sk-…), Hugging Face (hf_…), GitHub (ghp_…, gho_…,
# github_pat_…), AWS access key ids (AKIA…), Slack (xox?-…), Google API keys (AIza…)
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,})"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def normal_name(name: str) -> str:
    """`X-Api-Key` / `apiKey` / `api.key` → `x_api_key` / `api_key` / `api_key`."""
    return _SEPARATORS.sub("_", _CAMEL.sub("_", name.strip().strip("-").strip())).lower()


def is_secret_name(name: object) -> bool:
    """Whether a header, parameter, option or field of this name holds a secret (see the module docstring)."""
    return isinstance(name, str) and bool(_SECRET_NAME.match(normal_name(name)))


def _scrub_params(params: str) -> str:
    """`a=1&api_key=K&key=` → `a=1&api_key=***&key=` (empty values stay empty; the rest is kept byte for byte)."""
    out = []
    for part in params.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and value != MASK and is_secret_name(unquote_plus(name)):
            part = f"{name}={MASK}"
        out.append(part)
    return "&".join(out)


def scrub_url(url: str) -> str:
    """The URL with its user-info and secret parameters masked; a URL without secrets comes back unchanged.

    Parsed by hand (scheme `://` authority, path, `?query`, `#fragment`) so that nothing is re-encoded and a
    malformed URL (an unbalanced IPv6 bracket, which `urllib` refuses) is scrubbed all the same."""
    m = _SCHEME.match(url)
    if m is None:
        return url
    head, rest = url[: m.end()], url[m.end() :]
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, rest = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = f"{MASK}@{authority.rsplit('@', 1)[1]}"
    before_fragment, hash_sign, fragment = rest.partition("#")
    path, qmark, query = before_fragment.partition("?")
    if qmark:
        query = _scrub_params(query)
    if hash_sign and "=" in fragment:  # OAuth implicit grants put the token there: #access_token=...
        fragment = _scrub_params(fragment)
    return f"{head}{authority}{path}{qmark}{query}{hash_sign}{fragment}"


def _mask_assignment(m: re.Match[str]) -> str:
    if not is_secret_name(m["name"]) or m["value"] == MASK:
        return m[0]
    return f"{m['name']}{m['sep']}{m['scheme'] or ''}{MASK}"


def _scrub_url_match(m: re.Match[str]) -> str:
    url = m[0]
    core = url.rstrip(").,;:]}!")  # prose punctuation after a URL is not part of it
    return scrub_url(core) + url[len(core) :]


def _scrub_prose(text: str) -> str:
    text = _ASSIGNMENT.sub(_mask_assignment, text)
    return _AUTH_SCHEME.sub(lambda m: f"{m['scheme']}{m['sp']}{MASK}", text)


def scrub_text(text: str) -> str:
    """Every URL in `text` through `scrub_url`; around the URLs, secret assignments (`api-key: K`,
    `password=K`) and auth schemes (`Bearer K`); everywhere, well-known key shapes (`sk-…`, `hf_…`)."""
    if not text:
        return text
    out: list[str] = []
    at = 0
    for m in _URL.finditer(text):
        out.append(_scrub_prose(text[at : m.start()]))
        out.append(_scrub_url_match(m))
        at = m.end()
    out.append(_scrub_prose(text[at:]))
    return _KEY_SHAPES.sub(MASK, "".join(out))


def scrub(value: Any) -> Any:
    """A copy of a JSON-like value with every secret masked: strings through `scrub_text`, and the value of any
    mapping key that names a secret (`Authorization`, `api_key`, `password`, …) replaced outright."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if is_secret_name(k) and v not in (None, "", MASK) and not isinstance(v, Mapping | list | tuple | bool):
                out[k] = MASK
            else:
                out[k] = scrub(v)
        return out
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def scrub_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """Request/response headers as they may be stored: `Authorization`, `api-key`, `Cookie`, … masked."""
    return scrub(dict(headers))


def scrub_argv(argv: Iterable[str]) -> str:
    """A command line as it may be stored (the run lock's holder): each argument through `scrub_text`, and the
    argument after a secret-named flag (`--api-key KEY`, `--token KEY`) masked."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        arg = str(arg)
        if mask_next and not arg.startswith("-"):
            out.append(MASK)
            mask_next = False
            continue
        mask_next = arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-"))
        out.append(scrub_text(arg))
    return " ".join(out)


def private_file(path: str | Path) -> Path:
    """Create `path` readable by its owner only (0600), or tighten an existing file of ours to 0600.

    For files that may hold what others on the machine should not read: the run lock (a command line), the
    response cache (prompts and answers, by server). SQLite gives its `-wal`/`-shm` files the permissions of
    the database file, so creating the database this way covers them too. Never raises for the mode change:
    on a file system without permissions the file is still created, and a path that cannot be opened is left
    for the caller's own open to report.
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:  # a directory there, no rights, read-only: the caller's own open reports it in its words
        return p
    try:
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o700)
    finally:
        os.close(fd)
    return p


__all__ = [
    "MASK",
    "is_secret_name",
    "normal_name",
    "private_file",
    "scrub",
    "scrub_argv",
    "scrub_headers",
    "scrub_text",
    "scrub_url",
]
