#!/usr/bin/env bash
# The whole test suite (unit + end-to-end on ../shared/corpus), then ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .venv/bin/activate ] && . .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
ruff check src tests benchmarks
python -m pytest -q -p no:cacheprovider "$@"
