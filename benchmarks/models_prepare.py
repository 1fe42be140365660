"""Prompt preparation, retrieval and baselines on real papers, offline.

Prints, for samples built from ../shared/corpus (or from a built round with --round):
  A. truncation: samples/s of `prepare_prompt` with paragraph-memoised exact counting against re-encoding
     every rendering (same policy, same output, measured in the same run), and the tokens our policy keeps
     against a policy that only drops whole demonstrations;
  B. retrieval: samples/s and chunks/s for bm25, tfidf and dense (packaged MiniLM), and how often the ranking
     differs from "the last k chunks" (what the original, query-blind code returned) and between two queries;
  C. baselines: samples/s and ROUGE-L F1 against the reference abstract (the leaderboard floor).

    python benchmarks/models_prepare.py --quick        # ~10 samples, a minute or two on 2 cores
    python benchmarks/models_prepare.py                # all 49 unarXive papers
    python benchmarks/models_prepare.py --round ~/.academiceval/rounds/demo
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import time
from datetime import date
from pathlib import Path

from academiceval.models.base import GenerationOptions
from academiceval.models.baselines import BaselineBackend
from academiceval.models.prepare import prepare_prompt
from academiceval.models.rag import RagConfig, chunk_sample, retrieve
from academiceval.models.tokenize import load_tokenizer
from academiceval.rounds.prompts import render_prompt
from academiceval.store.models import Demo, Sample

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
UNARXIVE = CORPUS / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
_PLACEHOLDER = re.compile(r"\{\{(?:formula|cite|figure|table):[^}]*\}\}")


def corpus_samples(n_demos: int, seed: int) -> list[Sample]:
    """Abstract-writing samples: body (without conclusions) + title -> abstract, with random other papers as demos."""
    papers = []
    for line in UNARXIVE.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        paras = [(p.get("section") or "", " ".join(_PLACEHOLDER.sub("", p["text"]).split())) for p in d["body_text"]]
        body = "\n\n".join(t for s, t in paras if t and "conclu" not in s.lower())
        if len(body.split()) < 500:
            continue
        title = " ".join(d["metadata"]["title"].split())
        papers.append((d["paper_id"], title, " ".join(d["abstract"]["text"].split()), body))
    rng = random.Random(seed)
    out = []
    for pid, title, abstract, body in papers:
        others = rng.sample([p for p in papers if p[0] != pid], n_demos)
        demos = [
            Demo(
                arxiv_id=o[0],
                published=date(2022, 12, 1),
                fields={"body": o[3], "title": o[1]},
                label=o[2],
                origin="random",
            )
            for o in others
        ]
        out.append(
            Sample(
                sample_id=f"abstract/random:{n_demos}/{pid}",
                round="bench",
                task="abstract",
                setting=f"random:{n_demos}",
                split="test",
                arxiv_id=pid,
                paper_id=pid,
                published=date(2022, 12, 22),
                fields={"body": body, "title": title},
                demos=demos,
                label=abstract,
            )
        )
    return out


def round_samples(path: str, limit: int) -> list[Sample]:
    """Up to `limit` samples spread over the round's configs (test split first), so every task/setting shows."""
    from academiceval.store.artifacts import load_round

    loaded = load_round(path)
    configs = loaded.configs()
    per = max(1, limit // max(1, len(configs)))
    out: list[Sample] = []
    for config in configs:
        picked = [s for s in loaded.samples(config) if s.split == "test"][:per]
        out.extend(picked)
    return out[:limit]


def linear_policy(sample: Sample, tok, budget: int) -> tuple[str, int]:
    """The straightforward alternative: drop demos one at a time (re-rendering each time), then cut the body."""
    demos = list(sample.demos)
    view = sample
    while True:
        view = sample.model_copy(update={"demos": demos})
        prompt = render_prompt(view)
        n = tok.count(prompt)
        if n <= budget or not demos:
            break
        demos = demos[:-1]
    if n > budget:
        body = view.fields["body"]
        keep = tok.count(body) - (n - budget)
        while keep > 0:
            cut = tok.truncate_tail(body, keep)
            prompt = render_prompt(view.model_copy(update={"fields": {**view.fields, "body": cut}}))
            n = tok.count(prompt)
            if n <= budget:
                break
            keep -= max(1, n - budget)
    return prompt, n


def fresh_bert(*, memo: bool):
    """A new estimator instance (its own paragraph memo), with or without paragraph memoisation."""
    from tokenizers import Tokenizer as RawTokenizer

    from academiceval.models.embedded import bert_tokenizer_json
    from academiceval.models.tokenize import from_tokenizers

    tok = from_tokenizers(RawTokenizer.from_file(str(bert_tokenizer_json())), "bert-base-uncased")
    tok.additive = memo
    return tok


def bench_truncation(samples: list[Sample], budgets: list[int]) -> None:
    full = [fresh_bert(memo=False).count(render_prompt(s)) for s in samples]
    print(f"\nA. truncation  ({len(samples)} samples, mean full prompt {statistics.mean(full):,.0f} bert tokens)")
    print("   speed: prepare_prompt with paragraph-memoised counting vs re-encoding every rendering (same policy);")
    print("   content: tokens kept by our policy (shorten the last demo) vs dropping whole demos only")
    print(
        f"{'budget':>8} {'memo samples/s':>15} {'re-encode samples/s':>20} {'speed-up':>9} {'ours kept':>10} "
        f"{'whole-demos kept':>17} {'policies'}"
    )
    for budget in budgets:
        results = {}
        for memo in (True, False):
            tok = fresh_bert(memo=memo)
            t0 = time.perf_counter()
            results[memo] = [
                prepare_prompt(s, tokenizer=tok, context_length=budget + 512, max_output_tokens=512) for s in samples
            ]
            results[memo, "s"] = time.perf_counter() - t0
        ours = results[True]
        assert [p.prompt for p in ours] == [p.prompt for p in results[False]]  # memo changes speed, not output
        assert all(p.input_tokens <= budget and not p.skipped for p in ours)
        lin = [linear_policy(s, fresh_bert(memo=False), budget) for s in samples]
        assert all(n <= budget for _, n in lin)
        policies: dict[str, int] = {}
        for p in ours:
            policies[p.policy] = policies.get(p.policy, 0) + 1
        n = len(samples)
        t_memo, t_plain = results[True, "s"], results[False, "s"]
        print(
            f"{budget:>8,} {n / t_memo:>15.2f} {n / t_plain:>20.2f} {t_plain / t_memo:>8.2f}x "
            f"{statistics.mean(p.input_tokens for p in ours):>10,.0f} {statistics.mean(k for _, k in lin):>17,.0f} "
            f"{policies}"
        )


def bench_retrieval(samples: list[Sample], kinds: list[str]) -> None:
    tok = load_tokenizer()
    t0 = time.perf_counter()
    n_chunks = sum(len(chunk_sample(s, tok)) for s in samples)  # also warms the chunk memo
    t_chunk = time.perf_counter() - t0
    print(f"\nB. retrieval  ({len(samples)} samples, {n_chunks} chunks of 512/64 bert tokens, top-12, task query)")
    print(f"   chunking (tokenise with offsets, first time): {len(samples) / t_chunk:.2f} samples/s")
    print(
        f"{'retriever':>10} {'samples/s':>10} {'chunks/s':>10} {'!= last-12':>11} {'!= other query':>15} "
        f"{'top-1 from body':>16}"
    )
    for kind in kinds:
        config = RagConfig(retriever=kind, top_k=12)
        config.retriever_obj()  # load the model outside the timing
        t0 = time.perf_counter()
        ranked = [retrieve(s, config, tok) for s in samples]
        dt = time.perf_counter() - t0
        not_last = differs = from_body = 0
        for s, r, other in zip(samples, ranked, samples[1:] + samples[:1], strict=True):
            chunks = chunk_sample(s, tok)
            ids = [x.chunk.chunk_id for x in r]
            not_last += ids != [c.chunk_id for c in chunks[-12:]]
            alt = [x.chunk.chunk_id for x in retrieve(s, config, tok, query=other.fields.get("title", "x"))]
            differs += alt != ids
            from_body += bool(r) and r[0].chunk.source == "body"
        n = len(samples)
        print(
            f"{kind:>10} {n / dt:>10.2f} {n_chunks / dt:>10.1f} {not_last / n:>10.0%} {differs / n:>14.0%} "
            f"{from_body / n:>15.0%}"
        )


def bench_baselines(samples: list[Sample]) -> None:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    print(f"\nC. baselines  ({len(samples)} abstract samples; ROUGE-L F1 against the paper's own abstract)")
    print(f"{'baseline':>11} {'samples/s':>10} {'ROUGE-L F1':>11} {'mean words':>11}")
    opts = GenerationOptions()
    for name in ("lead", "demo-copy", "extractive"):
        backend = BaselineBackend(name)
        t0 = time.perf_counter()
        outs = [asyncio.run(backend.generate("", opts, s)) for s in samples]
        dt = time.perf_counter() - t0
        f1 = statistics.mean(
            scorer.score(s.label, o.text)["rougeL"].fmeasure for s, o in zip(samples, outs, strict=True)
        )
        words = statistics.mean(len(o.text.split()) for o in outs)
        print(f"{name:>11} {len(samples) / dt:>10.1f} {f1:>11.4f} {words:>11.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 samples; retrieval on 2 of them")
    ap.add_argument("--round", help="a built round directory (samples of every config, up to --limit)")
    ap.add_argument("--limit", type=int, default=49)
    ap.add_argument("--demos", type=int, default=4, help="random demonstrations per corpus sample")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--retrieval-limit", type=int, default=None, help="samples for part B (dense is slow on CPU)")
    args = ap.parse_args()
    limit = 10 if args.quick else args.limit
    samples = round_samples(args.round, limit) if args.round else corpus_samples(args.demos, args.seed)[:limit]
    print(f"{len(samples)} samples from {args.round or UNARXIVE}")
    with_demos = [s for s in samples if s.demos]
    if with_demos:
        bench_truncation(with_demos, [4_000, 16_000] if args.quick else [4_000, 16_000, 32_000])
    n_retrieval = args.retrieval_limit or (2 if args.quick else len(samples))
    bench_retrieval(samples[:n_retrieval], ["bm25", "tfidf", "dense"])
    bench_baselines([s for s in samples if s.task == "abstract"] or samples)


if __name__ == "__main__":
    main()
