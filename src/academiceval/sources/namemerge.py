"""Merging the written variants of one person's name on evidence: "S. H. Bryngelson" = "Spencer H. Bryngelson".

A publication list writes its people in several ways ("H. {Le Berre}", "H. A. {Le Berre}", "Henry {Le Berre}";
"R. McMullen", "R. M. McMullen"). `author_key` keeps them apart on purpose (initials are not names). This
module merges two keys only when

1. the names are *compatible*: same surname (with its particles, "le berre"), and given names that agree token
   by token where both have one, an initial matching a full name ("s" ~ "spencer"), missing middle names
   allowed ("h" ~ "h a", "spencer" ~ "s h") — "jon" and "jonathan", or "steve" and "stephen", are not;
2. there is *evidence*: the two variants share a co-author (the same person under compatible keys) on
   different papers, and never appear together on one paper (two authors of one paper are two people);
3. the merge is *unambiguous*: a variant compatible with two different people ("j estrada" with "jon estrada"
   and "jonathan b estrada", which are incompatible with each other) joins neither.

Every merge is recorded (`NameMerge`: the keys, the strings as written, the shared co-authors); every
compatible pair that was not merged is recorded with the reason (`refused`). Nothing merges by similarity.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from academiceval.sources.coauthor_evidence import CoauthorEvidence
from academiceval.sources.names import author_key
from academiceval.store.paper_models import Author

PARTICLES = frozenset(
    {"de", "da", "di", "del", "della", "der", "den", "van", "von", "le", "la", "du", "dos", "das", "ter"}
)
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
EVIDENCE_KEPT = 5  # shared co-authors recorded per merge (any one proves it; the CLI shows three)


def name_parts(key: str) -> tuple[tuple[str, ...], str]:
    """(given-name tokens, surname with its particles) of an author key: "h a le berre" → (("h", "a"), "le berre")."""
    toks = [t for t in key.split() if t not in _SUFFIXES]
    if not toks:
        return (), key
    k = len(toks) - 1
    while k > 1 and toks[k - 1] in PARTICLES:
        k -= 1
    return tuple(toks[:k]), " ".join(toks[k:])


def _token_ok(a: str, b: str) -> bool:
    return a == b or (len(a) == 1 and b.startswith(a)) or (len(b) == 1 and a.startswith(b))


def names_compatible(a: str, b: str) -> bool:
    """Same surname and given names that do not contradict each other (see the module docstring)."""
    if a == b:
        return True
    ga, sa = name_parts(a)
    gb, sb = name_parts(b)
    if sa != sb or not ga or not gb:
        return False
    return all(_token_ok(x, y) for x, y in zip(ga, gb, strict=False))


def _informative(key: str) -> tuple[int, int]:
    given, _ = name_parts(key)
    return sum(1 for t in given if len(t) > 1), len(given)


@dataclass
class NameMerge:
    """One person whose name was written in several ways."""

    canonical: str  # the key kept (the most complete form)
    name: str  # display form of the canonical key (most frequent spelling)
    keys: list[str]  # every key merged, canonical first
    strings: list[str]  # every spelling seen, most frequent first
    evidence: dict[str, list[str]] = field(default_factory=dict)  # merged key → shared co-authors (keys)


@dataclass
class Refusal:
    key: str
    other: str
    reason: str  # "no shared co-author", "ambiguous: ...", "co-authors of one paper"


class EvidenceResolver:
    """Collects author lists, then merges name variants on evidence (`solve`).

    Linear in authors per paper (issue 26, item 9): a key is compared only with the clusters of its (surname,
    first initial) bucket — the precondition of `names_compatible` — never with the whole paper, and the shared
    co-authors are found by `sources.coauthor_evidence.CoauthorEvidence` without listing anyone's co-authors.

    The decisions (which keys merge, which are refused and why) are those of the first version, and so is the
    evidence of a merge when it names at most `EVIDENCE_KEPT` co-authors; beyond that `EVIDENCE_KEPT` of them
    are kept (one proves the merge; the CLI shows three).
    `work` counts the comparisons made (name checks, paper pairs, co-authors looked at), so tests can assert the
    growth without timing anything.
    """

    def __init__(self) -> None:
        self._papers: dict[str, list[str]] = {}
        self._spellings: dict[str, Counter[str]] = defaultdict(Counter)
        self._canon: dict[str, str] = {}
        self._merges: list[NameMerge] = []
        self._refused: list[Refusal] = []
        self._solved = False
        self.work: Counter[str] = Counter()
        self._parts: dict[str, tuple[tuple[str, ...], str]] = {}

    def observe(self, paper_id: str, authors: Sequence[Author | str]) -> None:
        keys: list[str] = []
        for a in authors:
            name = a.name if isinstance(a, Author) else a
            key = (a.key if isinstance(a, Author) and a.key else "") or author_key(name)
            if not key:
                continue
            keys.append(key)
            self._spellings[key][name] += 1
        self._papers[paper_id] = keys
        self._solved = False

    def _name(self, key: str) -> tuple[tuple[str, ...], str]:
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = name_parts(key)
        return parts

    def _bucket_of(self, key: str) -> tuple[str, str] | None:
        """(surname, first initial): keys in different buckets are never compatible (None: no given name)."""
        given, surname = self._name(key)
        return (surname, given[0][0]) if given and given[0] else None

    def solve(self) -> EvidenceResolver:
        self.work = Counter()
        ev = CoauthorEvidence(self._papers, self._bucket_of, names_compatible, kept=EVIDENCE_KEPT, work=self.work)
        papers_of = ev.papers_of
        by_surname: dict[str, list[str]] = defaultdict(list)
        for k in papers_of:
            by_surname[self._name(k)[1]].append(k)
        self._canon, self._merges, self._refused = {}, [], []
        for keys in by_surname.values():
            if len(keys) < 2:
                continue
            keys.sort(key=lambda k: (-_informative(k)[0], -_informative(k)[1], -len(papers_of[k]), k))
            clusters: list[list[str]] = []
            joinable: dict[str, list[list[str]]] = defaultdict(list)  # first initial -> clusters, in order
            evidence: dict[str, list[str]] = {}
            for k in keys:
                bucket = self._bucket_of(k)
                fits: list[list[str]] = []
                together: list[list[str]] = []
                for c in joinable[bucket[1]] if bucket else ():
                    self.work["cluster_checks"] += len(c)
                    if not all(names_compatible(k, m) for m in c):
                        continue
                    (together if any(ev.share_a_paper(k, m) for m in c) else fits).append(c)
                for c in together:
                    self._refused.append(Refusal(k, c[0], "co-authors of one paper"))
                proven = [(c, ev.shared(k, c)) for c in fits]
                proven = [(c, shared) for c, shared in proven if shared]
                if len(proven) == 1:
                    c, shared = proven[0]
                    c.append(k)
                    evidence[k] = shared
                    continue
                if len(proven) > 1:
                    self._refused.append(
                        Refusal(k, proven[0][0][0], "ambiguous: compatible with " + ", ".join(c[0] for c, _ in proven))
                    )
                else:
                    self._refused.extend(Refusal(k, c[0], "no shared co-author") for c in fits)
                clusters.append([k])
                if bucket:
                    joinable[bucket[1]].append(clusters[-1])
            for c in clusters:
                if len(c) < 2:
                    continue
                spell: Counter[str] = Counter()
                for k in c:
                    spell.update(self._spellings[k])
                canonical = c[0]
                for k in c:
                    self._canon[k] = canonical
                self._merges.append(
                    NameMerge(
                        canonical=canonical,
                        name=self._spellings[canonical].most_common(1)[0][0],
                        keys=list(c),
                        strings=[s for s, _ in spell.most_common()],
                        evidence={k: evidence[k] for k in c[1:]},
                    )
                )
        self._merges.sort(key=lambda m: (-len(m.keys), m.canonical))
        self._solved = True
        return self

    def _ensure(self) -> None:
        if not self._solved:
            self.solve()

    def resolve(self, key: str) -> str:
        self._ensure()
        return self._canon.get(key, key)

    def mapping(self) -> dict[str, str]:
        """Merged key → canonical key (keys that were not merged are absent)."""
        self._ensure()
        return {k: v for k, v in self._canon.items() if k != v}

    def merges(self) -> list[NameMerge]:
        self._ensure()
        return list(self._merges)

    def refused(self) -> list[Refusal]:
        self._ensure()
        return list(self._refused)

    def apply(self, authors: Iterable[Author]) -> list[Author]:
        """Authors with their keys resolved (display names untouched)."""
        return [a.model_copy(update={"key": self.resolve(a.key or author_key(a.name))}) for a in authors]
