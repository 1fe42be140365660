"""Reading a judge's verdict so that the judged cannot write it (issue 26, finding 7).

- `quote(text)`: how a judged text appears in the judge prompt — every line prefixed with "| " (so no line of it
  can pass for the judge's own final `VERDICT:` line, or close its `<version_…>` block) and verdict tokens
  (`[[A]]`) spaced apart (`[ [A] ]`).
- `final_answer(text)` / `parse_verdict(text)`: the verdict is read only from the judge's own final answer — the
  last line that starts with `VERDICT:` followed by exactly one object and nothing after it, or a reply that is
  nothing but that object. Never "the first JSON object" anywhere in the reply, never a `[[A]]` anywhere. Inside
  that object parsing is tolerant: code fences, single quotes, Python literals, trailing commas, unquoted keys,
  aliases ("Version A", "draw", "winner", …).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Literal

from academiceval.errors import AcademicEvalError

CRITERIA = ("novelty", "feasibility", "consistency", "factuality", "academic_style")
ASPECTS = (*CRITERIA, "overall")
Verdict = Literal["A", "B", "tie"]


def quote(text: str) -> str:
    """A text as the judge sees it: every line prefixed with "| " (so no line of it can pass for the judge's own
    final VERDICT line or close its block), and verdict tokens (`[[A]]`) spaced apart (`[ [A] ]`)."""
    text = text.replace("[[", "[ [").replace("]]", "] ]")
    return "\n".join("| " + line for line in text.split("\n"))


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
    return _VALUE_ALIASES.get(v)


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


_VERDICT_LINE = re.compile(r"^[ \t]*[*_#>`]*[ \t]*verdict[ \t]*[*_]*[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```(?:json|python|JSON)?")


def final_answer(text: str) -> str | None:
    """The judge's own final answer: what follows the last line that starts with "VERDICT:", or the whole reply
    when it is nothing but one object. None otherwise — a verdict anywhere else in the reply (e.g. quoted from a
    judged text, which `quote` prefixes with "| ") is never read."""
    body = _FENCE.sub("", text or "").strip()
    starts = list(_VERDICT_LINE.finditer(body))
    if starts:
        return body[starts[-1].end() :].strip()
    if body.startswith("{") and body.endswith("}"):
        return body
    return None


def parse_final_object(text: str) -> dict[str, Any]:
    """The object of the judge's final answer (`final_answer`), read tolerantly; the answer must be that one object
    with nothing after it. What the object must hold is the caller's to check (the pairwise verdict below; the
    Related Work judge's score, nuggets and labels in `scores.related_work_judge`)."""
    answer = final_answer(text)
    if answer is None:
        raise JudgeParseError(f"no final VERDICT line in the judge's answer: {(text or '')[-200:]!r}")
    blocks = _objects(answer)
    if len(blocks) != 1 or not answer.startswith(blocks[0]) or answer[len(blocks[0]) :].strip(" .\n"):
        raise JudgeParseError(f"the VERDICT line is not one object: {answer[:200]!r}")
    obj = _load_object(blocks[0])
    if obj is None:
        raise JudgeParseError(f"the VERDICT object cannot be read: {answer[:200]!r}")
    return obj


def parse_verdict(text: str, aspects: tuple[str, ...] = ("overall",)) -> dict[str, Verdict]:
    """The verdicts of the judge's final answer (`final_answer`): criterion/overall → "A" | "B" | "tie". The
    answer must be one object with nothing after it; every aspect in `aspects` is required."""
    obj = parse_final_object(text)
    answer = final_answer(text) or ""
    if len(obj) == 1 and isinstance(next(iter(obj.values())), dict):  # {"verdict": {...}}
        inner = next(iter(obj.values()))
        if _norm_key(next(iter(obj))) not in ASPECTS:
            obj = inner
    verdicts: dict[str, Verdict] = {}
    for k, v in obj.items():
        key = _norm_key(k)
        val = _norm_value(v)
        if key in ASPECTS and val is not None:
            verdicts[key] = val
    missing = [a for a in aspects if a not in verdicts]
    if missing:
        raise JudgeParseError(f"the VERDICT object has no {', '.join(missing)}: {answer[:200]!r}")
    return verdicts
