"""The name merging of the first publication-list import (issue 12), kept verbatim as an oracle.

Quadratic in authors per paper (it gives every author the set of all its co-authors), which issue 26 (item 9)
fixed in `sources.namemerge` / `sources.coauthor_evidence`; the tests check that the new code takes the same
decisions on real lists. Not used by the package."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from academiceval.sources.namemerge import NameMerge, Refusal, _informative, name_parts, names_compatible
from academiceval.sources.names import author_key
from academiceval.store.paper_models import Author


class EvidenceResolver:
    """Collects author lists, then merges name variants on evidence (`solve`)."""

    def __init__(self) -> None:
        self._papers: dict[str, list[str]] = {}
        self._spellings: dict[str, Counter[str]] = defaultdict(Counter)
        self._canon: dict[str, str] = {}
        self._merges: list[NameMerge] = []
        self._refused: list[Refusal] = []
        self._solved = False

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

    def solve(self) -> EvidenceResolver:
        papers_of: dict[str, set[str]] = defaultdict(set)
        coauthors: dict[str, set[str]] = defaultdict(set)
        for pid, keys in self._papers.items():
            for k in keys:
                papers_of[k].add(pid)
                coauthors[k].update(x for x in keys if x != k)
        by_surname: dict[str, list[str]] = defaultdict(list)
        for k in papers_of:
            by_surname[name_parts(k)[1]].append(k)
        self._canon, self._merges, self._refused = {}, [], []
        for keys in by_surname.values():
            if len(keys) < 2:
                continue
            keys.sort(key=lambda k: (-_informative(k)[0], -_informative(k)[1], -len(papers_of[k]), k))
            clusters: list[list[str]] = []
            evidence: dict[str, list[str]] = {}
            for k in keys:
                fits = [
                    c
                    for c in clusters
                    if all(names_compatible(k, m) for m in c) and not any(papers_of[k] & papers_of[m] for m in c)
                ]
                together = [c for c in clusters if all(names_compatible(k, m) for m in c) and c not in fits]
                for c in together:
                    self._refused.append(Refusal(k, c[0], "co-authors of one paper"))
                proven = [(c, self._shared(k, c, coauthors)) for c in fits]
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

    def _shared(self, key: str, cluster: list[str], coauthors: dict[str, set[str]]) -> list[str]:
        """Co-authors of `key` that are also co-authors of the cluster (the same person under compatible keys)."""
        mine = coauthors[key] - set(cluster)
        theirs: set[str] = set()
        for m in cluster:
            theirs |= coauthors[m]
        theirs -= {key, *cluster}
        out = {a for a in mine if a in theirs}
        rest = theirs - out
        for a in mine - out:
            if any(names_compatible(a, b) for b in rest if name_parts(a)[1] == name_parts(b)[1]):
                out.add(a)
        return sorted(out)

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
