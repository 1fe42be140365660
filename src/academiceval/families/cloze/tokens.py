"""Token counters for caps and budgets: a name (recorded in every item), `count`, and `prefix` (the longest
head of a text within n tokens, cut at a token boundary of the original text, never re-decoded).

`wordpiece` (default, offline): the bert-base-uncased WordPiece the rounds already use for statistics.
`tiktoken:<encoding>` (e.g. `tiktoken:o200k_base`, SCALAR's gpt-4o tokenizer): when tiktoken and its encoding
file are available locally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from academiceval.errors import ConfigError


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def prefix(self, text: str, n: int) -> str: ...


class WordPieceCounter:
    name = "bert-base-uncased-wordpiece"

    def __init__(self) -> None:
        from academiceval.rounds.tokens import wordpiece

        self._tok = wordpiece()

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids) if text else 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        from academiceval.rounds.tokens import count_tokens

        return count_tokens(list(texts))

    def prefix(self, text: str, n: int) -> str:
        if n <= 0 or not text:
            return ""
        enc = self._tok.encode(text, add_special_tokens=False)
        if len(enc.offsets) <= n:
            return text
        return text[: enc.offsets[n - 1][1]]


class TiktokenCounter:
    def __init__(self, encoding: str) -> None:
        try:
            import tiktoken

            self._enc: Any = tiktoken.get_encoding(encoding)
        except Exception as exc:  # not installed, or the encoding file cannot be fetched offline
            raise ConfigError(
                f"tiktoken encoding {encoding!r} is not available: {str(exc).splitlines()[0][:160]}",
                hint="install the openai extra and make the encoding available, or use the default wordpiece",
            ) from exc
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=())) if text else 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def prefix(self, text: str, n: int) -> str:
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= n:
            return text
        return self._enc.decode(ids[: max(0, n)])


def get_counter(name: str | None = None) -> TokenCounter:
    if name in (None, "", "wordpiece", WordPieceCounter.name):
        return WordPieceCounter()
    if name.startswith("tiktoken:"):
        return TiktokenCounter(name.split(":", 1)[1])
    raise ConfigError(f"unknown tokenizer {name!r}", hint="wordpiece or tiktoken:<encoding>")
