"""Strict set-match scoring of one ElaipBench-format answer (the question filter's check).

An answer is correct iff its set of letters equals the gold set: no partial credit for MA questions, and an SA
answer naming two letters is wrong (ElaipBench §A.4). Parsing is the shared multiple-choice core's
(`scores.mcq.parse_answer_set`, the cloze family's too): `strict` reads only the last `<answer>…</answer>`;
`lenient` also takes an "Answer: X" line. An unparsed answer scores 0. A run of a round is scored by the core
`accuracy` metric (per SA/MA too; mean ± sd across epochs, ElaipBench's 3 runs); this one answer check is what
the question filter (`generate.generate_and_filter`) asks of each reference model's answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from academiceval.families.elaip.items import ElaipItem
from academiceval.scores.mcq import Parser, parse_answer_set


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
