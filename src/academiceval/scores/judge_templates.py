"""Judge templates besides ours: L-Eval's own pairwise template, read from L-Eval's own `llm_eval.py`.

Why read it from L-Eval's file: the wording is L-Eval's (GPL-3.0), so this project does not carry a copy; a user
with L-Eval's repository points `score --judge-template leval:PATH/Evaluation/llm_eval.py` at it, and the judge
then asks exactly L-Eval's system text and user template (`[User Question] … [The End of Assistant B's Answer]`)
and reads the verdict by L-Eval's rule: "[[A]]" anywhere in the reply wins, else "[[B]]", else "[[C]]" (tie), else
unreadable (L-Eval's `run_judge_pair`). The file is parsed (`ast`), never executed.

Deliberate differences from L-Eval's `llm_eval.py`, named in the judge's config:
- the system text and the user prompt go as one message (system text, blank line, user prompt): the judge path
  sends one prompt per request through the response cache;
- verdict tokens inside the judged answers and the reference are spaced (`[[A]]` → `[ [A] ]`), so an answer
  cannot write the verdict L-Eval's substring rule would read (issue 26); nothing else in them changes.
An unreadable reply is counted as unreadable (L-Eval's "error"), with no repair request, as in L-Eval.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from academiceval.errors import ConfigError
from academiceval.scores.verdict import JudgeParseError, Verdict
from academiceval.store.hashing import sha256_hex

LEVAL = "leval"
OURS = "ours"
_LEVAL_KEYS = ("system_prompt", "prompt_template")
_LEVAL_FIELDS = ("{question}", "{ref_answer}", "{answer_a}", "{answer_b}")
_TOKENS = (("[[A]]", "A"), ("[[B]]", "B"), ("[[C]]", "tie"))


@dataclass(frozen=True)
class ExternalTemplate:
    """A peer's pairwise QA judge template: its system text, its user template, where it was read from."""

    name: str
    system: str
    user: str  # with {question}, {ref_answer}, {answer_a}, {answer_b} (L-Eval's field names)
    source: str

    @property
    def sha256(self) -> str:
        return sha256_hex(f"{self.name}\n{self.system}\n{self.user}")

    def render(self, *, question: str, reference: str, answer_a: str, answer_b: str) -> str:
        user = self.user.format(
            question=question, ref_answer=_space(reference), answer_a=_space(answer_a), answer_b=_space(answer_b)
        )
        return f"{self.system}\n\n{user}"

    def config(self) -> dict[str, str]:
        return {
            "template": self.name,
            "template_source": self.source,
            "template_sha256": self.sha256,
            "verdict_rule": "leval: first of [[A]], [[B]], [[C]] present in the reply",
            "differences": "one message (system + user); verdict tokens in the judged texts spaced",
        }


def _space(text: str) -> str:
    return text.replace("[[", "[ [").replace("]]", "] ]")


def parse_bracket_verdict(text: str) -> dict[str, Verdict]:
    """L-Eval's verdict rule: "[[A]]" in the reply → A, else "[[B]]" → B, else "[[C]]" → tie."""
    for token, verdict in _TOKENS:
        if token in (text or ""):
            return {"overall": verdict}
    raise JudgeParseError(f"no [[A]], [[B]] or [[C]] in the judge's answer: {(text or '')[-200:]!r}")


def load_leval_template(path: str | Path) -> ExternalTemplate:
    """L-Eval's judge prompt from its `Evaluation/llm_eval.py`: the dict literal holding "system_prompt" and
    "prompt_template" (string constants), found by parsing the file."""
    p = Path(path)
    try:
        tree = ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
    except (OSError, SyntaxError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"cannot read L-Eval's judge template from {p}: {type(e).__name__}: {e}",
            source="--judge-template",
            hint="give leval:PATH to L-Eval's Evaluation/llm_eval.py",
        ) from None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        found = {
            k.value: v.value
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, str)
        }
        if all(k in found for k in _LEVAL_KEYS):
            system, user = found["system_prompt"], found["prompt_template"]
            missing = [f for f in _LEVAL_FIELDS if f not in user]
            if missing:
                raise ConfigError(
                    f"{p}: L-Eval's prompt_template lacks {', '.join(missing)}", source="--judge-template"
                )
            return ExternalTemplate(name=LEVAL, system=system, user=user, source=p.name)
    raise ConfigError(
        f"{p} holds no judge prompt (a dict with system_prompt and prompt_template)",
        source="--judge-template",
        hint="give leval:PATH to L-Eval's Evaluation/llm_eval.py",
    )


def resolve_template(spec: str | None) -> ExternalTemplate | None:
    """`ours` (None: the project's templates) or `leval:PATH` (L-Eval's, read from its llm_eval.py)."""
    spec = (spec or OURS).strip()
    if spec == OURS:
        return None
    kind, _, path = spec.partition(":")
    if kind == LEVAL and path:
        return load_leval_template(path)
    raise ConfigError(
        f"unknown judge template {spec!r}",
        source="--judge-template",
        hint="ours (default) or leval:PATH to L-Eval's Evaluation/llm_eval.py",
    )
