"""The one content hash of the project: SHA-256, as hex, of UTF-8 text or bytes.

Records, caches, manifests and seeds all key on it, so the same text hashes the same in every stage (a prompt
hashed when a round is built is the prompt hash a run records and a scorer reads). Callers that want a shorter
key take a prefix of the hex; callers that want a seed take `stable_int`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def sha256_hex(data: str | bytes) -> str:
    """Hex SHA-256 of `data` (text is encoded as UTF-8)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_json(obj: Any) -> str:
    """Hex SHA-256 of `obj` as JSON with sorted keys (values JSON cannot hold written with `str`): the hash of a
    configuration does not depend on the order its options were given in."""
    return sha256_hex(json.dumps(obj, sort_keys=True, default=str))


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks (PDFs and data files need not fit in memory twice)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def stable_int(text: str, hex_digits: int = 8) -> int:
    """A seed from text: the first `hex_digits` hex digits of its hash as an integer (the same in every process,
    unlike `hash()`)."""
    return int(sha256_hex(text)[:hex_digits], 16)
