"""Strict set-match scoring of ElaipBench-format answers, with the SA/MA breakdown and averaging over runs.

An answer is correct iff its set of letters equals the gold set: no partial credit for MA questions, and an SA
answer naming two letters is wrong (ElaipBench §A.4). Parsing is the shared multiple-choice core's
(`scores.mcq.parse_answer_set`, the cloze family's too): `strict` reads only the last `<answer>…</answer>`;
`lenient` also takes an "Answer: X" line. An unparsed answer scores 0 and is counted apart. ElaipBench reports
the mean of 3 independent runs; `summarize_runs` gives per-run numbers, their mean and spread.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from academiceval.families.elaip.items import ElaipItem
from academiceval.scores.mcq import Parser, parse_answer_set
from academiceval.store.artifacts import append_jsonl

METRIC = "strict-set-accuracy"


@dataclass(frozen=True)
class ElaipScore:
    sample_id: str
    question_type: str
    gold: str
    predicted: str | None  # sorted letters, None when unparsed
    rule: str
    parser: str
    value: float  # 1.0 iff the sets are equal


_RUN_IN_TAG = re.compile(r"<answer>\s*([A-D]{2,4})\s*</answer>(?!.*<answer>)", re.IGNORECASE | re.DOTALL)


def spread_letters(response: str | None) -> str | None:
    """ "<answer>ACD</answer>" → "<answer>A, C, D</answer>": ElaipBench's own answer format is a letter run, which
    the shared core (`parse_answer_set`) reads only with separators. Only the last tag, only 2–4 letters A–D."""
    if not response:
        return response
    return _RUN_IN_TAG.sub(lambda m: "<answer>" + ", ".join(m.group(1)) + "</answer>", response)


def score_answer(item: ElaipItem, response: str | None, *, parser: Parser = "strict") -> ElaipScore:
    got, rule = parse_answer_set(spread_letters(response), n_choices=4, letters=True, parser=parser)
    predicted = "".join(sorted(got)) if got else None
    return ElaipScore(
        item.sample_id,
        item.question_type,
        item.answer,
        predicted,
        rule,
        parser,
        1.0 if predicted == item.answer else 0.0,
    )


def summarize(scores: Sequence[ElaipScore]) -> dict[str, object]:
    """Accuracy (percent) overall and per question type, with n and unparsed counts, for one run."""
    out: dict[str, object] = {"metric": METRIC}
    for key, group in (
        ("all", list(scores)),
        *((t, [s for s in scores if s.question_type == t]) for t in ("SA-MCQ", "MA-MCQ")),
    ):
        n = len(group)
        out[key] = {
            "n": n,
            "correct": int(sum(s.value for s in group)),
            "accuracy": 100.0 * sum(s.value for s in group) / n if n else None,
            "unparsed": sum(s.predicted is None for s in group),
        }
    return out


def summarize_runs(runs: Sequence[Sequence[ElaipScore]]) -> dict[str, object]:
    """Per-run summaries plus the mean and (sample) standard deviation of each accuracy across runs."""
    per_run = [summarize(r) for r in runs]
    agg: dict[str, object] = {"metric": METRIC, "runs": len(runs), "per_run": per_run}
    for key in ("all", "SA-MCQ", "MA-MCQ"):
        accs = [r[key]["accuracy"] for r in per_run if r[key]["accuracy"] is not None]  # type: ignore[index]
        agg[key] = {
            "mean_accuracy": statistics.fmean(accs) if accs else None,
            "sd_accuracy": statistics.stdev(accs) if len(accs) > 1 else 0.0 if accs else None,
            "unparsed_total": sum(r[key]["unparsed"] for r in per_run),  # type: ignore[index]
            "n_per_run": per_run[0][key]["n"] if per_run else 0,  # type: ignore[index]
        }
    return agg


def as_rows(scores: Sequence[ElaipScore]) -> list[dict[str, object]]:
    return [asdict(s) for s in scores]


async def generate_and_filter(
    paper_id: str,
    paper_text: str,
    generator: object,
    references: dict[str, object],
    *,
    n: int = 3,
    setting: str = "full",
    review_file: str | None = None,
) -> dict[str, object]:
    """Generate ElaipBench-style questions about one paper, keep those no reference model answers correctly.

    `generator` and each reference are anything with `async generate(prompt, options)` (a backend or the one call
    path `models.generate.Generator`). Every question — kept or not — is appended to `review_file` (JSONL) with
    its provenance, the check's verdict and each reference's answer, for human review."""
    from datetime import UTC, datetime
    from pathlib import Path

    from academiceval.families.elaip import generate as eg
    from academiceval.families.elaip.items import context_for, render
    from academiceval.models.base import GenerationOptions
    from academiceval.models.generate import text_of
    from academiceval.runs.elaip import retrieval_for

    retriever, count = retrieval_for(setting) if setting.startswith("rag-") else (None, None)
    # ElaipBench's base setting: temperature 0.1, 32 new tokens (one call per reference model)
    ask_options = GenerationOptions(temperature=0.1, max_tokens=32, seed=0)

    prompt = eg.render_generator_prompt(paper_id, paper_text, n)
    raw = text_of(await generator.generate(prompt, GenerationOptions(temperature=0.0, max_tokens=4096)))  # type: ignore[attr-defined]
    identity = getattr(generator, "identity", None) or getattr(generator, "cache_identity", dict)()
    provenance = {
        "source": eg.SOURCE,
        "paper_id": paper_id,
        "generator": identity,
        "prompt_sha256": eg.GENERATOR_PROMPT_SHA256,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "filter_setting": setting,
        "references": sorted(references),
    }
    records: list[dict[str, object]] = []
    kept: list[ElaipItem] = []
    questions = eg.parse_questions(raw)
    for i, q in enumerate(questions):
        reason = eg.check_question(q, paper_text)
        if reason:
            records.append({"status": "rejected", "reason": reason, "question": q, "provenance": provenance})
            continue
        item = eg.to_item(q, paper_id=paper_id, paper_text=paper_text, index=i)
        answers: dict[str, dict[str, object]] = {}
        context, _ = context_for(item, setting, retriever=retriever, count=count)
        for name, ref in references.items():
            try:
                response, error = text_of(await ref.generate(render(item, context), ask_options)), None  # type: ignore[attr-defined]
            except Exception as e:  # recorded; a reference that failed has not answered (below)
                response, error = "", f"{type(e).__name__}: {e}"
            s = score_answer(item, response)
            answers[name] = {"predicted": s.predicted, "correct": bool(s.value), "error": error}
        solved_by = [k for k, v in answers.items() if v["correct"]]
        failed = [k for k, v in answers.items() if v["error"]]
        # a reference whose request failed gave no answer: the question is neither shown hard nor dropped
        status = "dropped" if solved_by else "unchecked" if failed else "kept"
        record = {
            "status": status,
            "item": item.model_dump(exclude={"paper_content"}),
            "references": answers,
            "provenance": provenance,
        }
        if solved_by:
            record["reason"] = "answered correctly by " + ", ".join(solved_by)
        elif failed:
            record["reason"] = "no answer from " + ", ".join(failed) + " (the request failed): run it again"
        else:
            kept.append(item)
        records.append(record)
    if review_file:
        path = Path(review_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        append_jsonl(path, records)  # the one append: a torn tail of an interrupted earlier write is cut first
    return {"generated": len(questions), "kept": kept, "records": records, "unreadable_answer": not questions}
