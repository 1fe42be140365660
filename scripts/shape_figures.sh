#!/bin/bash
# The shape of the source tree (issue 22): size, task-name branches in core, function-level imports, type
# ignores, hashing, raw SQL on core tables outside store, CLI size, import contracts.
#     bash scripts/shape_figures.sh [TREE]   (default: this checkout; TREE/src is measured)
cd "${1:-$(dirname "$0")/..}"
echo "src lines: $(find src/academiceval -name '*.py' | xargs cat | wc -l)  files: $(find src/academiceval -name '*.py' | wc -l)"
echo "task-name branches in core: $(grep -rn 'task == "\|task in (' src/academiceval/{store,rounds,models,runs,scores,report} | wc -l)"
echo "function-level imports of academiceval modules: $(grep -rn '^    \+from academiceval\|^    \+import academiceval' src/academiceval | wc -l)"
echo "type: ignore: $(grep -rn 'type: ignore' src/academiceval | wc -l)"
echo "hashlib outside store/hashing (streaming digests): $(grep -rln 'hashlib' src/academiceval | grep -v store/hashing.py | wc -l) files"
echo "raw SQL on core tables outside store: $(grep -rnE '(FROM|JOIN|INTO|UPDATE) (paper_meta|authorship|parsed_paper)\b' src/academiceval --include=*.py | grep -v '^src/academiceval/store/' | wc -l)"
echo "CLI commands: $(${PYTHON:-.venv/bin/python} -c "
from academiceval.cli.main import app
print(len(app.registered_commands), 'top-level +', len(app.registered_groups), 'groups')")"
${LINT_IMPORTS:-.venv/bin/lint-imports} --no-logo 2>&1 | grep -i "kept\|broken" | tail -4
