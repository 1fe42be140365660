"""The evidence behind a name merge, found without ever listing everyone's co-authors (issue 26, item 9).

`sources.namemerge.EvidenceResolver` merges a name variant into a cluster of compatible spellings only when the
two share a co-author on different papers. The first version gave every author the set of all their co-authors:
a 3,000-author paper made 9 million entries (155 s, 1.8 GB) and 10,000 authors did not finish. `CoauthorEvidence`
answers "which co-authors do `key` and `cluster` share?" in one of two ways, per question whichever looks at
fewer things:

- **paper pair by paper pair** (a paper of the variant × a paper of the cluster): the keys both papers list
  (a set intersection iterating the smaller paper) and, failing that, the compatible spellings between them
  (the smaller paper's keys looked up in the larger's (surname, initial) buckets). A pair's answer is computed
  once and reused: a collaboration list written once in full and once with initials is one pair for all its
  thousands of candidates;
- **co-author by co-author** from the side with fewer authorships: each co-author is on the other side when its
  own papers meet the other side's papers (`isdisjoint`), and a compatible spelling is looked for among the
  keys of its (surname, initial) bucket. The scan stops at `kept` co-authors found. Two prolific people of one
  surname (hundreds of papers each) would otherwise make hundreds × hundreds of pairs.

Neither the variant nor a member of its cluster can be a co-author both sides list: a candidate shares no paper
with its cluster (else it is refused before evidence is sought). So nothing is excluded per candidate for the
shared keys, and the answers of a paper pair hold for every candidate. `work` counts what was looked at.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

Bucket = tuple[str, str]  # (surname with particles, first initial): compatible keys always share it


class CoauthorEvidence:
    def __init__(
        self,
        papers: Mapping[str, Sequence[str]],
        bucket_of: Callable[[str], Bucket | None],
        compatible: Callable[[str, str], bool],
        *,
        kept: int,
        work: Counter[str],
    ) -> None:
        self.papers = papers  # paper id -> author keys
        self.bucket_of = bucket_of
        self.compatible = compatible
        self.kept = kept
        self.work = work
        self.papers_of: dict[str, dict[str, None]] = defaultdict(dict)  # key -> its papers, in list order
        for pid, keys in papers.items():
            for k in keys:
                self.papers_of[k][pid] = None
        self.paper_sets: dict[str, set[str]] = {k: set(v) for k, v in self.papers_of.items()}
        self.key_buckets: dict[Bucket, list[str]] = defaultdict(list)  # every key of the list, by bucket
        for k in self.papers_of:
            b = bucket_of(k)
            if b is not None:
                self.key_buckets[b].append(k)
        self._keys_of: dict[str, frozenset[str]] = {}
        self._buckets_of: dict[str, dict[Bucket, list[str]]] = {}
        self._same: dict[tuple[str, str], list[str]] = {}
        self._spelled: dict[tuple[str, str], list[tuple[str, str]]] = {}

    # ---- questions ----------------------------------------------------------------------------------------
    def share_a_paper(self, key: str, other: str) -> bool:
        self.work["paper_set_checks"] += 1
        return not self.paper_sets[key].isdisjoint(self.paper_sets[other])

    def shared(self, key: str, cluster: Sequence[str]) -> list[str]:
        """Co-authors of `key` who are co-authors of the cluster too: with the same key, else (when fewer than
        `kept` share a key) under a compatible spelling; sorted, at most `kept` (all of them when fewer)."""
        mine = list(self.papers_of[key])
        theirs = list(dict.fromkeys(q for m in cluster for q in self.papers_of[m]))
        size_mine = sum(len(self.papers[p]) for p in mine)
        size_theirs = sum(len(self.papers[q]) for q in theirs)
        by_scan = min(size_mine, size_theirs)
        if len(mine) * len(theirs) <= by_scan:
            pairs = [(p, q) for p in mine for q in theirs]
            self.work["pair_lookups"] += len(pairs)  # the estimate below looks at each
            size = {p: len(self.papers[p]) for p in (*mine, *theirs)}
            by_pairs = sum(1 if (p, q) in self._same else min(size[p], size[q]) for p, q in pairs)
            if by_pairs <= by_scan:
                return self._by_pairs(key, set(cluster), pairs)
        return self._by_scan(key, set(cluster), mine, theirs, scan_mine=size_mine <= size_theirs)

    # ---- paper pair by paper pair --------------------------------------------------------------------------
    def _keys(self, pid: str) -> frozenset[str]:
        s = self._keys_of.get(pid)
        if s is None:
            s = self._keys_of[pid] = frozenset(self.papers[pid])
        return s

    def _buckets(self, pid: str) -> dict[Bucket, list[str]]:
        b = self._buckets_of.get(pid)
        if b is None:
            b = self._buckets_of[pid] = defaultdict(list)
            for k in self._keys(pid):
                self.work["coauthors_seen"] += 1
                where = self.bucket_of(k)
                if where is not None:
                    b[where].append(k)
        return b

    def _same_keys(self, p: str, q: str) -> list[str]:
        hit = self._same.get((p, q))
        if hit is None:
            a, b = self._keys(p), self._keys(q)
            self.work["paper_pairs"] += 1
            self.work["coauthors_seen"] += min(len(a), len(b))
            hit = self._same[(p, q)] = sorted(a & b)
        return hit

    def _spellings(self, p: str, q: str) -> list[tuple[str, str]]:
        """(key on p, key on q) compatible but not equal ("b wilfong" ~ "benjamin wilfong"), sorted."""
        hit = self._spelled.get((p, q))
        if hit is None:
            small, large = (p, q) if len(self.papers[p]) <= len(self.papers[q]) else (q, p)
            index = self._buckets(large)
            found: set[tuple[str, str]] = set()
            for x in self._keys(small):
                where = self.bucket_of(x)
                for y in index.get(where, ()) if where else ():
                    self.work["name_checks"] += 1
                    if x != y and self.compatible(x, y):
                        found.add((x, y) if small == p else (y, x))
            hit = self._spelled[(p, q)] = sorted(found)
        return hit

    def _by_pairs(self, key: str, members: set[str], pairs: list[tuple[str, str]]) -> list[str]:
        same: set[str] = set()
        for p, q in pairs:
            self.work["pair_lookups"] += 1
            for a in self._same_keys(p, q):  # sorted: the first ones are kept
                same.add(a)
                if len(same) >= self.kept:
                    return sorted(same)
        found = set(same)
        for p, q in pairs:  # `same` is complete here: a spelling of one of them is not new evidence
            self.work["pair_lookups"] += 1
            for a, b in self._spellings(p, q):
                if a != key and a not in same and b not in members and b not in same:
                    found.add(a)
                    if len(found) >= self.kept:
                        return sorted(found)
        return sorted(found)

    # ---- co-author by co-author ----------------------------------------------------------------------------
    def _by_scan(
        self, key: str, members: set[str], mine: list[str], theirs: list[str], *, scan_mine: bool
    ) -> list[str]:
        """Scan the co-authors on one side; each is on the other side when its papers meet the other side's.
        (The variant and its cluster never share a paper, so neither passes that test as a shared co-author.)"""
        scanned, other = (mine, set(theirs)) if scan_mine else (theirs, set(mine))
        coauthors: dict[str, None] = {}
        for p in scanned:
            coauthors.update(dict.fromkeys(self.papers[p]))
        same: list[str] = []
        for a in coauthors:
            self.work["coauthors_seen"] += 1
            if not self.paper_sets[a].isdisjoint(other):
                same.append(a)
                if len(same) >= self.kept:
                    return sorted(same)
        found, same_set = set(same), set(same)
        for x in coauthors:  # x on the scanned side, y a compatible spelling on the other
            if x in same_set:
                continue
            where = self.bucket_of(x)
            for y in self.key_buckets.get(where, ()) if where else ():
                self.work["scan_name_checks"] += 1
                if y == x or y in same_set or not self.compatible(x, y):
                    continue
                if self.paper_sets[y].isdisjoint(other):  # y is not on the other side
                    continue
                a, b = (x, y) if scan_mine else (y, x)
                if a != key and b not in members:
                    found.add(a)
                    if len(found) >= self.kept:
                        return sorted(found)
        return sorted(found)
