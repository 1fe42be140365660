"""BERTScore pairs/s: ours (windows, truncate) vs bert-score 0.3.13 (truncated), same pairs, same model, one run.

Pairs: real sections of the corpus papers (`academiceval.testing.pairs.real_section_pairs`: abstracts,
Introductions and other sections of the unarXive and SCALAR papers, L-Eval paper-assistant outputs), shuffled
with a fixed seed and taken so that no text is used twice: the label (reference) side and the output (candidate)
side share no text, so a label cache can never serve a candidate.

Contenders, all on the packaged all-MiniLM-L6-v2, layer 6, torch on CPU, each model loaded once before timing:
  bert-score             bert_score.BERTScorer(...).score: cuts every text at 510 tokens (the baseline)
  ours truncate          BertScorer(long_inputs="truncate"): bert-score's semantics, fresh in-memory cache
  ours windows cold      BertScorer() (the default: every token seen), empty workspace embedding cache
  ours windows labels    the same with the labels already in the workspace cache (filled by an untimed call
    cached               before, as for the second and later runs of a round, or a second `score` call)
  ours windows stride N  with --stride N (repeatable): a cheaper window geometry (windows every N tokens instead
    cold / labels cached  of every half window), cold and labels cached; its |F diff| vs today's windows is printed
Each repeat runs every contender once, in an order rotated per repeat (interleaved; same pairs and same number
of repeats for all); the machine's load average is printed before and after every repeat. Figures: best and
median wall seconds, pairs/s, CPU seconds (all threads), and the ratio ours / bert-score (> 1 = ours faster).
A ratio that contradicts itself is refused (exit 2): windows cold embed every token, so they cannot beat our own
truncate mode by more than noise; labels cached do strictly less work than cold.

Scores: max |F diff| of ours truncate vs bert-score, and of today's windows vs the previous window
implementation (tests/scores/bertscore_frozen.py, loaded by path: half-window stride), computed untimed; plus the
frozen code run with today's stride, which must equal ours (only the geometry changed).

    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py                # 40 pairs, 5 repeats
    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py --quick        # 12 pairs, 5 repeats
    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py --quick --swap # the longer text of a pair as the label
    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py --quick --stride 446 --stride 510  # + 2 geometries
The "ceiling" line is token arithmetic: at equal per-token speed (same torch kernels), a contender that embeds k
times bert-score's tokens reaches at most 1/k of its pairs/s.
Needs bert-score (`pip install bert-score==0.3.13 --no-deps` into the venv; not a project dependency).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from academiceval.models.embedded import verified_minilm_dir
from academiceval.scores.bertscore import BertScorer
from academiceval.scores.embed_cache import EmbeddingCache
from academiceval.testing.pairs import real_section_pairs

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", ROOT.parent / "shared" / "corpus"))
FROZEN = ROOT / "tests" / "scores" / "bertscore_frozen.py"
LAYER = 6
Pairs = list[tuple[str, str]]  # (label, output)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f} (1/5 min, {os.cpu_count()} cores)"


def select_pairs(corpus: Path, n: int, seed: int = 0) -> Pairs:
    """`n` (label, output) section pairs, no text used twice (so labels and outputs are disjoint)."""
    pairs = real_section_pairs(corpus)
    random.Random(seed).shuffle(pairs)
    used: set[str] = set()
    chosen: Pairs = []
    for label, output in pairs:
        if label in used or output in used or label == output:
            continue
        chosen.append((label, output))
        used.update((label, output))
        if len(chosen) == n:
            break
    return chosen


@functools.cache
def frozen_scorer_class() -> Any:
    """The previous BertScorer (tests/scores/bertscore_frozen.py), loaded by path, never installed."""
    spec = importlib.util.spec_from_file_location("_bertscore_frozen", FROZEN)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod.BertScorer


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def tokens_embedded(scorer: BertScorer, texts: list[str]) -> int:
    """Content tokens the model runs on for `texts` in the scorer's mode (windows counted whole)."""
    m = scorer._load()
    total = 0
    for content in scorer._content_ids(texts):
        enc = scorer._encode(content)
        if scorer.long_inputs == "window" and len(enc.ids) > m["window"]:
            total += sum(len(ids) - m["specials"] for _, ids in scorer._chunks(enc.ids))
        else:
            total += len(enc.ids) - m["specials"]
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="12 pairs")
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--swap",
        action="store_true",
        help="the same pairs, sides swapped: the longer text of each pair is the label (as a real Introduction or "
        "Related Work label usually is against a model's output)",
    )
    ap.add_argument(
        "--stride",
        type=int,
        action="append",
        default=[],
        help="also time windows every N content tokens (repeatable; today's default is half a window, 255)",
    )
    args = ap.parse_args()
    if args.repeats < 5:
        sys.exit("--repeats must be at least 5 (best/median of N >= 5)")
    n = 12 if args.quick else args.pairs
    try:
        import bert_score
    except ImportError:
        sys.exit("bert-score is not installed: pip install bert-score==0.3.13 --no-deps (benchmark only)")
    import torch

    pairs = select_pairs(CORPUS, n)
    if args.swap:
        pairs = [(a, b) if len(a) >= len(b) else (b, a) for a, b in pairs]
    labels, outputs = [a for a, _ in pairs], [b for _, b in pairs]
    path = str(verified_minilm_dir())
    print(
        f"{load()}  torch {torch.__version__}, {torch.get_num_threads()} threads  "
        f"bert-score {importlib.metadata.version('bert-score')} (its __version__ says {bert_score.__version__})"
    )

    t0 = time.perf_counter()
    BertScorer(long_inputs="truncate")._load()
    t_ours_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = bert_score.BERTScorer(model_type=path, num_layers=LAYER, lang="en")
    t_theirs_load = time.perf_counter() - t0
    print(
        f"model load once per process (imports included for the first): ours {t_ours_load:.2f} s, "
        f"bert-score {t_theirs_load:.2f} s"
    )

    probe_w, probe_t = BertScorer(), BertScorer(long_inputs="truncate")
    prev_geometry = frozen_scorer_class()("all-MiniLM-L6-v2", layer=LAYER)
    tok_trunc = tokens_embedded(probe_t, list(dict.fromkeys(labels + outputs)))
    tok_cold = tokens_embedded(probe_w, list(dict.fromkeys(labels + outputs)))
    tok_warm = tokens_embedded(probe_w, list(dict.fromkeys(outputs)))
    tok_prev = tokens_embedded(prev_geometry, list(dict.fromkeys(labels + outputs)))  # same methods, old stride
    lab_len = [len(c) for c in probe_t._content_ids(labels)]
    out_len = [len(c) for c in probe_t._content_ids(outputs)]
    print(
        f"pairs: {len(pairs)}  tokens per label median {statistics.median(lab_len):.0f} (max {max(lab_len)}), "
        f"per output median {statistics.median(out_len):.0f} (max {max(out_len)}); "
        f"over 510: {sum(x > 510 for x in lab_len)} labels, {sum(x > 510 for x in out_len)} outputs"
    )
    print(
        f"tokens embedded: truncated {tok_trunc:,}  windows cold {tok_cold:,} ({tok_cold / tok_trunc:.2f}x)  "
        f"labels cached {tok_warm:,} ({tok_warm / tok_trunc:.2f}x)  previous windows {tok_prev:,} "
        f"({tok_prev / tok_trunc:.2f}x)"
    )

    ceiling = [f"windows cold {tok_trunc / tok_cold:.2f}x"]
    for stride in args.stride:
        alt = BertScorer(window_stride=stride)
        tok_alt = tokens_embedded(alt, list(dict.fromkeys(labels + outputs)))
        tok_alt_warm = tokens_embedded(alt, list(dict.fromkeys(outputs)))
        print(
            f"tokens embedded, windows every {stride} tokens: cold {tok_alt:,} ({tok_alt / tok_trunc:.2f}x)  "
            f"labels cached {tok_alt_warm:,} ({tok_alt_warm / tok_trunc:.2f}x)"
        )
        ceiling.append(f"stride {stride} cold {tok_trunc / tok_alt:.2f}x")
    print(
        f"ceiling vs bert-score at equal per-token speed: {', '.join(ceiling)}; "
        f"labels cached {tok_trunc / tok_warm:.2f}x"
    )

    with tempfile.TemporaryDirectory(prefix="bertscore-speed-") as tmp_dir:
        measure(pairs, theirs, prev_geometry, probe_w, Path(tmp_dir), args.repeats, tok_trunc, tok_cold, args.stride)


def measure(
    pairs: Pairs,
    theirs: Any,
    prev_geometry: Any,
    probe_w: BertScorer,
    tmp: Path,
    repeats: int,
    tok_trunc: int,
    tok_cold: int,
    strides: list[int],
) -> None:
    """The interleaved repeats, the table, the score checks and the refusals (workspace caches under `tmp`)."""
    labels, outputs = [a for a, _ in pairs], [b for _, b in pairs]

    def run_theirs() -> list[float]:
        _, _, f = theirs.score(outputs, labels)
        return [float(x) for x in f]

    def run_trunc() -> list[float]:
        return [r.f for r in BertScorer(long_inputs="truncate").score(outputs, labels)]

    def cold_cache(k: int) -> EmbeddingCache:
        return EmbeddingCache(tmp / f"cold-{k}.sqlite")

    contenders: dict[str, Callable[[int], tuple[float, float, list[float]]]] = {
        "bert-score": lambda k: timed(run_theirs),
        "ours truncate": lambda k: timed(run_trunc),
        "ours windows cold": lambda k: timed(
            lambda: [r.f for r in BertScorer(embedding_cache=cold_cache(k)).score(outputs, labels)]
        ),
    }
    warm_path = tmp / "labels.sqlite"
    BertScorer(embedding_cache=warm_path).score(labels, labels)  # untimed: the labels, as a first run leaves them
    contenders["ours windows labels cached"] = lambda k: timed(
        lambda: [r.f for r in BertScorer(embedding_cache=warm_path).score(outputs, labels)]
    )
    for stride in strides:  # a cheaper geometry, cold and with its own labels cached (own cache file)
        warm_alt = tmp / f"labels-{stride}.sqlite"
        BertScorer(embedding_cache=warm_alt, window_stride=stride).score(labels, labels)  # untimed
        contenders[f"ours stride {stride} cold"] = functools.partial(_alt_cold, tmp, stride, outputs, labels)
        contenders[f"ours stride {stride} labels cached"] = lambda k, p=warm_alt, n=stride: timed(
            lambda: [r.f for r in BertScorer(embedding_cache=p, window_stride=n).score(outputs, labels)]
        )

    names = list(contenders)
    walls: dict[str, list[float]] = {k: [] for k in names}
    cpus: dict[str, list[float]] = {k: [] for k in names}
    scores: dict[str, list[float]] = {}
    loads: list[float] = []
    for rep in range(repeats):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        loads.append(os.getloadavg()[0])
        line = [f"repeat {rep + 1}/{repeats}: {load()} |"]
        for name in order:
            wall, cpu, f = contenders[name](rep)
            walls[name].append(wall)
            cpus[name].append(cpu)
            scores[name] = f
            line.append(f"{name} {wall:.1f}s")
        loads.append(os.getloadavg()[0])
        print(" ".join(line) + f" | {load()}", flush=True)

    print(
        f"\nload average (1 min) over the repeats: min {min(loads):.2f}, max {max(loads):.2f} on "
        f"{os.cpu_count()} cores; best = least disturbed run, median = typical"
    )
    base_best, base_med = min(walls["bert-score"]), statistics.median(walls["bert-score"])
    base_cpu = statistics.median(cpus["bert-score"])
    print(
        f"{'contender':<28} {'best s':>8} {'median s':>9} {'pairs/s':>8} {'CPU s':>7}  ratio vs bert-score "
        f"(best / median / CPU)"
    )
    for name in names:
        best, med, cpu = min(walls[name]), statistics.median(walls[name]), statistics.median(cpus[name])
        print(
            f"{name:<28} {best:8.2f} {med:9.2f} {len(pairs) / best:8.2f} {cpu:7.1f}  "
            f"{base_best / best:.2f}x / {base_med / med:.2f}x / {base_cpu / cpu:.2f}x"
        )

    d_trunc = max(abs(a - b) for a, b in zip(scores["ours truncate"], scores["bert-score"], strict=True))
    new_w = scores["ours windows cold"]
    d_warm = max(abs(a - b) for a, b in zip(scores["ours windows labels cached"], new_w, strict=True))
    prev = [r.f for r in prev_geometry.score(outputs, labels)]
    d_prev = [abs(a - b) for a, b in zip(new_w, prev, strict=True)]
    same = prev
    if probe_w._stride() != prev_geometry._load()["window"] // 2 - 1:  # an opt-in stride: the frozen code at it
        same_geometry = frozen_scorer_class()("all-MiniLM-L6-v2", layer=LAYER, window_stride=probe_w._stride())
        same = [r.f for r in same_geometry.score(outputs, labels)]
    d_same = max(abs(a - b) for a, b in zip(new_w, same, strict=True))
    print(f"max |F diff|: ours truncate vs bert-score {d_trunc:.2e}; windows labels cached vs cold {d_warm:.2e}")
    print(
        f"windows vs the previous implementation (stride {prev_geometry._load()['window'] // 2 - 1} -> "
        f"{probe_w._stride()} tokens): max |F diff| {max(d_prev):.2e}, mean {statistics.mean(d_prev):.2e}, "
        f"pairs > 1e-4: {sum(d > 1e-4 for d in d_prev)} of {len(d_prev)}; the frozen code at today's stride vs "
        f"ours: {d_same:.2e}"
    )

    for stride in strides:
        d_alt = [abs(a - b) for a, b in zip(scores[f"ours stride {stride} cold"], new_w, strict=True)]
        alt_cold, alt_warm = scores[f"ours stride {stride} cold"], scores[f"ours stride {stride} labels cached"]
        d_alt_warm = max(abs(a - b) for a, b in zip(alt_warm, alt_cold, strict=True))
        print(
            f"windows every {stride} tokens vs today's windows: max |F diff| {max(d_alt):.2e}, mean "
            f"{statistics.mean(d_alt):.2e}, pairs > 1e-4: {sum(d > 1e-4 for d in d_alt)} of {len(d_alt)} "
            f"(labels cached vs cold {d_alt_warm:.2e})"
        )

    refused = []
    if min(walls["ours windows cold"]) < 0.85 * min(walls["ours truncate"]) and tok_cold > tok_trunc:
        refused.append("windows cold beat our truncate mode while embedding more tokens")
    if min(walls["ours windows labels cached"]) > 1.15 * min(walls["ours windows cold"]):
        refused.append("labels cached were slower than cold while doing strictly less work")
    for why in refused:
        print(f"REFUSED: {why}: the machine's load changed under the run, measure again")
    if refused:
        sys.exit(2)


def _alt_cold(tmp: Path, stride: int, outputs: list[str], labels: list[str], k: int) -> tuple[float, float, Any]:
    """Windows every `stride` tokens, empty workspace cache (a fresh file per repeat)."""
    cache = EmbeddingCache(tmp / f"cold-{stride}-{k}.sqlite")
    return timed(lambda: [r.f for r in BertScorer(embedding_cache=cache, window_stride=stride).score(outputs, labels)])


if __name__ == "__main__":
    main()
