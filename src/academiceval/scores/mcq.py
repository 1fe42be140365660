"""The multiple-choice protocol core: answer parsing, 0/1 accuracy per item, accuracy per level with bootstrap
CIs, unparsed answers counted apart, accuracy by gold slot (position bias), and head truncation that keeps the
closing instruction. Shared by the citation-cloze family and the ElaipBench-format family.

Parsing (`parse_answer`): the **last** `<answer>…</answer>` in the response wins (a model may quote the format
before answering); the word "index" and whitespace are removed, as SCALAR's evaluator does.
- `strict`: the inside must then be exactly one choice (an index "2", or a letter "C" when choices are letters).
- `lenient`: also accepts "[2]", "Candidate 2", "(C)", "C." inside the tags, and, when no tag is closed, a
  final "<answer>2" or a last line "Answer: 2". Never guesses from free text beyond that.
Every `Parsed` names the parser and the rule that matched, and score records keep it, so a number always says
how it was read.

Multi-answer items (ElaipBench MA) use `parse_answer_set`: letters/indices separated by commas or spaces, or
a run of letters ("ACD", ElaipBench's own answer form), compared as sets (correct iff equal).

Truncation (`truncate_head`): keep the head of the prompt's body and always append the closing instruction,
so the cut never removes the answer format. SCALAR keeps the first N tokens of the whole prompt, which on long
items drops the last candidates *and* the closing reminder; we keep the reminder (the model is still asked the
right question) and report the cut. For cloze items, `families.cloze.prompt.fit_item` goes further and cuts only
paper/candidate content.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

METRIC = "accuracy"  # a multiple-choice task defaults to it through its spec (`TaskSpec.default_metrics`)
Parser = Literal["strict", "lenient"]
PARSERS: tuple[Parser, ...] = ("strict", "lenient")

_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_OPEN_TAIL = re.compile(r"<answer>\s*([^<\n]{1,40})\s*$", re.IGNORECASE)
_ANSWER_LINE = re.compile(
    r"(?:^|\n)\s*\**(?:final\s+)?answer\**\s*[:：]\s*\**\s*([^\n]{1,40}?)\s*\**\s*$", re.IGNORECASE
)
_NOISE = re.compile(r"index", re.IGNORECASE)
_LENIENT_INNER = re.compile(
    r"^(?:candidate|option|choice|reference)?\s*[\[(]?\s*([A-Za-z]|\d{1,2})\s*[\])]?\s*[.:)]?\s*(?:$|\s)", re.IGNORECASE
)


@dataclass(frozen=True)
class Parsed:
    choice: str | None  # normalised choice ("2", "C") or None when unparsed
    parser: Parser
    rule: str  # which rule matched: "tag", "tag-lenient", "open-tag", "answer-line", "none"
    raw: str = ""  # the text the rule read


def _choices(n_choices: int, letters: bool) -> list[str]:
    return [chr(ord("A") + i) for i in range(n_choices)] if letters else [str(i) for i in range(n_choices)]


def _normalise(inner: str, valid: list[str], letters: bool) -> str | None:
    s = _NOISE.sub("", inner).strip()
    s = s.upper() if letters else s
    return s if s in valid else None


def parse_answer(
    response: str | None, *, n_choices: int = 4, letters: bool = False, parser: Parser = "strict"
) -> Parsed:
    """The chosen option of one response (see module docstring)."""
    if parser not in PARSERS:
        raise ValueError(f"unknown parser {parser!r}")
    text = response or ""
    valid = _choices(n_choices, letters)
    tags = _TAG.findall(text)
    if tags:
        inner = tags[-1]
        got = _normalise(inner, valid, letters)
        if got is not None:
            return Parsed(got, parser, "tag", inner)
        if parser == "lenient":
            m = _LENIENT_INNER.match(_NOISE.sub("", inner).strip())
            if m:
                got = _normalise(m.group(1), valid, letters)
                if got is not None:
                    return Parsed(got, parser, "tag-lenient", inner)
        return Parsed(None, parser, "none", inner)
    if parser == "lenient":
        for rule, pat in (("open-tag", _OPEN_TAIL), ("answer-line", _ANSWER_LINE)):
            m = pat.search(text.rstrip())
            if m:
                inner = m.group(1)
                got = _normalise(inner, valid, letters)
                if got is None:
                    mm = _LENIENT_INNER.match(_NOISE.sub("", inner).strip())
                    got = _normalise(mm.group(1), valid, letters) if mm else None
                if got is not None:
                    return Parsed(got, parser, rule, inner)
    return Parsed(None, parser, "none", "")


def parse_answer_set(
    response: str | None, *, n_choices: int = 4, letters: bool = True, parser: Parser = "strict"
) -> tuple[frozenset[str] | None, str]:
    """A set of choices from the last `<answer>` (e.g. "A, C"); (None, rule) when unparsed or any part invalid."""
    tags = _TAG.findall(response or "")
    if not tags:
        if parser == "lenient":
            p = parse_answer(response, n_choices=n_choices, letters=letters, parser="lenient")
            return (frozenset([p.choice]), p.rule) if p.choice else (None, "none")
        return None, "none"
    parts = [x for x in re.split(r"[\s,;/&]+|\band\b", _NOISE.sub("", tags[-1])) if x.strip()]
    valid = _choices(n_choices, letters)
    out = set()
    for x in parts:
        x = x.strip("()[].")
        run = x.upper() if letters else ""
        if len(run) > 1 and run.isalpha() and all(c in valid for c in run):  # a letter run "ACD" (ElaipBench's form)
            out.update(run)
            continue
        got = _normalise(x, valid, letters)
        if got is None:
            return None, "none"
        out.add(got)
    return (frozenset(out), "tag") if out else (None, "none")


def gold_kind(gold: str | int) -> tuple[str, frozenset[str] | str]:
    """How a gold label reads: ("index", "2"), ("letter", "C") or ("set", {"A", "C"}) for "A,C" / "AC"."""
    g = str(gold).strip()
    if g.isdigit():
        return "index", g
    letters = [x for x in re.split(r"[\s,;/&]+", g.upper()) if x]
    if len(letters) == 1 and len(letters[0]) > 1 and letters[0].isalpha():
        letters = list(letters[0])  # "AC"
    if len(letters) == 1 and len(letters[0]) == 1:
        return "letter", letters[0]
    return "set", frozenset(letters)


def score_response(
    sample_id: str,
    response: str | None,
    gold: str | int,
    *,
    level: str = "",
    n_choices: int = 4,
    parser: Parser = "strict",
) -> ItemScore:
    """Score one response against any gold form (index, letter, or a set of letters for multi-answer items;
    sets are correct only when equal, no partial credit)."""
    kind, g = gold_kind(gold)
    if kind == "set":
        got, rule = parse_answer_set(response, n_choices=n_choices, letters=True, parser=parser)
        choice = ",".join(sorted(got)) if got is not None else None
        return ItemScore(sample_id, level, ",".join(sorted(g)), choice, parser, rule, 1.0 if got == g else 0.0)
    return score_item(sample_id, response, g, level=level, n_choices=n_choices, letters=kind == "letter", parser=parser)


@dataclass(frozen=True)
class ItemScore:
    """One scored multiple-choice item: `value` is the 0/1 accuracy stored in score records."""

    sample_id: str
    level: str
    gold: str
    choice: str | None
    parser: Parser
    rule: str
    value: float

    @property
    def parsed(self) -> bool:
        return self.choice is not None


def score_item(
    sample_id: str,
    response: str | None,
    gold: str | int,
    *,
    level: str = "",
    n_choices: int = 4,
    letters: bool = False,
    parser: Parser = "strict",
) -> ItemScore:
    p = parse_answer(response, n_choices=n_choices, letters=letters, parser=parser)
    g = str(gold).strip().upper() if letters else str(gold).strip()
    return ItemScore(sample_id, level, g, p.choice, parser, p.rule, 1.0 if p.choice == g else 0.0)


def python_randrange_stream(rng: random.Random, n: int, count: int) -> np.ndarray:
    """`[rng.randrange(n) for _ in range(count)]`, computed with numpy from the same Mersenne Twister state
    (CPython draws 32-bit words and keeps `word >> (32 - n.bit_length())` when below n): the same numbers, ~100×
    faster. `rng` is not advanced."""
    if not 0 < n < 2**32:
        return np.array([rng.randrange(n) for _ in range(count)], dtype=np.int64)
    key = rng.getstate()[1]
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": np.array(key[:624], dtype=np.uint32), "pos": key[624]}}
    shift = 32 - n.bit_length()
    out = np.empty(0, dtype=np.int64)
    while out.size < count:
        words = bits.random_raw(max(1024, 2 * (count - out.size))).astype(np.int64) >> shift
        out = np.concatenate([out, words[words < n]])
    return out[:count]


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 2000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (seeded; no global RNG)."""
    if not values:
        return (float("nan"), float("nan"))
    n = len(values)
    idx = python_randrange_stream(random.Random(seed), n, n * n_boot).reshape(n_boot, n)
    # cumsum adds left to right as sum() did, so every mean is bit-identical to the former pure-Python loop
    means = sorted((np.cumsum(np.asarray(values, dtype=np.float64)[idx], axis=1)[:, -1] / n).tolist())
    lo = means[int((alpha / 2) * n_boot)]
    hi = means[min(n_boot - 1, int((1 - alpha / 2) * n_boot))]
    return (lo, hi)


@dataclass
class LevelAccuracy:
    level: str
    n: int
    correct: int
    accuracy: float
    ci: tuple[float, float]
    unparsed: int
    parsed_accuracy: float | None  # accuracy among parsed answers only
    by_gold_slot: dict[str, tuple[int, float]] = field(default_factory=dict)  # slot -> (n, accuracy)
    picks: dict[str, int] = field(default_factory=dict)  # chosen slot -> count (position bias of the model)
    parser: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "level": self.level,
            "n": self.n,
            "correct": self.correct,
            "accuracy": round(self.accuracy, 4),
            "ci95": [round(self.ci[0], 4), round(self.ci[1], 4)],
            "unparsed": self.unparsed,
            "parsed_accuracy": None if self.parsed_accuracy is None else round(self.parsed_accuracy, 4),
            "by_gold_slot": {k: {"n": n, "accuracy": round(a, 4)} for k, (n, a) in sorted(self.by_gold_slot.items())},
            "picks": dict(sorted(self.picks.items())),
            "parser": self.parser,
        }


def accuracy_by_level(
    scores: Iterable[ItemScore], *, n_boot: int = 2000, seed: int = 0, overall: str | None = "all"
) -> dict[str, LevelAccuracy]:
    """Accuracy per level (and over all items under the key `overall`, unless None)."""
    groups: dict[str, list[ItemScore]] = defaultdict(list)
    for s in scores:
        groups[s.level].append(s)
        if overall is not None:
            groups[overall].append(s)
    out: dict[str, LevelAccuracy] = {}
    for lv, ss in groups.items():
        vals = [s.value for s in ss]
        parsed = [s for s in ss if s.parsed]
        slots: dict[str, list[float]] = defaultdict(list)
        picks: dict[str, int] = defaultdict(int)
        for s in ss:
            slots[s.gold].append(s.value)
            picks[s.choice if s.choice is not None else "unparsed"] += 1
        out[lv] = LevelAccuracy(
            level=lv,
            n=len(ss),
            correct=int(sum(vals)),
            accuracy=sum(vals) / len(vals) if vals else 0.0,
            ci=bootstrap_ci(vals, n_boot=n_boot, seed=seed),
            unparsed=len(ss) - len(parsed),
            parsed_accuracy=(sum(s.value for s in parsed) / len(parsed)) if parsed else None,
            by_gold_slot={k: (len(v), sum(v) / len(v)) for k, v in slots.items()},
            picks=dict(picks),
            parser=",".join(sorted({s.parser for s in ss})),
        )
    return out


# ---- truncation ------------------------------------------------------------------------------------------------
class TokenCounter(Protocol):
    """What truncation needs from a tokenizer (e.g. `families.cloze.tokens.WordPieceCounter`)."""

    name: str

    def count(self, text: str) -> int: ...

    def prefix(self, text: str, n: int) -> str: ...


@dataclass(frozen=True)
class Truncated:
    text: str
    tokens: int
    cut_tokens: int
    over_budget: bool  # the closing instruction alone exceeds the budget


def split_closing(prompt: str) -> tuple[str, str]:
    """(body, closing): the closing instruction is the prompt's last non-empty line."""
    stripped = prompt.rstrip()
    idx = stripped.rfind("\n")
    return (stripped[: idx + 1], stripped[idx + 1 :]) if idx >= 0 else ("", stripped)


def truncate_head(prompt: str, budget: int, counter: TokenCounter, *, closing: str | None = None) -> Truncated:
    """Keep the head of the body within `budget` tokens and always end with the closing instruction.

    `closing` defaults to the prompt's last non-empty line; pass it explicitly when the instruction spans lines
    (it must be the prompt's suffix)."""
    total = counter.count(prompt)
    if total <= budget:
        return Truncated(prompt, total, 0, False)
    if closing is None:
        body, closing = split_closing(prompt)
    else:
        stripped = prompt.rstrip()
        if not stripped.endswith(closing.strip()):
            raise ValueError("closing must be the end of the prompt")
        body = stripped[: len(stripped) - len(closing.strip())]
        closing = closing.strip()
    room = budget - counter.count(closing) - 2
    head = counter.prefix(body, max(0, room)).rstrip()
    text = f"{head}\n{closing}\n" if head else f"{closing}\n"
    n = counter.count(text)
    return Truncated(text, n, max(0, total - n), n > budget)


def item_scores_from_records(records: Iterable[Any], *, level_of: str = "setting") -> list[ItemScore]:
    """ItemScores back from `accuracy` ScoreRecords (values + details written by `scores.accuracy`), grouped by
    the record's `setting` (the cloze level) unless `level_of` names another attribute. Error records (no output)
    are skipped: they were never answered, and the run summary counts them."""
    out = []
    for r in records:
        if getattr(r, "metric", METRIC) != METRIC or getattr(r, "error", None):
            continue
        d = getattr(r, "details", {}) or {}
        out.append(
            ItemScore(
                sample_id=r.sample_id,
                level=str(getattr(r, level_of, "")),
                gold=str(d.get("gold", "")),
                choice=d.get("choice"),
                parser=d.get("parser", "strict"),
                rule=str(d.get("rule", "")),
                value=float((getattr(r, "values", {}) or {}).get("accuracy", 0.0)),
            )
        )
    return out
