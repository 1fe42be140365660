"""Context ladders (issue 15): the same target papers at several context budgets, in one build.

`BuildConfig.ladder = [8000, 16000, 32000, 64000]` (CLI `--ladder 8K,16K,32K,64K`) adds one setting per rung,
named `ctx:N` like the flexible-context setting, so runs, scores and reports treat rungs as ordinary settings.
What makes them a ladder:

- every rung of a target draws its demos from ONE ordered candidate list, seeded per target and task (not per
  rung): the target's co-author papers first (closest), then same-category papers in a seeded random order —
  the same eligibility (leakage) rules as every setting (`rounds.settings.DemoSelector`);
- rung N takes the longest prefix of that list whose tokens, added to the target's own input (body, and the
  citation list for Related Work), stay within N — counted with the round's tokenizer (the WordPiece counts
  the build already has: `Entry.cost`). So a larger rung holds every demo of a smaller one plus more, and the
  only thing that changes from rung to rung is how much context precedes the same target;
- a rung's inputs fit the rung (issue 28): the budget counts the template's own tokens too, and a target whose
  own input (template, title/abstract, citation list and body) is larger than the rung has its body cut at the
  end to fit — as AcademicEval fits a paper to a model's context (keep the beginning, cut the end) —, with no
  demos, and the cut is counted in the manifest's notes. So a rung never skips a target for its length, every
  rung holds the same targets, and the report pairs rungs by target paper (`report.ladder`). Only a target
  whose inputs leave less than `MIN_BODY_TOKENS` of its body within the rung is skipped (counted).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import date

from academiceval.errors import ConfigError
from academiceval.rounds.prompts import skeleton
from academiceval.rounds.settings import DemoSelector, Entry, SettingSpec, parse_setting
from academiceval.rounds.tokens import count, count_tokens, wordpiece
from academiceval.store.models import CitedPaper, Demo, Sample, Task

MIN_BODY_TOKENS = 512  # a rung that leaves less of the target's body than this skips the target (counted)

_RUNG = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_rung(text: str | int) -> int:
    """`8K` → 8000, `64k` → 64000, `1M` → 1000000, `12000` → 12000 (K = 1000 tokens, as setting names use)."""
    if isinstance(text, int):
        n = text
    else:
        m = _RUNG.match(str(text))
        if not m:
            raise ConfigError(f"bad ladder rung {text!r}", hint="e.g. --ladder 8K,16K,32K,64K")
        n = int(float(m.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()])
    if n <= 0:
        raise ConfigError(f"ladder rung {text!r} must be positive", hint="e.g. --ladder 8K,16K")
    return n


def parse_ladder(text: str | list | tuple | None) -> list[int]:
    """`"8K,16K,32K"` or a list → sorted distinct budgets in tokens."""
    if text is None:
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    return sorted({parse_rung(x) for x in items if str(x).strip()})


def rung_specs(ladder: list[int]) -> list[SettingSpec]:
    return [parse_setting(f"ctx:{n}") for n in ladder]


def is_rung(spec: SettingSpec, ladder: list[int]) -> bool:
    return spec.kind == "ctx" and spec.tokens in ladder


def candidates(selector: DemoSelector, target: Entry, seed: int) -> list[tuple[Entry, str]]:
    """The target's ordered demo candidates, shared by every rung: co-author papers, then shuffled same-category.
    The last target's list is kept (rungs of one target are built one after another)."""
    key = (target.arxiv_id, seed)
    hit = getattr(selector, "_ladder_memo", None)  # kept on the selector: never shared across builds
    if hit is not None and hit[0] == key:
        return hit[1]
    rng = random.Random(seed)
    co = selector.coauthor_ranked(target, rng)  # closest first (shared authors, time), ties by the target's seed
    co_ids = {c.arxiv_id for c in co}
    rnd = [e for e in selector.random_pool(target) if e.arxiv_id not in co_ids]
    rng.shuffle(rnd)
    out = [(c, "coauthor") for c in co] + [(r, "random") for r in rnd]
    selector._ladder_memo = (key, out)
    return out


def template_tokens(task: Task, fields: dict[str, str], demos: int, citations: int, templates_dir) -> int:
    """What the task's template adds to a prompt with `demos` demonstrations and `citations` cited papers (every
    text emptied: WordPiece counts are additive, so a prompt's count is this plus its texts')."""
    blank = {k: "" for k in fields}
    probe = Sample(
        sample_id="",
        round="",
        task=task,
        setting="",
        split="test",
        arxiv_id="",
        paper_id="",
        published=date(2000, 1, 1),
        fields=blank,
        citations=[CitedPaper(title="") for _ in range(citations)],
        demos=[Demo(arxiv_id="", published=date(2000, 1, 1), fields=blank, label="", origin="random")] * demos,
        label="",
    )
    return count_tokens([skeleton(probe, templates_dir=templates_dir)])[0]


def select(
    selector: DemoSelector,
    spec: SettingSpec,
    target: Entry,
    seed: int,
    own_tokens: int,
    template_tokens: Callable[[int], int] = lambda k: 0,
) -> list[tuple[Entry, str]]:
    """Rung `spec.tokens`: the longest prefix of the shared candidates that fits the budget with the target.

    `own_tokens`: the target's texts (fields, citation list); `template_tokens(k)`: what the template adds with
    k demos. The prompt's count is exactly their sum plus the demos' costs (WordPiece is additive)."""
    out: list[tuple[Entry, str]] = []
    used = own_tokens
    for e, origin in candidates(selector, target, seed):
        cost = selector.cost(target, e)
        if used + cost + template_tokens(len(out) + 1) > spec.tokens:
            break
        out.append((e, origin))
        used += cost
    return out


def prefix_tokens(text: str, n: int) -> str:
    """The longest prefix of `text` ending at a word boundary with at most `n` WordPiece tokens."""
    if n <= 0:
        return ""
    enc = wordpiece().encode(text, add_special_tokens=False)
    if len(enc.ids) <= n:
        return text
    end = enc.offsets[n - 1][1]
    if end < len(text) and not text[end].isspace():  # the n-th token ends inside a word: drop that word
        end = text.rfind(" ", 0, enc.offsets[n - 1][0] + 1)
        end = max(end, 0)
    return text[:end].rstrip()


def fit_target(fields: dict[str, str], fields_tokens: int, room: int) -> tuple[dict[str, str], int] | str:
    """The target's fields cut to `room` tokens (the rung less the template and the citation list): the body
    loses its end; the other fields (title, abstract) stay whole. Returns (fields, their tokens) or the reason
    the target cannot fit (its other fields leave less than MIN_BODY_TOKENS of the body)."""
    if fields_tokens <= room:
        return fields, fields_tokens
    body = fields.get("body", "")
    others = fields_tokens - count(body)
    keep = room - others
    if keep < MIN_BODY_TOKENS:
        return f"the rung leaves under {MIN_BODY_TOKENS} tokens of the body (the rest of the input is larger)"
    cut = prefix_tokens(body, keep)
    return {**fields, "body": cut}, others + count(cut)
