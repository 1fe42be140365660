"""The built-in metrics: ROUGE (-l, -1, -2, -lsum), BERTScore and the pairwise LLM judge.

Each is a small scorer (`scores.scorer`: how one batch or one pair is scored; the loop is `score_job`),
registered at the bottom of this module. Heavy libraries (torch, the judge's backend) are imported when a scorer is
built, never on import.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from academiceval.models.cache import ResponseCache
from academiceval.scores.bertscore import BertScorer
from academiceval.scores.bertscore_baseline import STORE, baseline_from_pairs, rescale, unrelated_pairs
from academiceval.scores.embed_cache import EmbeddingCache
from academiceval.scores.judge import Judge
from academiceval.scores.judge_templates import resolve_template
from academiceval.scores.registry import Metric, MetricOptions, Options, register
from academiceval.scores.rouge import FastRouge
from academiceval.scores.scorer import (
    AsyncScorer,
    BatchScorer,
    Needs,
    RunJob,
    Scored,
    ScoreItem,
    config_hash,
    output_sha,
)
from academiceval.store.models import RunRecord

QUESTION_FIELDS = ("question", "instruction")  # sample fields that make an item long-document QA for the judge
ROUGE_TYPES = {"rouge-l": "rougeL", "rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-lsum": "rougeLsum"}


class BertScoreOptions(Options):
    model: str = "all-MiniLM-L6-v2"  # packaged, offline; or a local path / cached name
    layer: int | None = None  # None: the model's usual layer
    idf: bool = False  # weight tokens by idf over the run's references
    # baseline file (LAYER,P,R,F): values rescaled; "store": raw values and, beside them, values rescaled against
    # unrelated pairs of the round's labels of the same task (scores.bertscore_baseline)
    baseline: str | None = None
    long_inputs: Literal["truncate", "window"] = "window"  # issue 16: nothing cut by default; truncate is opt-in
    # tokens between window starts (None: half a window, the default geometry); a larger stride embeds fewer
    # tokens and moves F (measured in notes/scores.md, issue 27), so it gets its own metric name and config hash
    window_stride: int | None = Field(default=None, ge=1)


class JudgeOptions(Options):
    against: str = "reference"  # the round's reference, or another run directory (pairwise, same sample ids)
    concurrency: int = Field(default=8, ge=1)  # judge requests in flight (not part of the configuration hash)
    template: str = "ours"  # long-document QA: ours, or leval:PATH (L-Eval's own, from its llm_eval.py)


class RougeMetric(BatchScorer):
    """ROUGE F/P/R against the reference, rouge-score semantics (scores.rouge.FastRouge)."""

    batch_size = 2000  # one native batch call per chunk (all cores), progress between chunks

    def __init__(self, name: str) -> None:
        self.metric_name = name
        self.rtype = ROUGE_TYPES[name]
        self.scorer = FastRouge([self.rtype], use_stemmer=True)

    def config(self) -> dict[str, Any]:
        return {"metric": "rouge", "type": self.rtype, "use_stemmer": True, "semantics": "rouge-score 0.1.2"}

    def score_batch(self, items: Sequence[ScoreItem], job: RunJob) -> list[Scored]:
        scored = self.scorer.score_batch([it.label or "" for it in items], [it.output for it in items])
        rows = (x[self.rtype] for x in scored)
        return [Scored(values={"p": s.precision, "r": s.recall, "f": s.fmeasure}) for s in rows]


class BertScoreMetric(BatchScorer):
    """BERTScore against the reference; the record name carries model, layer and options."""

    def __init__(self, opts: MetricOptions) -> None:
        o: BertScoreOptions = opts.of("bertscore")
        self.bert = BertScorer(
            o.model,
            layer=o.layer,
            idf=o.idf,
            long_inputs=o.long_inputs,
            baseline=o.baseline,
            window_stride=o.window_stride,
        )
        if opts.home:  # each label is embedded once per workspace, not per run and call (issue 27)
            self.bert.embedding_cache = EmbeddingCache.in_workspace(opts.home)
        self.batch_size = opts.batch_size
        self.metric_name = self.bert.metric_name  # carries model, layer and options
        self._baselines: dict[tuple[str, str], dict[str, Any] | None] = {}  # (round, task) -> store baseline

    def config(self) -> dict[str, Any]:
        return self.bert.config()

    def loading(self) -> str | None:
        return self.bert.loading()

    def load(self) -> None:
        self.bert.load()

    def score_batch(self, items: Sequence[ScoreItem], job: RunJob) -> list[Scored]:
        # idf weights come from every reference of the run, not just this batch's — each sample once (the epochs
        # of a repeated run share one reference)
        unique = {r.sample_id: r for r in job.recs}.values()
        idf_refs = [job.label_of(r) or "" for r in unique] if self.bert.idf else None
        scored = self.bert.score([it.output for it in items], [it.label or "" for it in items], idf_refs=idf_refs)
        out = []
        for it, s in zip(items, scored, strict=True):
            values, details = (
                s.values(),
                {
                    "cand_tokens": s.cand_tokens,
                    "ref_tokens": s.ref_tokens,
                    "cand_tokens_cut": s.cand_cut,
                    "ref_tokens_cut": s.ref_cut,
                },
            )
            if self.bert.baseline == STORE:  # the rescaled values beside the raw ones
                base = self._store_baseline(job, it.rec.task, idf_refs)
                details["baseline"] = base
                if base is not None:
                    rescaled = rescale((s.p, s.r, s.f), (base["p"], base["r"], base["f"]))
                    values |= {f"{k}_rescaled": v for k, v in zip(("p", "r", "f"), rescaled, strict=True)}
            out.append(Scored(values=values, details=details))
        return out

    def _store_baseline(self, job: RunJob, task: str, idf_refs: list[str] | None) -> dict[str, Any] | None:
        """The task's baseline from unrelated pairs of the round's labels (distinct papers), once per round and
        task; None when the round has fewer than two labels of the task (then only the raw values are recorded)."""
        key = (job.spec.round, task)
        if key not in self._baselines:
            labels = {s.arxiv_id: s.label for s in job.samples.values() if s.task == task and s.label}
            pairs = unrelated_pairs(list(labels.values()), seed=int(output_sha(task), 16))
            if not pairs:
                self._baselines[key] = None
            else:
                p, r, f = baseline_from_pairs(self.bert, pairs, idf_refs=idf_refs)
                self._baselines[key] = {"p": p, "r": r, "f": f, "pairs": len(pairs), "task": task}
        return self._baselines[key]


class JudgeMetric(AsyncScorer):
    """Pairwise LLM judge (both orders) against the reference or another run's output for the same sample."""

    def __init__(self, opts: MetricOptions) -> None:
        cache = opts.cache
        if cache is None and opts.home is not None:
            cache = ResponseCache.in_workspace(Path(opts.home))
        o: JudgeOptions = opts.of("judge")
        template = resolve_template(o.template)
        self.judge = Judge(opts.judge, cache=cache, concurrency=o.concurrency, template=template)
        self.against = o.against
        self.others: dict[str, RunRecord] | None = None
        vs = "reference" if str(self.against) == "reference" else Path(self.against).name
        self.metric_name = f"judge-{self.judge.backend.model.replace('/', '_')}-vs-{vs}"
        if template is not None:  # another template's verdicts are other numbers: their own records
            self.metric_name += f"-{template.name}"

    def config(self) -> dict[str, Any]:
        return self.judge.config() | {
            "against": "reference" if str(self.against) == "reference" else Path(self.against).name
        }

    def begin(self, job: RunJob) -> dict[str, Any]:
        cfg = self.config()
        self.others = None
        if str(self.against) != "reference":
            self.others = job.read_run(Path(self.against))
            cfg["against_outputs"] = config_hash({k: output_sha(v.output) for k, v in sorted(self.others.items())})
        return cfg

    def _other_text(self, item: ScoreItem) -> str | None:
        if self.others is None:
            return item.label
        other = self.others.get(item.rec.sample_id)
        return None if other is None or other.error or not other.output else other.output

    def check(self, item: ScoreItem) -> str | None:
        if self._other_text(item) is None:
            return f"no output of {Path(self.against).name} for this sample"
        return None

    async def score_async(self, item: ScoreItem) -> Scored:
        rec, fields = item.rec, (item.sample.fields if item.sample is not None else {})
        # a sample with a question (long-document QA: L-Eval) is judged against its reference answer, question shown
        question = next((fields[k] for k in QUESTION_FIELDS if fields.get(k)), None)
        pr = await self.judge.judge_pair(
            rec.task,
            fields.get("title", ""),
            rec.output,
            self._other_text(item) or "",
            question=question,
            reference=item.label or "",
        )
        details = {
            "orders": [
                {"candidate_first": j.candidate_first, "verdicts": j.raw, "repaired": j.repaired, "error": j.error}
                for j in pr.judgments
            ],
        }
        err = None if pr.judged else "; ".join(j.error or "" for j in pr.judgments)
        return Scored(values=pr.values(), details=details, error=err)

    async def finish(self) -> None:
        close: Any = getattr(self.judge.backend, "aclose", None)
        if close is not None:
            await close()


for _name, _rtype in ROUGE_TYPES.items():
    register(
        Metric(
            _name,
            build=lambda _opts, _n=_name: RougeMetric(_n),
            summary=f"ROUGE ({_rtype}, Porter stemmer) P/R/F against the reference",
        )
    )
register(
    Metric(
        "bertscore",
        build=BertScoreMetric,
        needs=Needs(batched=True),
        summary="BERTScore P/R/F against the reference (record name carries model and layer)",
        options=BertScoreOptions,
    )
)
register(
    Metric(
        "judge",
        build=JudgeMetric,
        needs=Needs(judge=True),
        summary="pairwise LLM judge, both orders, win rate against the reference or another run",
        options=JudgeOptions,
    )
)
