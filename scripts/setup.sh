#!/usr/bin/env bash
# Create ./.venv and install academiceval with every extra (CPU torch pinned; see pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
# torch first, alone and pinned, so nothing later pulls a CUDA build
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".[all]"
