"""L-Eval-compatible scoring of prediction files, dispatched by task id (the file stem), never by a substring.

L-Eval's `auto_eval.py` picks its answer extraction by searching the *path* for "coursera", "gsm", "codeU",
"topic_retrieval_longchat", "sci_fi" (L-Eval issue #7: a path containing one of them is scored as that task).
Here the task id is the file name without `.pred.jsonl` / `.jsonl` (or given explicitly) and is looked up in
`TASKS`; an unknown id is scored by its rows' `evaluation` tag alone, and the result says so.

Every result names its protocol (`leval-compatible` or `strict`, see `scores.leval_text`) and uses L-Eval's
metric names and units (percent): `exact_match`; `f1`; `rouge/rouge1`, `rouge/rouge2`, `rouge/rougeL`,
`rouge/geometric_mean`; topic retrieval `first_{1,2,3}_sentence_retrieval/exact_match` and
`average_1st_2nd_3rd/exact_match`; sci_fi `loyalty/exact_match`, `fact/exact_match`,
`average_loyalty_fact/exact_match`; plus `num_predicted`, `mean_prediction_length_characters` and
`LEval_score` as L-Eval prints them. The compatible protocol rounds each number to 4 decimals as L-Eval does
(the topic/sci_fi averages are means of the rounded parts, as there); strict keeps full precision.

Deliberate differences from L-Eval, all in the compatible protocol's favour of not crashing: a sci_fi prediction
without "[fact:" (L-Eval raises IndexError) gets an unparsed fact part; a file whose scored rows mix evaluation
tags is scored by the last row's tag, as L-Eval does, but the result lists the tags; rougeLsum (computed but
never displayed by L-Eval, and dependent on nltk's punkt model) is not reported.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from academiceval.families.leval.items import TASKS
from academiceval.scores import leval_text as lt
from academiceval.scores.rouge import FastRouge
from academiceval.store.user_rows import read_json_rows

Protocol = Literal["leval-compatible", "strict"]
PROTOCOLS: tuple[str, ...] = ("leval-compatible", "strict")
SCORED_TAGS = ("f1", "rouge", "exam")

TOPIC_KEYS = tuple(f"first_{i}_sentence_retrieval/exact_match" for i in (1, 2, 3))
TOPIC_AVERAGE = "average_1st_2nd_3rd/exact_match"
SCIFI_KEYS = ("loyalty/exact_match", "fact/exact_match")
SCIFI_AVERAGE = "average_loyalty_fact/exact_match"


@dataclass
class ItemScore:
    """One scored row: what was compared, its score in [0, 1] per metric, and whether extraction guessed."""

    row: int
    query: str
    gold: str
    prediction: str
    compared: list[str]
    scores: dict[str, float]
    unparsed: bool = False
    part: str | None = None


@dataclass
class LEvalResult:
    task: str
    protocol: str
    metrics: dict[str, float]
    evaluation: str | None
    task_known: bool
    rows: int
    scored: int
    unparsed: int
    bad_lines: int = 0
    evaluation_tags: list[str] = field(default_factory=list)
    items: list[ItemScore] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The JSON-able result without per-item details (what `score-predictions --json` prints)."""
        d = asdict(self)
        d.pop("items")
        return d


def task_id(path: str | Path) -> str:
    name = Path(path).name
    for suffix in (".pred.jsonl", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def read_prediction_file(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """Rows of a JSONL file; lines that do not parse (or are not objects, nest too deep, are not text) are
    skipped, as L-Eval's reader skips what does not parse, and counted. A file that cannot be read at all raises
    ValueError naming it."""
    rows, bad = read_json_rows(path)
    if not rows and bad and bad[0].where == str(path) and bad[0].reason != "the file is empty":
        raise ValueError(str(bad[0]))
    return [r for r, _ in rows], len(bad)


def prediction_key(row: dict[str, Any], where: str | Path | None = None) -> str:
    """L-Eval's rule: the first key containing "_pred". `where` (the file) is named in the error."""
    for key in row:
        if "_pred" in key:
            return key
    at = f"{where}: " if where is not None else ""
    raise ValueError(
        f"{at}no '*_pred' field in the first row (keys {sorted(row)[:8]}): an L-Eval prediction file names its "
        "answers <model>_pred"
    )


def _mean_pct(values: list[float]) -> float:
    return 100.0 * sum(values) / len(values) if values else 0.0


def _finish(metrics: dict[str, float], protocol: str) -> dict[str, float]:
    return {k: round(v, 4) for k, v in metrics.items()} if protocol == "leval-compatible" else metrics


def _em_block(items: list[ItemScore], compared: list[str], protocol: str) -> dict[str, float]:
    """L-Eval's `exam` metrics dict for one list of items."""
    m = {
        "exact_match": _mean_pct([it.scores["exact_match"] for it in items]),
        "num_predicted": len(items),
        "mean_prediction_length_characters": sum(map(len, compared)) / len(compared) if compared else 0.0,
    }
    m = _finish(m, protocol)
    m["LEval_score"] = m["exact_match"]
    return m


def _exam_item(kind: str, gold: str, pred: str, protocol: str) -> tuple[str, float, bool]:
    """(what L-Eval would print as the prediction, score, unparsed) for one closed-ended answer."""
    strict = protocol == "strict"
    if kind in ("choice", "choice-multi"):
        g = lt.gold_choice(gold)
        if strict:
            p = lt.strict_choice(pred, multi=kind == "choice-multi")
            return p or "", lt.choice_score(p, g), p is None
        p, guessed = lt.compat_choice(pred, multi=kind == "choice-multi")
        return p, lt.compat_exact_match(p, g), guessed or p == "None"
    if kind == "math":
        if strict:
            pv, gv = lt.strict_math(pred), lt.strict_math(gold)
            return ("" if pv is None else repr(pv)), float(pv is not None and pv == gv), pv is None
        p = lt.compat_math(pred)
        return p, lt.compat_exact_match(p, lt.compat_math(gold)), p == ""
    if kind == "code":
        if strict:  # the program output's tokens, in order, in what the answer ends with
            final = lt.final_statement(pred)
            return final, lt.strict_tokens_contained(final, gold), False
        p = lt.compat_code_output(pred, gold)
        return p, lt.compat_exact_match(p, lt.code_gold(gold)), False
    if strict:
        return pred, lt.strict_contains(pred, gold), False
    return pred, lt.compat_exact_match(pred, gold), False


def score_rows(rows: list[dict[str, Any]], task: str, protocol: Protocol = "leval-compatible") -> LEvalResult:
    """Score L-Eval prediction rows (`query`, `gt`, `*_pred`, `evaluation`) of one task."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {PROTOCOLS}")
    kind = TASKS.get(task, "text")
    key = prediction_key(rows[0], task) if rows else ""
    items: list[ItemScore] = []
    tags: list[str] = []
    for i, row in enumerate(rows):
        tag = row.get("evaluation")
        if tag not in SCORED_TAGS:
            continue
        tags.append(tag)
        gold, pred, query = str(row.get("gt", "")), str(row.get(key) or ""), str(row.get("query", ""))
        if kind == "scifi":
            g = lt.scifi_gold(gold)
            p = lt.scifi_answer(pred, strict=protocol == "strict")
            for part, gp, pp in zip(("loyalty", "fact"), g, p, strict=True):
                score = float(gp == pp) if protocol == "strict" else lt.compat_exact_match(pp, gp)
                items.append(ItemScore(i, query, gp, pred, [pp], {"exact_match": score}, pp == "<error>", part))
        elif kind == "topic":
            compared, score, unparsed = _exam_item("text", gold, pred, protocol)
            items.append(ItemScore(i, query, gold, pred, [compared], {"exact_match": score}, unparsed, str(i % 3)))
        elif tag == "exam" or kind != "text":
            compared, score, unparsed = _exam_item(kind, gold, pred, protocol)
            items.append(ItemScore(i, query, gold, pred, [compared], {"exact_match": score}, unparsed))
        else:
            items.append(ItemScore(i, query, gold, pred, [pred], {}))
    evaluation = tags[-1] if tags else None
    metrics = _metrics(kind, evaluation, items, protocol)
    return LEvalResult(
        task=task,
        protocol=protocol,
        metrics=metrics,
        evaluation=evaluation,
        task_known=task in TASKS,
        rows=len(rows),
        scored=len({it.row for it in items}),
        unparsed=sum(it.unparsed for it in items),
        evaluation_tags=sorted(set(tags)),
        items=items,
    )


def _metrics(kind: str, evaluation: str | None, items: list[ItemScore], protocol: str) -> dict[str, float]:
    if not items or evaluation is None:
        return {}
    if kind == "topic":
        m = _parts_em(items, dict(zip(TOPIC_KEYS, ("0", "1", "2"), strict=True)), protocol)
        m[TOPIC_AVERAGE] = sum(m.values()) / 3
        return m
    if kind == "scifi":
        m = _parts_em(items, dict(zip(SCIFI_KEYS, ("loyalty", "fact"), strict=True)), protocol)
        m[SCIFI_AVERAGE] = sum(m.values()) / 2
        return m
    if evaluation == "exam" or kind != "text":
        return _em_block(items, [it.compared[0] for it in items], protocol)
    if evaluation == "f1":
        for it in items:
            it.scores["f1"] = lt.token_f1(it.prediction, it.gold)
        m = {"f1": _mean_pct([it.scores["f1"] for it in items])}
        m |= {"num_predicted": len(items), "mean_prediction_length_characters": _mean_len(items)}
        m = _finish(m, protocol)
        m["LEval_score"] = m["f1"]
        return m
    return _rouge_metrics(items, protocol)


def _parts_em(items: list[ItemScore], parts: dict[str, str], protocol: str) -> dict[str, float]:
    """Exact match per part (L-Eval scores each part as its own metric call, each rounded)."""
    out = {}
    for key, part in parts.items():
        chosen = [it for it in items if it.part == part]
        out[key] = _em_block(chosen, [it.compared[0] for it in chosen], protocol)["exact_match"]
    return out


def _mean_len(items: list[ItemScore]) -> float:
    return sum(len(it.prediction) for it in items) / len(items)


def _rouge_metrics(items: list[ItemScore], protocol: str) -> dict[str, float]:
    scorer = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)
    sums = dict.fromkeys(("rouge1", "rouge2", "rougeL"), 0.0)
    for it in items:
        scores = scorer.score(it.gold, it.prediction)
        for name in sums:
            it.scores[name] = scores[name].fmeasure
            sums[name] += scores[name].fmeasure * 100
    means = {name: total / len(items) for name, total in sums.items()}
    m = {f"rouge/{name}": v for name, v in means.items()}
    m["rouge/geometric_mean"] = (means["rouge1"] * means["rouge2"] * means["rougeL"]) ** (1.0 / 3.0)
    m |= {"num_predicted": len(items), "mean_prediction_length_characters": _mean_len(items)}
    m = _finish(m, protocol)
    m["LEval_score"] = m["rouge/geometric_mean"]
    return m


def score_item(
    task: str,
    evaluation: str,
    gold: str,
    prediction: str,
    protocol: Protocol = "leval-compatible",
    *,
    rouge: Any = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """One answer scored as `score_rows` scores it inside a file, in percent: (values, details).

    Why per answer: our runner's records are scored one sample at a time, and the mean of these values over a
    task's items is L-Eval's file number (exact match, F1, ROUGE-1/2/L; topic retrieval and sci_fi: the mean of
    the parts equals the average L-Eval prints when every document has all its parts). Dispatch is by task id.
    An item whose tag L-Eval does not score automatically (LLM, human) gets empty values and says why."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {PROTOCOLS}")
    if task not in TASKS:
        raise ValueError(f"unknown L-Eval task id {task!r}")
    kind = TASKS[task]
    details: dict[str, Any] = {"task": task, "evaluation": evaluation, "protocol": protocol}
    if evaluation not in SCORED_TAGS:
        return {}, {**details, "not_scored": f"L-Eval has no automatic metric for {evaluation!r} items (a judge)"}
    if kind == "scifi":
        g, p = lt.scifi_gold(gold), lt.scifi_answer(prediction, strict=protocol == "strict")
        parts = {}
        for part, gp, pp in zip(("loyalty", "fact"), g, p, strict=True):
            parts[part] = 100.0 * (float(gp == pp) if protocol == "strict" else lt.compat_exact_match(pp, gp))
        details |= {"compared": list(p), "unparsed": "<error>" in p}
        return {**parts, "exact_match": (parts["loyalty"] + parts["fact"]) / 2}, details
    if kind == "topic" or evaluation == "exam" or kind != "text":
        compared, score, unparsed = _exam_item("text" if kind == "topic" else kind, gold, prediction, protocol)
        return {"exact_match": 100.0 * score}, {**details, "compared": compared, "unparsed": unparsed}
    if evaluation == "f1":
        return {"f1": 100.0 * lt.token_f1(prediction, gold)}, details
    if rouge is None:
        rouge = FastRouge(("rouge1", "rouge2", "rougeL"), use_stemmer=False)
    got = rouge.score(gold, prediction)
    return {name: 100.0 * got[name].fmeasure for name in ("rouge1", "rouge2", "rougeL")}, details


def score_file(path: str | Path, *, task: str | None = None, protocol: Protocol = "leval-compatible") -> LEvalResult:
    rows, bad = read_prediction_file(path)
    result = score_rows(rows, task or task_id(path), protocol)
    result.bad_lines = bad
    return result


def display_keys(result: LEvalResult) -> list[str]:
    """The headline numbers L-Eval displays for this kind of result."""
    m = result.metrics
    if TOPIC_AVERAGE in m:
        return [*TOPIC_KEYS, TOPIC_AVERAGE]
    if SCIFI_AVERAGE in m:
        return [*SCIFI_KEYS, SCIFI_AVERAGE]
    if "rouge/rougeL" in m:
        return ["rouge/rouge1", "rouge/rouge2", "rouge/rougeL", "rouge/geometric_mean"]
    return [k for k in ("exact_match", "f1") if k in m]
