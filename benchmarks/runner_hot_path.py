"""What each change to the runner's per-request path bought: each piece timed against a base tree's own code, in
one process, interleaved.

`benchmarks/runner_overhead.py` gives the whole runner's CPU per request against raw aiohttp; this script splits
the difference between two trees into the pieces issue 27 item 4 changed, on the same work (the runner_overhead
workload: abstract prompts over ~1.4 KB windows of real papers, answers as the fake server words them):
  * render: `rounds.prompts.render_prompt` of each tree (the base module loaded from `--base-src`);
  * clean-up: `models.postprocess.postprocess` of each tree;
  * request body: `json.dumps` (what aiohttp's `json=` sends, the base backend) against `pydantic_core.to_json`;
  * answer body: `json.loads` against `models.openai_backend._loads`;
  * prompt memo: `json.JSONEncoder(default=str).encode` (base) against `runs.prepare.Prepared.memo_json`;
  * cache rows: an answer and its memo through `ResponseCache` into a fresh file (2,000 answers, as the runner
    benchmark's run), committed 256 (the base runner's batch) or 1,024 rows at a time.
Each contender runs over the same N items; pairs alternate, REPEATS times; the best and median µs per item are
printed with the ratio base / this (> 1: this tree is cheaper) and the 1-minute load average.

    python benchmarks/runner_hot_path.py --base-src OTHER_TREE/src [--items 500] [--repeats 7]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def load_module(path: Path, name: str) -> ModuleType:
    """A module of the base tree under a private name (its own imports resolve to this tree's package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn: Callable[[], object], n: int) -> float:
    t0 = time.process_time()
    fn()
    return (time.process_time() - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-src", required=True, help="the base tree's src directory")
    ap.add_argument("--items", type=int, default=500, help="prompts (and answers) per measurement")
    ap.add_argument("--repeats", type=int, default=7, help="alternations (>= 5)")
    ap.add_argument("--cache-rows", type=int, default=2000, help="answers (each with its memo) per cache measurement")
    a = ap.parse_args()
    if a.repeats < 5:
        raise SystemExit("--repeats must be at least 5")
    import pydantic_core

    from academiceval.models.base import Completion
    from academiceval.models.cache import ResponseCache
    from academiceval.models.openai_backend import _loads
    from academiceval.models.postprocess import postprocess
    from academiceval.rounds.prompts import render_prompt
    from academiceval.runs.prepare import Prepared
    from academiceval.store.artifacts import load_round
    from academiceval.testing.fake_server import deterministic_answer
    from runner_overhead import build_round

    base = Path(a.base_src)
    old_prompts = load_module(base / "academiceval/rounds/prompts.py", "base_prompts")
    old_post = load_module(base / "academiceval/models/postprocess.py", "base_postprocess")
    tmp = Path(tempfile.mkdtemp(prefix="runner-hot-path-"))
    try:
        view = load_round(build_round(tmp / "round", a.items))
        samples, tdir = view.distinct_samples()[: a.items], view.templates_dir
        prompts = [render_prompt(s, templates_dir=tdir) for s in samples]
        if prompts != [old_prompts.render_prompt(s, templates_dir=tdir) for s in samples]:
            raise SystemExit("INVALID: the two trees render different prompts")
        answers = [deterministic_answer(p, 24, 512) for p in prompts]
        payloads = [
            {"model": "fake-model", "messages": [{"role": "user", "content": p}], "temperature": 0.0, "max_tokens": 512}
            for p in prompts
        ]
        bodies = [
            json.dumps(
                {
                    "id": "chatcmpl-x",
                    "object": "chat.completion",
                    "model": "fake-model",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 400, "completion_tokens": 24, "total_tokens": 424},
                }
            )
            for t in answers
        ]
        preps = [Prepared(prompt=p, prompt_sha256=hashlib.sha256(p.encode()).hexdigest()) for p in prompts]
        memo_fields = ("prompt_sha256", "input_tokens", "tokens_cut", "truncation", "skipped", "reason", "extras")
        memo_dicts = [{k: getattr(x, k) for k in memo_fields} for x in preps]
        old_memo = json.JSONEncoder(default=str).encode
        if [x.memo_json() for x in preps] != [old_memo(d) for d in memo_dicts]:
            raise SystemExit("INVALID: the memo texts differ")
        if [postprocess("abstract", t) for t in answers] != [old_post.postprocess("abstract", t) for t in answers]:
            raise SystemExit("INVALID: the clean-up differs")
        completion = Completion(text=answers[0], output_tokens=24, finish_reason="stop", raw={"served_model": "m"})
        ident = {"backend": "openai", "model": "fake-model"}

        keys = [hashlib.sha256(f"{i}".encode()).hexdigest() for i in range(a.cache_rows)]
        memo_texts = [old_memo(memo_dicts[i % len(memo_dicts)]) for i in range(a.cache_rows)]

        def cache_rows(batch: int) -> Callable[[], None]:
            def run() -> None:  # a fresh cache file, opened before the clock starts counting rows
                d = tmp / f"cache-{batch}"
                shutil.rmtree(d, ignore_errors=True)
                c = ResponseCache(d / "responses.sqlite", batch=batch)
                c.put_memo("open", "{}")
                c.flush()
                t0 = time.process_time()
                for k, memo in zip(keys, memo_texts, strict=True):
                    c.put_memo("m" + k, memo)
                    c.put(k, ident, k, completion)
                c.close()
                cache_cpu.append(time.process_time() - t0)

            return run

        n = len(samples)
        cache_cpu: list[float] = []
        pieces: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
            (
                "render_prompt",
                lambda: [old_prompts.render_prompt(s, templates_dir=tdir) for s in samples],
                lambda: [render_prompt(s, templates_dir=tdir) for s in samples],
            ),
            (
                "postprocess (abstract)",
                lambda: [old_post.postprocess("abstract", t) for t in answers],
                lambda: [postprocess("abstract", t) for t in answers],
            ),
            (
                "request body",
                lambda: [json.dumps(p).encode() for p in payloads],
                lambda: [pydantic_core.to_json(p) for p in payloads],
            ),
            ("answer body", lambda: [json.loads(b) for b in bodies], lambda: [_loads(b) for b in bodies]),
            ("prompt memo JSON", lambda: [old_memo(d) for d in memo_dicts], lambda: [x.memo_json() for x in preps]),
            ("cache answer + memo rows", cache_rows(256), cache_rows(1024)),
        ]
        load = os.getloadavg()
        print(
            f"# runner hot path, piece by piece: {n} items per measurement, {a.repeats} interleaved repeats; "
            f"base = {base}; {os.cpu_count()} CPUs shared; load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
        )
        head = f"  {'piece':<26} {'base µs/item (best)':>20} {'this µs/item (best)':>20} {'base/this':>10}"
        print(head)
        print("  " + "-" * (len(head) - 2))
        for name, before, after in pieces:
            b_runs, a_runs = [], []
            for i in range(a.repeats):
                pair = [(b_runs, before), (a_runs, after)]
                for runs, fn in pair if i % 2 == 0 else pair[::-1]:
                    runs.append(timed(fn, n))
                    if cache_cpu:  # the cache piece: its rows only, per answer (an answer and its memo)
                        runs[-1] = cache_cpu.pop() / a.cache_rows * 1e6
            b_med, a_med = statistics.median(b_runs), statistics.median(a_runs)
            print(
                f"  {name:<26} {b_med:>12.2f} ({min(b_runs):5.2f}) {a_med:>12.2f} ({min(a_runs):5.2f})"
                f" {b_med / a_med:>9.2f}x"
            )
        print(f"# load now {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
