"""Context settings and demonstration selection.

A setting decides which demonstrations (input/label pairs of the same task from older papers) precede the
target: none (`zero-shot`), k random papers of the same arXiv category (`random:k`), k papers first-authored by
co-authors (`coauthor:k`, the paper's "G" settings), both (`mixed:a+b`), or as many as fit a token target
(`ctx:N`, the flexible context length). Selection is seeded per sample; eligibility is the leakage rule: a demo
comes from the train split (train+val for test targets), is never the target or a version of it, and is never
newer than the target.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from academiceval.errors import ConfigError
from academiceval.graph.queries import coauthor_papers, coauthor_papers_by_authorship, has_graph
from academiceval.rounds.leakage import is_version
from academiceval.rounds.versions import DemoText, TextDate
from academiceval.sources.dates import not_after
from academiceval.store.artifacts import artifact_name
from academiceval.store.models import Split, Task
from academiceval.store.workspace import Workspace

Kind = Literal["zero-shot", "random", "coauthor", "mixed", "ctx"]
VERSION_TITLE_SIMILARITY = 0.95  # two ids with near-identical titles are treated as versions of one paper


@dataclass(frozen=True)
class SettingSpec:
    kind: Kind
    random: int = 0
    coauthor: int = 0
    tokens: int = 0

    @property
    def spec(self) -> str:
        if self.kind == "zero-shot":
            return "zero-shot"
        if self.kind == "random":
            return f"random:{self.random}"
        if self.kind == "coauthor":
            return f"coauthor:{self.coauthor}"
        if self.kind == "mixed":
            return f"mixed:{self.random}+{self.coauthor}"
        return f"ctx:{self.tokens}"

    @property
    def suffix(self) -> str:
        """Paper-style name suffix: G = co-author demos, M = mixed, C = context-length target."""
        return {"zero-shot": "", "random": "", "coauthor": "G", "mixed": "M", "ctx": "C"}[self.kind]


_SPEC = re.compile(r"^(zero-shot|random:(\d+)|coauthor:(\d+)|mixed:(\d+)\+(\d+)|ctx:(\d+))$")


def parse_setting(text: str) -> SettingSpec:
    m = _SPEC.match(text.strip())
    if not m:
        raise ConfigError(
            f"unknown setting {text!r}",
            hint="use zero-shot, random:K, coauthor:K, mixed:A+B or ctx:TOKENS (or --context-tokens N)",
        )
    if m.group(1) == "zero-shot":
        return SettingSpec("zero-shot")
    if m.group(2):
        spec = SettingSpec("random", random=int(m.group(2)))
    elif m.group(3):
        spec = SettingSpec("coauthor", coauthor=int(m.group(3)))
    elif m.group(4):
        spec = SettingSpec("mixed", random=int(m.group(4)), coauthor=int(m.group(5)))
    else:
        spec = SettingSpec("ctx", tokens=int(m.group(6)))
    if spec.random + spec.coauthor + spec.tokens == 0:
        raise ConfigError(f"setting {text!r} asks for no demonstrations", hint="use zero-shot for that")
    return spec


def setting_names(task: Task, specs: list[SettingSpec]) -> dict[str, str]:
    """Config names `{task}-{setting slug}` (`abstract-random1`, `title-zero-shot`, `related_work-coauthor2`,
    `title-ctx8K`): store.artifacts.artifact_name, the same in every round and the same as a run's records file
    stem. The measured mean input size is metadata (`ConfigInfo.mean_input_tokens`, shown by `stats` and the
    dataset card), no longer part of the name: it changed from round to round (`-14K` here, `-17K` there)."""
    return {spec.spec: artifact_name(task, spec.spec) for spec in specs}


def size_label(tokens: float) -> str:
    """`13,834` → `14K`, `940` → `0.9K`: how a config's mean input size is shown (it used to end its name)."""
    k = tokens / 1000.0
    return f"{round(k)}K" if k >= 0.95 else f"{k:.1f}K"


@dataclass
class Entry:
    """What demo selection needs to know about one paper (no text: texts are re-read when a sample is written)."""

    arxiv_id: str
    paper_id: str
    published: date
    category: str | None
    split: Split
    title_norm: str
    authors: tuple[str, ...] = ()
    cost: dict[str, int] = field(default_factory=dict)  # task -> tokens of its demo (inputs + label)
    date_precision: str = "day"  # "year"/"month" for publication-list dates (sources.dates)
    # its texts as demonstrations, each with the latest date it can be from (rounds.versions): the primary text
    # first, then earlier versions' texts, newest first; empty = one text dated `published`
    texts: tuple[DemoText, ...] = ()

    def demo_texts(self) -> tuple[DemoText, ...]:
        if self.texts:
            return self.texts
        when = TextDate(None, self.published, self.date_precision)
        return (DemoText(self.paper_id, when, self.cost),)


def archive(category: str | None) -> str | None:
    """`math.PR` → `math`, `hep-ph` → `hep-ph`, `astro-ph.GA` → `astro-ph`."""
    return category.split(".")[0] if category else None


class DemoSelector:
    """Eligible demonstrations for targets of one task, by category and by co-authorship."""

    def __init__(
        self,
        ws: Workspace,
        task: Task,
        entries: dict[str, Entry],
        *,
        category_level: Literal["primary", "archive"] = "primary",
        coauthor_cap: int = 0,
    ) -> None:
        self.ws = ws
        self.coauthor_cap = coauthor_cap  # uses of one paper as a co-author demo per config and split (0: no cap)
        self._uses: dict[tuple[str, str], Counter[str]] = {}  # (setting, split) -> paper -> co-author demo uses
        self.task = task
        self.entries = entries
        self.category_level = category_level
        self.graph_used = has_graph(ws)
        # (target, candidate) pairs where the candidate was not eligible only because every text of it is dated
        # after the target (or undated): counted in the manifest (validity.demo_text_versions)
        self.text_excluded: set[tuple[str, str]] = set()
        self._by_cat: dict[str | None, list[Entry]] = {}
        self._co_memo: tuple[str, list[Entry]] = ("", [])
        for e in sorted(entries.values(), key=lambda e: (e.published, e.arxiv_id)):
            if task in e.cost:
                self._by_cat.setdefault(self._cat(e.category), []).append(e)

    def _cat(self, c: str | None) -> str | None:
        return archive(c) if self.category_level == "archive" else c

    def eligible(self, target: Entry, cand: Entry) -> bool:
        # a demo must not be newer than its target; with imprecise dates it must be *known* not to be (a demo
        # from the same year as a year-dated target is not)
        if self.task not in cand.cost or not not_after(
            cand.published,
            cand.date_precision,
            target.published,
            target.date_precision,
        ):
            return False
        if cand.split != "train" and not (target.split == "test" and cand.split == "val"):
            return False
        if is_version(
            target.arxiv_id, target.paper_id, target.title_norm, cand.arxiv_id, cand.paper_id, cand.title_norm
        ):
            return False
        if self.text_for(target, cand) is None:  # every text of the paper is (or may be) newer than the target
            self.text_excluded.add((target.arxiv_id, cand.arxiv_id))
            return False
        return True

    def text_for(self, target: Entry, cand: Entry) -> DemoText | None:
        """The text `cand` demonstrates `target` with: its newest text dated no later than the target
        (rounds.versions), or None."""
        for t in cand.demo_texts():
            if self.task in t.cost and t.date.not_after(target.published, target.date_precision):
                return t
        return None

    def cost(self, target: Entry, cand: Entry) -> int:
        """Tokens `cand` adds as a demonstration of `target` (the inputs and label of the text it is shown with)."""
        t = self.text_for(target, cand)
        return (t.cost if t is not None else cand.cost)[self.task]

    def random_pool(self, target: Entry) -> list[Entry]:
        return [e for e in self._by_cat.get(self._cat(target.category), []) if self.eligible(target, e)]

    def coauthor_pool(self, target: Entry) -> list[Entry]:
        ids = self._graph_candidates(target) if self.graph_used else self._authorship_candidates(target)
        out = []
        for i in ids:
            e = self.entries.get(i)
            if e is not None and self.eligible(target, e):
                out.append(e)
        return out

    def _graph_candidates(self, target: Entry) -> list[str]:
        return coauthor_papers(self.ws, target.arxiv_id, 500)

    def _authorship_candidates(self, target: Entry) -> list[str]:
        """Without a crawled graph: co-authors from the workspace's authorship (1 hop), ranked like the graph."""
        return coauthor_papers_by_authorship(self.ws, target.authors, exclude=target.arxiv_id)

    def select(
        self, spec: SettingSpec, target: Entry, rng: random.Random, budget: int = 0
    ) -> list[tuple[Entry, str]] | str:
        """The demos (with their origin) for one target, or the reason none can be given (sample skipped)."""
        if spec.kind == "zero-shot":
            return []
        co = self.coauthor_ranked(target, rng) if spec.coauthor or spec.kind == "ctx" else []
        if spec.kind in ("random", "coauthor", "mixed"):
            picked: list[tuple[Entry, str]] = []
            if spec.coauthor:
                if len(co) < spec.coauthor:
                    return f"fewer than {spec.coauthor} co-author demos ({self.coauthor_source})"
                uses = self._uses.get((spec.spec, target.split), Counter())
                free = [e for e in co if not self.coauthor_cap or uses[e.arxiv_id] < self.coauthor_cap]
                if len(free) < spec.coauthor:
                    return (
                        f"fewer than {spec.coauthor} co-author demos under the cap "
                        f"(a paper serves at most {self.coauthor_cap} times per config and split)"
                    )
                picked = [(e, "coauthor") for e in free[: spec.coauthor]]
            if spec.random:
                taken = {e.arxiv_id for e, _ in picked}
                pool = [e for e in self.random_pool(target) if e.arxiv_id not in taken]
                if len(pool) < spec.random:
                    return f"fewer than {spec.random} same-{self.category_level}-category demos"
                picked += [(e, "random") for e in rng.sample(pool, spec.random)]
            return picked
        # ctx:N — co-author demos first (closest), then random same-category ones, until the budget is met
        co_ids = {c.arxiv_id for c in co}
        rnd = [e for e in self.random_pool(target) if e.arxiv_id not in co_ids]
        rng.shuffle(rnd)
        out: list[tuple[Entry, str]] = []
        used = budget
        for e, origin in [(c, "coauthor") for c in co] + [(r, "random") for r in rnd]:
            if used >= spec.tokens:
                break
            out.append((e, origin))
            used += self.cost(target, e)
        return out

    def _co(self, target: Entry) -> list[Entry]:
        if self._co_memo[0] != target.arxiv_id:
            self._co_memo = (target.arxiv_id, self.coauthor_pool(target))
        return self._co_memo[1]

    def coauthor_ranked(self, target: Entry, rng: random.Random) -> list[Entry]:
        """The eligible co-author papers, closest first: most authors shared with the target, then nearest in time,
        ties broken by the sample's seed (`rng`) — so targets with the same authors do not all get one paper."""
        own = set(target.authors)
        keyed = [
            (-len(own & set(e.authors)), (target.published - e.published).days, rng.random(), e.arxiv_id, e)
            for e in self._co(target)
        ]
        keyed.sort(key=lambda t: t[:4])
        return [t[-1] for t in keyed]

    def record_use(self, spec: SettingSpec, target: Entry, picked: list[tuple[Entry, str]]) -> None:
        """A sample with these demos was written: count each co-author demo's use in its config and split (the cap)."""
        uses = self._uses.setdefault((spec.spec, target.split), Counter())
        uses.update(e.arxiv_id for e, origin in picked if origin == "coauthor")

    @property
    def coauthor_source(self) -> str:
        return "graph" if self.graph_used else "workspace authorship"


def text_version_counts(selectors: dict[str, DemoSelector], entries: dict[str, Entry]) -> dict[str, object]:
    """Per task: (target, candidate) pairs where the candidate was not eligible because every text of it is dated
    after the target (or undated), and the targets concerned; the papers whose primary text is a later version.
    (Demos shown with an earlier version's text are counted per config in the manifest's notes.)"""
    out: dict[str, object] = {
        task: {
            "candidates excluded: every text dated after the target": len(sel.text_excluded),
            "targets with such a candidate": len({t for t, _ in sel.text_excluded}),
        }
        for task, sel in selectors.items()
        if sel.text_excluded
    }
    out["papers whose text is a later version"] = sum(
        1 for e in entries.values() if e.texts and (e.texts[0].date.version or 0) > 1
    )
    return out
