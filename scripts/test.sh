#!/usr/bin/env bash
# ruff, the import-linter layering contracts (pyproject.toml), then the whole test suite (unit + end-to-end on
# ../shared/corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .venv/bin/activate ] && . .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
ruff check src tests benchmarks
lint-imports --no-logo
python -m pytest -q -p no:cacheprovider "$@"
