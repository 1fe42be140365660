"""An in-memory index over a mirror directory that evaluates arXiv queries locally.

Built once per directory per process (cached): records merged per versionless id, token sets for `ti:`/`abs:`,
author-key tokens with a surname index for `au:`, a category index for `cat:`, and a sorted list of v1 timestamps
so `submittedDate:[… TO …]` windows cost a binary search. Matching rules (documented because they define what
the mirror "finds" compared with arXiv):

- `au:X` — X is normalised like an author key (`_` counts as a space); it matches an author whose surname is X's
  last token and whose other name tokens contain X's other tokens in order, where an initial matches a full
  given name ("a del maestro" matches "Adrian Del Maestro"). Liberal like arXiv's; collectors filter by key.
- `ti:`/`abs:`/`co:`/`jr:` — every word present (a quoted phrase: contiguous); `word*` is a prefix match.
- `cat:X` — equal to a category, or its archive ("astro-ph" matches astro-ph.GA); `astro-ph*` is a prefix.
- `all:` — any of title, abstract, authors, comment, categories. `id:` — the versionless id.
- `relevance` ordering falls back to submission date (the mirror has no ranking model).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from academiceval.sources.errors import InvalidArxivIdError, RecordParseError, SourceError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.records import MirrorRecord, combine, standing
from academiceval.sources.mirror.scan import FoundFile, find_files, read_file
from academiceval.sources.mirror.stamped import STAMP_SOURCE, stamp_records
from academiceval.sources.names import NameResolver, _fold, key_tokens, surname_of
from academiceval.sources.query import BoolOp, DateRange, Node, Term, parse_query

_WORD = re.compile(r"\w+")
Progress = Callable[[str, int, int], None]


def text_tokens(text: str) -> list[str]:
    return _WORD.findall(_fold(text).replace("_", " "))


@dataclass
class FormatStats:
    files: int = 0
    records: int = 0
    errors: int = 0


@dataclass
class _Doc:
    rec: MirrorRecord
    title: list[str]
    abstract: list[str]
    comment: list[str]
    journal: list[str]
    authors: list[list[str]]
    title_set: frozenset[str] = field(default_factory=frozenset)
    abstract_set: frozenset[str] = field(default_factory=frozenset)


class MirrorIndex:
    """Everything a mirror directory holds, merged and indexed for query evaluation."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records: dict[str, MirrorRecord] = {}
        self.pdfs: dict[str, tuple[int | None, Path]] = {}
        self.errors: list[SourceError] = []
        self.notes: list[SourceError] = []  # not errors: e.g. stamp records with an approximate v1 date
        self.unnamed_pdfs: list[Path] = []  # PDFs not named by id: used when their page-1 stamp names a paper
        self.stats: dict[str, FormatStats] = defaultdict(FormatStats)
        self.skipped_files = 0
        # initial-form → full-form merges supported by two records of the same paper; not applied to the
        # records (keys stay `author_key(name)` everywhere), offered to collectors that want them
        self.names = NameResolver()
        self._observed: set[str] = set()
        self._docs: list[_Doc] = []
        self._by_id: dict[str, int] = {}
        self._surname: dict[str, set[int]] = defaultdict(set)
        self._cats: dict[str, set[int]] = defaultdict(set)
        self._by_published: list[tuple[datetime, int]] = []
        self._by_updated: list[tuple[datetime, int]] = []

    # ---- building -------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, root: Path, progress: Progress | None = None) -> MirrorIndex:
        idx = cls(root)
        files = find_files(root)
        for n, found in enumerate(files, 1):
            idx.add_file(found)
            if progress:
                progress(str(found.path), n, len(files))
        idx.add_stamped()
        idx.finish()
        return idx

    def add_file(self, found: FoundFile) -> None:
        if found.fmt == "skipped":
            self.skipped_files += 1
            if found.path.suffix.lower() == ".pdf":
                self.unnamed_pdfs.append(found.path)
            return
        st = self.stats[found.fmt]
        st.files += 1
        if found.fmt == "pdf":
            assert found.arxiv_id is not None
            old = self.pdfs.get(found.arxiv_id)
            if old is None or (found.version or 0) > (old[0] or 0):
                self.pdfs[found.arxiv_id] = (found.version, found.path)
            st.records += 1
            return
        for item in read_file(found):
            if isinstance(item, RecordParseError):
                st.errors += 1
                self.errors.append(item)
                continue
            st.records += 1
            self.add_record(item)

    def add_record(self, rec: MirrorRecord) -> None:
        aid = rec.meta.arxiv_id
        old = self.records.get(aid)
        if old is not None:  # two records of one paper: the evidence NameResolver needs (see names.py)
            if aid not in self._observed:
                self._observed.add(aid)
                self.names.observe(aid, old.meta.authors)
            self.names.observe(aid, rec.meta.authors)
        self.records[aid] = rec if old is None else combine(old, rec)

    def add_stamped(self) -> None:
        """Records from page-1 arXiv stamps for PDFs whose paper no other file describes (see `stamped.py`);
        call after the last `add_file`, before `finish`."""

        # a paper described only by a reference entry in another paper gets its PDF's stamp (records.standing)
        def has_real(aid: str) -> bool:
            return aid in self.records and standing(self.records[aid].meta.source) == 2

        res = stamp_records(self.pdfs, self.unnamed_pdfs, has_real)
        if res.stamps_read:
            st = self.stats[STAMP_SOURCE]
            st.files, st.records, st.errors = res.stamps_read, len(res.records), len(res.errors)
        self.pdfs.update(res.pdfs)
        self.errors.extend(res.errors)
        self.notes.extend(res.notes)
        for rec in res.records:
            self.records[rec.meta.arxiv_id] = rec

    def finish(self) -> None:
        """Build the search structures (call after the last add_*)."""
        self._docs.clear()
        for rec in sorted(self.records.values(), key=lambda r: (r.published_at, r.meta.arxiv_id)):
            m = rec.meta
            doc = _Doc(
                rec=rec,
                title=text_tokens(m.title),
                abstract=text_tokens(m.abstract),
                comment=text_tokens(m.comment or ""),
                journal=text_tokens(m.journal_ref or ""),
                authors=[a.key.split() if a.key else key_tokens(a.name) for a in m.authors],
            )
            doc.title_set, doc.abstract_set = frozenset(doc.title), frozenset(doc.abstract)
            i = len(self._docs)
            self._docs.append(doc)
            self._by_id[m.arxiv_id] = i
            for toks in doc.authors:
                if toks:
                    self._surname[surname_of(" ".join(toks))].add(i)
            for c in m.categories:
                self._cats[c].add(i)
        self._by_published = sorted((d.rec.published_at, i) for i, d in enumerate(self._docs))
        self._by_updated = sorted((d.rec.updated_at or d.rec.published_at, i) for i, d in enumerate(self._docs))

    def __len__(self) -> int:
        return len(self._docs)

    # ---- queries --------------------------------------------------------------------------------------------
    def get(self, arxiv_id: str) -> MirrorRecord | None:
        try:
            base, _ = parse_arxiv_id(arxiv_id)
        except InvalidArxivIdError:
            return None
        i = self._by_id.get(base)
        return self._docs[i].rec if i is not None else None

    def search(
        self, query: str | Node, *, sort_by: str = "submittedDate", sort_order: str = "descending"
    ) -> list[MirrorRecord]:
        node = parse_query(query) if isinstance(query, str) else query
        hits = self._eval(node)
        if sort_by == "lastUpdatedDate":
            keyf: Callable[[int], tuple] = lambda i: (  # noqa: E731
                self._docs[i].rec.updated_at or self._docs[i].rec.published_at,
                self._docs[i].rec.meta.arxiv_id,
            )
        else:
            keyf = lambda i: (self._docs[i].rec.published_at, self._docs[i].rec.meta.arxiv_id)  # noqa: E731
        order = sorted(hits, key=keyf, reverse=(sort_order == "descending"))
        return [self._docs[i].rec for i in order]

    def search_page(
        self,
        query: str | Node,
        *,
        start: int = 0,
        max_results: int | None = 100,
        sort_by: str = "submittedDate",
        sort_order: str = "descending",
    ) -> tuple[int, list[MirrorRecord]]:
        """(total hits, one page of them): the reader API shared with the on-disk index (`disk.DiskIndex`)."""
        hits = self.search(query, sort_by=sort_by, sort_order=sort_order)
        start = max(0, start)
        return len(hits), hits[start:] if max_results is None else hits[start : start + max(0, max_results)]

    def _eval(self, node: Node) -> set[int]:
        if isinstance(node, BoolOp):
            left = self._eval(node.left)
            if node.op == "AND":
                return left & self._eval(node.right) if left else set()
            if node.op == "OR":
                return left | self._eval(node.right)
            return left - self._eval(node.right) if left else set()
        if isinstance(node, DateRange):
            return self._date_range(node)
        return self._term(node)

    def _date_range(self, node: DateRange) -> set[int]:
        arr = self._by_published if node.field == "submittedDate" else self._by_updated
        lo = bisect.bisect_left(arr, (node.start.replace(tzinfo=UTC), -1))
        hi = bisect.bisect_right(arr, (node.end.replace(tzinfo=UTC, second=59, microsecond=999999), len(arr)))
        return {i for _, i in arr[lo:hi]}

    def _term(self, t: Term) -> set[int]:
        f = t.field
        if f == "au":
            return self._author(t.value)
        if f == "cat":
            return self._category(t.value)
        if f == "id":
            rec = self.get(t.value)
            return {self._by_id[rec.meta.arxiv_id]} if rec else set()
        attrs = {"ti": ("title",), "abs": ("abstract",), "co": ("comment",), "jr": ("journal",)}.get(
            f, ("title", "abstract", "comment")
        )
        match = _text_matcher(t)
        sets = {"title": "title_set", "abstract": "abstract_set"}
        out = {
            i
            for i, d in enumerate(self._docs)
            if any(match(getattr(d, a), getattr(d, sets[a]) if a in sets else None) for a in attrs)
        }
        if f in ("all", "rn"):
            out |= self._author(t.value) | self._category(t.value)
        return out

    def _author(self, value: str) -> set[int]:
        q = key_tokens(value.replace("_", " ").rstrip("*"))
        if not q:
            return set()
        cands = self._surname.get(q[-1], set())
        return {i for i in cands if any(_author_match(toks, q) for toks in self._docs[i].authors)}

    def _category(self, value: str) -> set[int]:
        v = value.strip()
        out: set[int] = set()
        for c, ids in self._cats.items():
            if v.endswith("*"):
                ok = c.startswith(v[:-1])
            else:
                ok = c == v or c.startswith(v + ".")
            if ok:
                out |= ids
        return out

    def iter_records(self) -> Iterable[MirrorRecord]:
        return (d.rec for d in self._docs)


def _text_matcher(t: Term) -> Callable[[list[str], frozenset[str] | None], bool]:
    """Compile a ti:/abs:/all: term once: (tokens, token set or None) → match."""
    q = text_tokens(t.value.rstrip("*"))
    if not q:
        return lambda toks, s: False
    if t.value.endswith("*") and len(q) == 1:
        return lambda toks, s: any(tok.startswith(q[0]) for tok in toks)
    if len(q) == 1 or not t.phrase:
        return lambda toks, s: all(w in (s if s is not None else toks) for w in q)
    n, first = len(q), q[0]

    def phrase(toks: list[str], s: frozenset[str] | None) -> bool:
        if s is not None and first not in s:
            return False
        return any(toks[i : i + n] == q for i, tok in enumerate(toks) if tok == first)

    return phrase


def _author_match(name: list[str], q: list[str]) -> bool:
    if not name or surname_of(" ".join(name)) != q[-1]:
        return False
    rest = name[: len(name) - 1 - name[::-1].index(q[-1])]
    j = 0
    for tok in q[:-1]:
        while j < len(rest) and not (
            rest[j] == tok
            or (len(tok) == 1 and rest[j].startswith(tok))
            or (len(rest[j]) == 1 and tok.startswith(rest[j]))
        ):
            j += 1
        if j == len(rest):
            return False
        j += 1
    return True


_CACHE: dict[tuple[str, float], MirrorIndex] = {}
_CACHE_LOCK = threading.Lock()


def cached_index(root: str | Path) -> MirrorIndex | None:
    """The index of a directory if this process has already built it (else None; never builds)."""
    path = Path(root).resolve()
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        return None
    with _CACHE_LOCK:
        return _CACHE.get(key)


def load_index(root: str | Path, progress: Progress | None = None) -> MirrorIndex:
    """The index of a directory, built once per process (rebuilt when the directory's mtime changes)."""
    path = Path(root).resolve()
    if not path.exists():
        from academiceval.sources.errors import SourceNotFoundError

        raise SourceNotFoundError(f"mirror not found: {path}", hint="pass a directory (or file) holding arXiv data")
    key = (str(path), path.stat().st_mtime)
    with _CACHE_LOCK:
        idx = _CACHE.get(key)
        if idx is None:
            idx = MirrorIndex.build(path, progress)
            _CACHE[key] = idx
        elif progress:
            progress("(already indexed in this process)", 1, 1)
        return idx
