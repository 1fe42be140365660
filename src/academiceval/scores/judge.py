"""LLM-as-judge: pairwise preference on five criteria, asked in both orders.

Why both orders: judges prefer a position (FastChat measured verdict flips on swap in ~13% of pairs), so every
pair is judged with the candidate first and second; each order is one judgment, and the win rate is
(wins + ½ ties) / judged over all judgments. The judge is any backend of the runner (`--judge SPEC`), called
through the runner's own path (`models.generate.Generator`: the response cache, so a re-score never pays twice,
then retries with backoff / Retry-After under an adaptive concurrency limit). Answers are parsed tolerantly
(code fences, prose around the object, single quotes, Python literals); an unreadable answer gets one repair
request, and if that fails too the judgment is counted as failed, never guessed.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from academiceval.errors import AcademicEvalError
from academiceval.models.base import Backend, GenerationOptions
from academiceval.models.cache import ResponseCache
from academiceval.models.concurrency import AdaptiveLimiter
from academiceval.models.generate import Generator
from academiceval.store.tasks import find_spec

CRITERIA = ("novelty", "feasibility", "consistency", "factuality", "academic_style")
ASPECTS = (*CRITERIA, "overall")
Verdict = Literal["A", "B", "tie"]

TEMPLATE = """You are an experienced reviewer comparing two versions of the {section} written for the same \
research paper. Judge which version serves the paper better on each criterion:
- novelty: does it bring out what is new and distinctive about the work?
- feasibility: are the claims and methods it describes plausible and realistically achievable?
- consistency: is it coherent with itself and with the paper it belongs to?
- factuality: does it avoid statements that are wrong or unsupported by the paper?
- academic_style: is it clear, precise and written like a good scholarly text?
Then name the better version overall. Do not prefer a text for being longer or for coming first.

Paper title: {title}

=== Version A ===
{text_a}

=== Version B ===
{text_b}

Answer with one JSON object and nothing else, using "A", "B" or "tie" for each field:
{{"novelty": "...", "feasibility": "...", "consistency": "...", "factuality": "...", "academic_style": "...", \
"overall": "...", "reason": "one short sentence"}}"""

REPAIR = """{prompt}

Your previous answer could not be read as the requested JSON object:
---
{answer}
---
Reply again with only the JSON object, for example:
{{"novelty": "A", "feasibility": "tie", "consistency": "B", "factuality": "A", "academic_style": "A", \
"overall": "A", "reason": "..."}}"""

TEMPLATE_SHA256 = hashlib.sha256((TEMPLATE + REPAIR).encode()).hexdigest()


class JudgeParseError(AcademicEvalError):
    """The judge's answer holds no readable verdict."""

    code = "judge_parse"


_KEY_ALIASES = {
    "academic_style": "academic_style",
    "academicstyle": "academic_style",
    "style": "academic_style",
    "academic": "academic_style",
    "overall": "overall",
    "winner": "overall",
    "overall_winner": "overall",
    "better": "overall",
    "final": "overall",
}
_VALUE_ALIASES = {
    "a": "A",
    "version_a": "A",
    "text_a": "A",
    "1": "A",
    "first": "A",
    "b": "B",
    "version_b": "B",
    "text_b": "B",
    "2": "B",
    "second": "B",
    "tie": "tie",
    "equal": "tie",
    "draw": "tie",
    "both": "tie",
    "same": "tie",
    "neither": "tie",
    "none": "tie",
}


def _norm_key(key: str) -> str | None:
    k = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    if k in CRITERIA:
        return k
    return _KEY_ALIASES.get(k) or _KEY_ALIASES.get(k.replace("_", ""))


def _norm_value(value: Any) -> Verdict | None:
    if isinstance(value, dict):  # {"winner": "A", "why": ...}
        for k in ("winner", "verdict", "choice", "better", "value"):
            if k in value:
                return _norm_value(value[k])
        return None
    v = re.sub(r"[\s\-]+", "_", str(value).strip().strip(".").lower())
    return _VALUE_ALIASES.get(v)  # type: ignore[return-value]


def _objects(text: str) -> list[str]:
    """Balanced {...} blocks, outermost first, ignoring braces inside quoted strings."""
    out: list[str] = []
    depth, start, quote, escape = 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth > 0:
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(text[start : i + 1])
    return out


def _load_object(block: str) -> dict[str, Any] | None:
    attempts = [block, re.sub(r",\s*([}\]])", r"\1", block)]
    for a in attempts:
        try:
            obj = json.loads(a)
        except ValueError:
            try:
                obj = ast.literal_eval(a)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
        if isinstance(obj, dict):
            return obj
    # last resort: single-quoted JSON with apostrophes inside values is not a literal; key: 'X' pairs
    pairs = re.findall(r"""["']?([A-Za-z_ \-]+)["']?\s*:\s*["']([^"'\n]*)["']""", block)
    return dict(pairs) if pairs else None


def parse_verdict(text: str) -> dict[str, Verdict]:
    """The verdicts of one answer: criterion/overall → "A" | "B" | "tie". `overall` is required."""
    cleaned = re.sub(r"```(?:json|python|JSON)?", "", text or "")
    for block in _objects(cleaned):
        obj = _load_object(block)
        if obj is None:
            continue
        if len(obj) == 1 and isinstance(next(iter(obj.values())), dict):  # {"verdict": {...}}
            inner = next(iter(obj.values()))
            if not any(_norm_key(k) for k in obj) or _norm_key(next(iter(obj))) not in ASPECTS:
                obj = inner
        verdicts: dict[str, Verdict] = {}
        for k, v in obj.items():
            key = _norm_key(k)
            val = _norm_value(v)
            if key in ASPECTS and val is not None:
                verdicts[key] = val
        if "overall" in verdicts:
            return verdicts
    raise JudgeParseError(f"no verdict with an 'overall' field in the judge's answer: {text[:200]!r}")


@dataclass
class Judgment:
    """One order of one pair, from the candidate's point of view."""

    candidate_first: bool
    outcome: dict[str, float] = field(default_factory=dict)  # aspect → 1 win, 0.5 tie, 0 loss
    raw: dict[str, str] = field(default_factory=dict)  # aspect → verdict as given (A/B/tie)
    repaired: bool = False
    error: str | None = None


def outcome_for_candidate(verdicts: dict[str, Verdict], candidate_first: bool) -> dict[str, float]:
    mine = "A" if candidate_first else "B"
    return {k: 0.5 if v == "tie" else (1.0 if v == mine else 0.0) for k, v in verdicts.items()}


@dataclass
class PairResult:
    judgments: list[Judgment]

    @property
    def judged(self) -> list[Judgment]:
        return [j for j in self.judgments if j.error is None]

    def values(self) -> dict[str, float]:
        """Per aspect: wins, ties, judged counts and the rate (wins + ½ ties) / judged for this pair."""
        out: dict[str, float] = {
            "judged": float(len(self.judged)),
            "failed": float(len(self.judgments) - len(self.judged)),
        }
        for a in ASPECTS:
            scores = [j.outcome[a] for j in self.judged if a in j.outcome]
            out[f"{a}_n"] = float(len(scores))
            out[f"{a}_wins"] = float(sum(1 for s in scores if s == 1.0))
            out[f"{a}_ties"] = float(sum(1 for s in scores if s == 0.5))
            if scores:
                out[a] = sum(scores) / len(scores)
        return out


def win_rate(pairs: list[dict[str, float]], aspect: str = "overall") -> tuple[float | None, int]:
    """Pooled (wins + ½ ties) / judged over ScoreRecord values of many pairs; (None, 0) when nothing judged."""
    wins = sum(p.get(f"{aspect}_wins", 0.0) for p in pairs)
    ties = sum(p.get(f"{aspect}_ties", 0.0) for p in pairs)
    n = sum(p.get(f"{aspect}_n", 0.0) for p in pairs)
    return ((wins + 0.5 * ties) / n if n else None), int(n)


class Judge:
    """Judges candidate vs other text for one paper, in both orders, through a Backend.

    `cache`: the workspace's `models.cache.ResponseCache` (the runner's); None = no caching. At most `concurrency`
    requests are in flight (an `AdaptiveLimiter`: fewer after a 429, like the runner's).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        options: GenerationOptions | None = None,
        concurrency: int = 8,
        max_chars: int = 12_000,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.options = options or GenerationOptions(temperature=0.0, max_tokens=300)
        self.concurrency = concurrency
        self.generator = Generator(backend, cache=cache, limiter=AdaptiveLimiter(concurrency))
        self._prefix = self.generator.prefix(self.options)
        self.max_chars = max_chars  # per text shown to the judge (long sections are cut, marked as cut)
        self.calls = 0
        self.repairs = 0
        self.failures = 0

    @property
    def name(self) -> str:
        return f"{self.backend.name}/{self.backend.model}"

    def config(self) -> dict[str, Any]:
        return {
            "metric": "judge",
            "judge": self.backend.cache_identity(),
            "options": self.options.model_dump(),
            "template_sha256": TEMPLATE_SHA256,
            "max_chars": self.max_chars,
        }

    def _clip(self, text: str) -> str:
        return text if len(text) <= self.max_chars else text[: self.max_chars] + " […cut]"

    def prompt(self, task: str, title: str, text_a: str, text_b: str) -> str:
        return TEMPLATE.format(
            section=(spec.judge_name or task) if (spec := find_spec(task)) is not None else task,
            title=title or "(not given)",
            text_a=self._clip(text_a),
            text_b=self._clip(text_b),
        )

    async def _ask(self, prompt: str) -> str:
        """The judge's answer to one prompt: from the cache, or asked (with retries); raises the final error."""
        sha = hashlib.sha256(prompt.encode()).hexdigest()
        got = await self.generator.generate(
            prompt, self.options, key=self.generator.key(self._prefix, sha), prompt_sha256=sha
        )
        if got.source == "backend":
            self.calls += 1
        return got.unwrap().text

    async def judge_once(self, task: str, title: str, candidate: str, other: str, *, candidate_first: bool) -> Judgment:
        a, b = (candidate, other) if candidate_first else (other, candidate)
        prompt = self.prompt(task, title, a, b)
        j = Judgment(candidate_first=candidate_first)
        try:
            answer = await self._ask(prompt)
            try:
                verdicts = parse_verdict(answer)
            except JudgeParseError:
                self.repairs += 1
                j.repaired = True
                verdicts = parse_verdict(await self._ask(REPAIR.format(prompt=prompt, answer=answer[:2000])))
        except AcademicEvalError as e:  # parse failure after repair, or a backend error: counted, not guessed
            self.failures += 1
            j.error = f"{e.code}: {e.message}"[:300]
            return j
        j.raw = dict(verdicts)
        j.outcome = outcome_for_candidate(verdicts, candidate_first)
        return j

    async def judge_pair(self, task: str, title: str, candidate: str, other: str) -> PairResult:
        first, second = await asyncio.gather(
            self.judge_once(task, title, candidate, other, candidate_first=True),
            self.judge_once(task, title, candidate, other, candidate_first=False),
        )
        return PairResult([first, second])
