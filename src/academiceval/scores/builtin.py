"""The built-in metrics: ROUGE (-l, -1, -2, -lsum), BERTScore and the pairwise LLM judge.

Each is a small scorer over a `RunJob` (see `scores.registry`), registered at the bottom of this module. Heavy
libraries (torch, the judge's backend) are imported when a scorer is built, never on import.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from academiceval.runs.models import RunRecord
from academiceval.scores.embed_cache import EmbeddingCache
from academiceval.scores.models import ScoreRecord
from academiceval.scores.registry import Metric, MetricOptions, Needs, RunJob, config_hash, output_sha, register

ROUGE_TYPES = {"rouge-l": "rougeL", "rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-lsum": "rougeLsum"}


class RougeMetric:
    """ROUGE F/P/R against the reference, rouge-score semantics (scores.rouge.FastRouge)."""

    def __init__(self, name: str) -> None:
        from academiceval.scores.rouge import FastRouge

        self.metric_name = name
        self.rtype = ROUGE_TYPES[name]
        cfg = {"metric": "rouge", "type": self.rtype, "use_stemmer": True, "semantics": "rouge-score 0.1.2"}
        self.chash = config_hash(cfg)
        self.scorer = FastRouge([self.rtype], use_stemmer=True)

    def score_run(self, job: RunJob) -> list[ScoreRecord]:
        metric, chash = self.metric_name, self.chash
        new: list[ScoreRecord] = []
        pending = job.todo(metric, chash)
        chunk = 2000  # one native batch call per chunk (all cores), progress between chunks
        for start in range(0, len(pending), chunk):
            part = pending[start : start + chunk]
            bad = [job.unusable(rec, metric, chash) for rec in part]
            ok = [rec for rec, b in zip(part, bad, strict=True) if b is None]
            scored = iter(self.scorer.score_batch([job.label_of(r) or "" for r in ok], [r.output for r in ok]))
            for rec, b in zip(part, bad, strict=True):
                if b is None:
                    s = next(scored)[self.rtype]
                    values = {"p": s.precision, "r": s.recall, "f": s.fmeasure}
                    b = job.record(rec, metric, chash, values=values, details={"output_sha256": output_sha(rec.output)})
                new.append(b)
            job.tick(metric, start + len(part), len(pending))
        job.emit(new)
        return new


class BertScoreMetric:
    """BERTScore against the reference; the record name carries model, layer and options."""

    def __init__(self, opts: MetricOptions) -> None:
        from academiceval.scores.bertscore import BertScorer

        c = opts.config
        self.bert = BertScorer(
            c.bertscore_model, layer=c.layer, idf=c.idf, long_inputs=c.long_inputs, baseline=c.baseline
        )
        if opts.home:  # each label is embedded once per workspace, not per run and call (issue 27)
            self.bert.embedding_cache = EmbeddingCache.in_workspace(opts.home)
        self.batch_size = opts.batch_size

    @property
    def metric_name(self) -> str:
        return self.bert.metric_name

    def score_run(self, job: RunJob) -> list[ScoreRecord]:
        bert, metric = self.bert, self.bert.metric_name
        chash = config_hash(bert.config())
        pending = job.todo(metric, chash)
        ok = [r for r in pending if job.unusable(r, metric, chash) is None]
        new = [b for r in pending if (b := job.unusable(r, metric, chash)) is not None]
        job.emit(new)  # written as we go: an interrupted scoring resumes after the last chunk
        written = len(new)
        idf_refs = [job.label_of(r) or "" for r in job.recs] if bert.idf else None
        for start in range(0, len(ok), self.batch_size):
            chunk = ok[start : start + self.batch_size]
            scored = bert.score([r.output for r in chunk], [job.label_of(r) or "" for r in chunk], idf_refs=idf_refs)
            for rec, s in zip(chunk, scored, strict=True):
                details = {
                    "output_sha256": output_sha(rec.output),
                    "cand_tokens": s.cand_tokens,
                    "ref_tokens": s.ref_tokens,
                    "cand_tokens_cut": s.cand_cut,
                    "ref_tokens_cut": s.ref_cut,
                }
                new.append(job.record(rec, metric, chash, values=s.values(), details=details))
            job.emit(new[written:])
            written = len(new)
            job.tick(metric, min(start + self.batch_size, len(ok)), len(ok))
        return new


class JudgeMetric:
    """Pairwise LLM judge (both orders) against the reference or another run's output for the same sample."""

    def __init__(self, opts: MetricOptions) -> None:
        from academiceval.scores.judge import Judge

        cache = opts.cache
        if cache is None and opts.home is not None:
            from academiceval.models.cache import ResponseCache

            cache = ResponseCache.in_workspace(Path(opts.home))
        self.judge = Judge(opts.judge, cache=cache)
        self.against = opts.config.against

    @property
    def metric_name(self) -> str:
        who = self.judge.backend.model.replace("/", "_")
        vs = "reference" if str(self.against) == "reference" else Path(self.against).name
        return f"judge-{who}-vs-{vs}"

    def score_run(self, job: RunJob) -> list[ScoreRecord]:
        """Judge every pending sample; each pair's record is written as soon as both orders are judged."""
        judge, against, metric = self.judge, self.against, self.metric_name
        others: dict[str, RunRecord] | None = None
        cfg = judge.config() | {"against": "reference" if str(against) == "reference" else Path(against).name}
        if str(against) != "reference":
            others = job.read_run(Path(against))
            cfg["against_outputs"] = config_hash({k: output_sha(v.output) for k, v in sorted(others.items())})
        chash = config_hash(cfg)
        pending = job.todo(metric, chash)
        out: list[ScoreRecord] = []
        jobs: list[tuple[RunRecord, str]] = []
        for rec in pending:
            bad = job.unusable(rec, metric, chash)
            if bad is None and others is not None:
                other = others.get(rec.sample_id)
                if other is None or other.error or not other.output:
                    why = f"no output of {Path(against).name} for this sample"
                    bad = job.record(rec, metric, chash, error=why, details={"output_sha256": output_sha(rec.output)})
                else:
                    jobs.append((rec, other.output))
                    continue
            if bad is not None:
                job.emit([bad])
                out.append(bad)
                continue
            jobs.append((rec, job.samples[rec.sample_id].label))
        if jobs:
            out.extend(asyncio.run(self._judge_all(job, jobs, metric, chash)))
        return out

    async def _judge_all(
        self, job: RunJob, jobs: list[tuple[RunRecord, str]], metric: str, chash: str
    ) -> list[ScoreRecord]:
        judge, samples = self.judge, job.samples
        done = 0

        async def one(rec: RunRecord, other_text: str) -> ScoreRecord:
            nonlocal done
            title = samples[rec.sample_id].fields.get("title", "") if rec.sample_id in samples else ""
            pr = await judge.judge_pair(rec.task, title, rec.output, other_text)
            done += 1
            job.tick(metric, done, len(jobs))
            details = {
                "output_sha256": output_sha(rec.output),
                "orders": [
                    {"candidate_first": j.candidate_first, "verdicts": j.raw, "repaired": j.repaired, "error": j.error}
                    for j in pr.judgments
                ],
            }
            err = None if pr.judged else "; ".join(j.error or "" for j in pr.judgments)
            record = job.record(rec, metric, chash, values=pr.values(), details=details, error=err)
            job.emit([record])
            return record

        try:
            return list(await asyncio.gather(*(one(r, o) for r, o in jobs)))
        finally:
            close: Any = getattr(judge.backend, "aclose", None)
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
    )
)
register(
    Metric(
        "judge",
        build=JudgeMetric,
        needs=Needs(judge=True),
        summary="pairwise LLM judge, both orders, win rate against the reference or another run",
    )
)
