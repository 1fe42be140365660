"""Citation typing: the heuristic's agreement with SCALAR's stored types, before / after (issue 24 item 7).

    PYTHONPATH=src python benchmarks/cloze_type_agreement.py [--before-ref REF]

Every typed citation of SCALAR's 72 paper objects in the corpus (`samples/scalar_paper_obj_{anno,more}`): the
heuristic of this tree vs the one of git ref `--before-ref` (its `families/cloze/classify.py` loaded from git into a
temporary module), each against SCALAR's stored `citation_type` (GPT-4o's, SCALAR's annotator). Prints the
agreement and the confusion (heuristic|scalar) of each.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from academiceval.families.cloze import classify
from academiceval.families.cloze.stats import agreement

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


def old_module(ref: str):  # type: ignore[no-untyped-def]
    src = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{ref}:src/academiceval/families/cloze/classify.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="cloze-types-")) / "classify_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("classify_before", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["classify_before"] = mod
    spec.loader.exec_module(mod)
    shutil.rmtree(path.parent)  # the module is loaded: its file is not needed any more
    return mod


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--before-ref", default="243c45c", help="git ref of the heuristic before (default: the branch start)"
    )
    args = ap.parse_args()
    before = old_module(args.before_ref)
    pairs: dict[str, list[tuple[str, str]]] = {"before": [], "after": []}
    for folder in ("scalar_paper_obj_anno", "scalar_paper_obj_more"):
        for f in sorted((CORPUS / "samples" / folder).glob("*.json")):
            d = json.loads(f.read_bytes())
            for sec in d["sections"].values():
                for c in sec["citations"]:
                    want = classify.SCALAR_TYPES.get(c.get("citation_type"))
                    if want is None:
                        continue
                    a, b = c["start_pos"], c["end_pos"]
                    pairs["before"].append((before.heuristic_type(sec["content"], a, b)[0], want))
                    pairs["after"].append((classify.heuristic_type(sec["content"], a, b)[0], want))
    for name, p in pairs.items():
        res = agreement(p)
        print(
            f"{name:7s} ({args.before_ref if name == 'before' else 'this tree'}): {res['agree']}/{res['n']} = "
            f"{res['rate']:.3f}; confusion (heuristic|scalar): {res['confusion']}"
        )


if __name__ == "__main__":
    main()
