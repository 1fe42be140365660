"""Token counting with the model's own tokenizer, behind one small interface.

Budgets must be counted in the tokens the model will actually see, so a run can use an HF tokenizer (a local
checkpoint folder), a bare `tokenizer.json`, or tiktoken for OpenAI models. When none is known, the packaged
bert-base-uncased WordPiece is the estimator (the same one round statistics use).

Cutting text works on character offsets (HELMET style): the kept text is a verbatim prefix of the original, not
a decode of token ids, so lowercasing or byte-level normalisation never leaks into a prompt.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from academiceval.errors import AcademicEvalError
from academiceval.models.embedded import bert_tokenizer_json, force_offline

log = logging.getLogger(__name__)

DEFAULT_TOKENIZER = "bert-base-uncased"
_PIECE_CHARS = 2_000  # texts longer than this are counted paragraph by paragraph (additive tokenizers only)
_DEFAULT_ALIASES = {None, "", "default", "bert", DEFAULT_TOKENIZER, "wordpiece"}


class TokenizerError(AcademicEvalError):
    """A tokenizer spec that cannot be loaded."""

    code = "tokenizer"


class Tokenizer:
    """Uniform counting/cutting over HF, `tokenizers` and tiktoken tokenizers.

    Special tokens (BOS/CLS...) are never counted here: the text is one part of a prompt. Whatever the backend
    wraps around the whole prompt (chat template, BOS) is `prompt_overhead`, added once per prompt.
    """

    def __init__(
        self,
        name: str,
        encode: Callable[[str], list[int]],
        decode: Callable[[list[int]], str],
        token_ends: Callable[[str], list[int]],
        *,
        kind: str,
        prompt_overhead: int = 0,
        wrap: Callable[[str], str] | None = None,
        exact: bool = True,
        fallback_reason: str | None = None,
        additive: bool = False,
    ) -> None:
        self.name = name
        self.kind = kind  # "hf", "tokenizers", "tiktoken"
        self._encode = encode
        self._decode = decode
        self._token_ends = token_ends
        # Additive tokenizers (WordPiece: whitespace pre-splitting, per-character normalisation) count a text
        # as the sum of its paragraphs, so re-counting a prompt after a cut re-encodes only what changed.
        self.additive = additive
        self._piece_count = lru_cache(maxsize=1 << 16)(lambda piece: len(encode(piece)))
        self.wrap = wrap  # the backend's prompt wrapping (chat template), counted exactly when known
        self.prompt_overhead = self.count(wrap("")) if wrap is not None else prompt_overhead
        self.exact = exact  # False when this is an estimate standing in for the model's own tokenizer
        self.fallback_reason = fallback_reason

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r}, kind={self.kind!r}, overhead={self.prompt_overhead})"

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def decode(self, ids: list[int]) -> str:
        return self._decode(ids)

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.additive and len(text) > _PIECE_CHARS:
            return sum(self._piece_count(piece) for piece in text.split("\n\n"))
        return len(self._encode(text))

    def count_prompt(self, prompt: str) -> int:
        """Tokens the model sees for a whole prompt: the text plus the backend's wrapping (chat template, BOS)."""
        if self.wrap is not None:
            return self.count(self.wrap(prompt))
        return self.count(prompt) + self.prompt_overhead

    def token_ends(self, text: str) -> list[int]:
        """Character offset just past each token of `text` (for cutting on token boundaries)."""
        return self._token_ends(text) if text else []

    def truncate_tail(self, text: str, n_tokens: int) -> str:
        """The longest verbatim prefix of `text` that holds at most `n_tokens` tokens (the tail is cut).

        Cut on the offset where token n ends; a cut inside a word can re-tokenise into more pieces (WordPiece
        "unaff" -> "un", "##af", "##f"), so the prefix is re-counted and moved back a token when needed.
        """
        if not text:
            return ""
        ends = self._token_ends(text)
        if n_tokens >= len(ends):  # it fits (also a whitespace-only text, which holds no token, with n = 0)
            return text
        if n_tokens <= 0:
            return ""
        k = n_tokens
        while k > 0:
            cut = text[: ends[k - 1]].rstrip()
            if self.count(cut) <= n_tokens:
                return cut
            k -= 1
        return ""

    def identity(self) -> dict[str, Any]:
        """What a run record should say about the tokenizer used for budgets."""
        out: dict[str, Any] = {"tokenizer": self.name, "kind": self.kind, "exact": self.exact}
        if self.fallback_reason:
            out["fallback_reason"] = self.fallback_reason
        return out


# ---------------------------------------------------------------------------------------------------------------
# constructors


def from_tokenizers(tok: Any, name: str, *, exact: bool = True, fallback_reason: str | None = None) -> Tokenizer:
    """Wrap a `tokenizers.Tokenizer` (padding/truncation baked into some tokenizer.json files are switched off)."""
    tok.no_padding()
    tok.no_truncation()

    def encode(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    def ends(text: str) -> list[int]:
        return [end for _, end in tok.encode(text, add_special_tokens=False).offsets]

    return Tokenizer(
        name,
        encode,
        lambda ids: tok.decode(ids, skip_special_tokens=True),
        ends,
        kind="tokenizers",
        exact=exact,
        fallback_reason=fallback_reason,
        additive=_is_wordpiece(tok),
    )


def _is_wordpiece(tok: Any) -> bool:
    """WordPiece with BERT pre-tokenisation: token counts add up over whitespace-separated parts."""
    try:
        from tokenizers import models, pre_tokenizers

        wordpiece = isinstance(tok.model, models.WordPiece)
        return wordpiece and isinstance(tok.pre_tokenizer, pre_tokenizers.BertPreTokenizer)
    except (ImportError, AttributeError):  # pragma: no cover
        return False


def chat_wrapper(tok: Any, chat_template: str | None = None) -> Callable[[str], str] | None:
    """The prompt as the model sees it: one user turn through the chat template, ready for the answer."""
    template = chat_template or getattr(tok, "chat_template", None)
    if not template:
        return None

    def wrap(prompt: str) -> str:
        messages = [{"role": "user", "content": prompt}]
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, chat_template=template)

    return wrap


def from_hf(tok: Any, name: str, *, chat_template: str | None = None, use_chat_template: bool = True) -> Tokenizer:
    """Wrap a transformers tokenizer. Fast tokenizers give offsets; slow ones fall back to decoding prefixes.

    With a chat template (the tokenizer's own or `chat_template`) prompts are counted after templating;
    without one, the special tokens the tokenizer adds around a text (BOS) are the overhead.
    """
    wrap = chat_wrapper(tok, chat_template) if use_chat_template else None
    overhead = 0 if wrap else len(tok("", add_special_tokens=True)["input_ids"])

    def encode(text: str) -> list[int]:
        return list(tok(text, add_special_tokens=False)["input_ids"])

    def ends(text: str) -> list[int]:
        if getattr(tok, "is_fast", False):
            enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
            return [end for _, end in enc["offset_mapping"]]
        return _ends_by_decoding(encode(text), lambda ids: tok.decode(ids, skip_special_tokens=True), text)

    return Tokenizer(
        name,
        encode,
        lambda ids: tok.decode(ids, skip_special_tokens=True),
        ends,
        kind="hf",
        prompt_overhead=overhead,
        wrap=wrap,
    )


def from_tiktoken(enc: Any, name: str) -> Tokenizer:
    """Wrap a tiktoken Encoding; special-token text in papers is treated as plain text, never as a control token."""

    def encode(text: str) -> list[int]:
        return enc.encode(text, disallowed_special=())

    def ends(text: str) -> list[int]:
        ids = encode(text)
        _, starts = enc.decode_with_offsets(ids)
        return [*starts[1:], len(text)] if starts else []

    def decode(ids: list[int]) -> str:
        return enc.decode_bytes(ids).decode("utf-8", errors="ignore")

    return Tokenizer(name, encode, decode, ends, kind="tiktoken")


def _ends_by_decoding(ids: list[int], decode: Callable[[list[int]], str], text: str) -> list[int]:
    """Character ends per token for tokenizers without offsets (lossless decoders only)."""
    out, pos = [], 0
    for i in range(len(ids)):
        piece = decode(ids[: i + 1])
        pos = min(len(text), max(pos, len(piece)))
        out.append(pos)
    return out


def default_tokenizer() -> Tokenizer:
    """The packaged bert-base-uncased WordPiece: the estimator when the model's tokenizer is unknown."""
    return _bert(exact=True)


@lru_cache(maxsize=4)
def _bert(*, exact: bool, fallback_reason: str | None = None) -> Tokenizer:
    from tokenizers import Tokenizer as RawTokenizer

    raw = RawTokenizer.from_file(str(bert_tokenizer_json()))
    return from_tokenizers(raw, DEFAULT_TOKENIZER, exact=exact, fallback_reason=fallback_reason)


def _tiktoken(spec: str, *, strict: bool) -> Tokenizer:
    name = spec.split(":", 1)[1].strip()
    try:
        import tiktoken
    except ImportError as exc:
        err = TokenizerError(
            "tiktoken is not installed", source=spec, hint="pip install 'academiceval[openai]' or give a tokenizer.json"
        )
        if strict:
            raise err from exc
        return _fallback(spec, err)
    try:
        try:
            enc = tiktoken.get_encoding(name)
        except ValueError:  # a model name such as gpt-4o rather than an encoding name
            enc = tiktoken.encoding_for_model(name)
    except KeyError as exc:
        raise TokenizerError(
            f"unknown tiktoken encoding or model {name!r}", source=spec, hint="e.g. tiktoken:o200k_base"
        ) from exc
    except Exception as exc:  # network errors: tiktoken downloads encoding files on first use
        err = TokenizerError(
            f"tiktoken could not load {name!r} ({type(exc).__name__}); it downloads encoding files on first use",
            source=spec,
            hint="run once with internet access, set TIKTOKEN_CACHE_DIR to a folder holding the cached file, or give "
            "--tokenizer bert-base-uncased to count with the packaged estimate",
        )
        if strict:
            raise err from exc
        return _fallback(spec, err)
    return from_tiktoken(enc, f"tiktoken:{enc.name}")


def _fallback(spec: str, err: TokenizerError) -> Tokenizer:
    reason = f"{err}; counting with {DEFAULT_TOKENIZER} instead (an estimate)"
    warnings.warn(reason, stacklevel=3)
    log.warning(reason)
    return _bert(exact=False, fallback_reason=reason)


def load_tokenizer(spec: Any = None, *, strict: bool = False) -> Tokenizer:
    """Load a tokenizer from a spec (cached per spec string; see `_load` for the forms accepted)."""
    if isinstance(spec, Tokenizer):
        return spec
    if spec is None or isinstance(spec, str | Path):
        return _load_cached(None if spec is None else str(spec), strict)
    return _wrap_object(spec)


@lru_cache(maxsize=16)
def _load_cached(spec: str | None, strict: bool) -> Tokenizer:
    return _load(spec, strict=strict)


def _load(spec: str | None = None, *, strict: bool = False) -> Tokenizer:
    """Load a tokenizer from a spec.

    - `None` / "bert-base-uncased": the packaged WordPiece estimator;
    - "tiktoken:<encoding or model>": tiktoken (offline without a cached file: the estimator, with a warning and
      `fallback_reason`; `strict=True` raises instead);
    - a path to a `tokenizer.json` file: the `tokenizers` library;
    - a directory or "hf:<dir>": transformers AutoTokenizer, local files only;
    - an already built transformers tokenizer, `tokenizers.Tokenizer` or `Tokenizer`: wrapped as is.
    """
    text = spec
    if text in _DEFAULT_ALIASES:
        return default_tokenizer()
    assert text is not None
    if text.startswith("tiktoken:"):
        return _tiktoken(text, strict=strict)
    path = Path(text.removeprefix("hf:")).expanduser()
    if path.is_file():
        from tokenizers import Tokenizer as RawTokenizer

        try:
            raw = RawTokenizer.from_file(str(path))
        except Exception as exc:
            raise TokenizerError(f"cannot read tokenizer file: {exc}", source=text) from exc
        return from_tokenizers(raw, str(path))
    if path.is_dir():
        return _load_hf_dir(path, text)
    raise TokenizerError(
        f"unknown tokenizer {text!r}",
        source=text,
        hint="give a local model folder, a tokenizer.json path, tiktoken:<encoding>, or bert-base-uncased",
    )


def _load_hf_dir(path: Path, spec: str) -> Tokenizer:
    force_offline()
    try:
        from transformers import AutoTokenizer
    except ImportError:
        if (path / "tokenizer.json").is_file():
            return _load(str(path / "tokenizer.json"))
        raise TokenizerError(
            "transformers is not installed", source=spec, hint="pip install 'academiceval[ml]'"
        ) from None
    try:
        tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:
        raise TokenizerError(f"cannot load a tokenizer from {path}: {exc}", source=spec) from exc
    return from_hf(tok, str(path))


def _wrap_object(obj: Any) -> Tokenizer:
    try:
        from tokenizers import Tokenizer as RawTokenizer
    except ImportError:  # pragma: no cover
        RawTokenizer = ()
    if isinstance(obj, RawTokenizer):
        return from_tokenizers(obj, "tokenizers")
    if hasattr(obj, "decode_with_offsets") and hasattr(obj, "n_vocab"):
        return from_tiktoken(obj, f"tiktoken:{obj.name}")
    if callable(obj) and hasattr(obj, "decode"):
        return from_hf(obj, getattr(obj, "name_or_path", "") or type(obj).__name__)
    raise TokenizerError(f"cannot use {type(obj).__name__} as a tokenizer", source="models.tokenize")
