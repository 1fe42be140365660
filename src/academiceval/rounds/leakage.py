"""Leakage invariants, checked on every sample while a round is built. A failure aborts the build.

They hold by construction (selection never offers a leaking demo, tasks skip papers whose label appears in their
input); these checks are the independent guard that makes a bug loud instead of silently inflating scores.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from academiceval.errors import AcademicEvalError
from academiceval.sources.dates import not_after
from academiceval.sources.names import latex_to_unicode
from academiceval.store.models import Sample, SplitWindows


@functools.lru_cache(maxsize=128)
def norm_for_match(text: str) -> str:
    """Lower-case, whitespace-free form used for 'is the label inside the input' checks (cached: demo texts are
    checked against many targets)."""
    return "".join(text.split()).casefold()


def contains(haystack: str, needle: str) -> bool:
    """Is the needle inside the haystack, ignoring case and all whitespace (so a label re-spaced by a parser or
    LaTeX still counts)? Exact by design: no cheaper pre-filter can be sure, because whitespace may split any
    word of the needle inside the haystack."""
    n = norm_for_match(needle)
    return bool(n) and n in norm_for_match(haystack)


class LeakageError(AcademicEvalError):
    """A round would leak its labels or its future: nothing is written."""

    code = "leakage"


VERSION_TITLE_SIMILARITY = 0.95


def _base(arxiv_id: str) -> str:
    return re.sub(r"v\d+$", "", arxiv_id.strip())


def is_version(a_id: str, a_pid: str, a_title: str, b_id: str, b_pid: str, b_title: str) -> bool:
    """Same paper (any version): same versionless id, same parsed file, or a near-identical title."""
    if _base(a_id) == _base(b_id):
        return True
    if a_pid == b_pid:
        return True
    return bool(a_title) and fuzz.ratio(a_title, b_title) / 100.0 >= VERSION_TITLE_SIMILARITY


def check_windows(w: SplitWindows) -> None:
    if w.train_until and w.val_from and not w.train_until < w.val_from:
        raise LeakageError(f"train window ends {w.train_until}, not before the val window starts {w.val_from}")
    ends = [d for d in (w.val_until, w.train_until) if d is not None]
    if w.test_from and ends and not max(ends) < w.test_from:
        raise LeakageError(
            f"test window starts {w.test_from} but earlier windows run to {max(ends)}: test targets must be strictly"
            " newer than the val window",
            hint="choose --test-from after the last validation date",
        )


def check_sample(
    s: Sample,
    w: SplitWindows,
    *,
    target_title: str,
    demo_info: dict[str, tuple[str, str, str]],  # demo arxiv id -> (paper_id, normalised title, split)
) -> None:
    """Raise LeakageError naming the sample and the rule it breaks."""
    where = f"sample {s.sample_id}"
    if s.split == "test" and (w.test_from is None or s.published < w.test_from):
        raise LeakageError(f"{where}: test target dated {s.published} lies before the test window ({w.test_from})")
    if s.split == "test" and w.val_until is not None and not s.published > w.val_until:
        raise LeakageError(f"{where}: test target dated {s.published} is not after the val window ({w.val_until})")
    for d in s.demos:
        pid, title, split = demo_info.get(d.arxiv_id, ("", "", "?"))
        if is_version(s.arxiv_id, s.paper_id, target_title, d.arxiv_id, pid, title):
            raise LeakageError(f"{where}: demo {d.arxiv_id} is the target itself or a version of it")
        if not not_after(d.published, d.date_precision, s.published, s.date_precision):
            raise LeakageError(
                f"{where}: demo {d.arxiv_id} ({d.published}, {d.date_precision}) is newer than the target, or not "
                f"known to be older ({s.published}, {s.date_precision})"
            )
        allowed = ("train", "val") if s.split == "test" else ("train",)
        if split not in allowed:
            raise LeakageError(f"{where}: demo {d.arxiv_id} comes from the {split} split (allowed: {allowed})")
    texts = [*s.fields.values()]
    for d in s.demos:
        texts += [*d.fields.values(), d.label]
    for c in s.citations:
        texts += [c.title, c.abstract]
    for t in texts:
        if contains(t, s.label):
            raise LeakageError(f"{where}: the label text appears in the input")
    why = leak_reason(s.label, {f"input {i}": t for i, t in enumerate(texts)})
    if why is not None:
        raise LeakageError(f"{where}: {why} — over the near-copy limits of rounds.leakage.OverlapLimits")


# ---- near-copy leakage: n-gram coverage and longest common run ------------------------------------------------
#
# The exact guard above only sees a label copied whole. A label that is 90% inside the body (an abstract copy
# left in unheaded front matter, an introduction cut in two by a mis-assigned subsection) passes it. These
# measures compare word sequences after normalisation (NFKC, LaTeX accents and escapes decoded, case folded,
# punctuation and whitespace ignored), so `1\r{a}` and `1å`, or `LLaMA- 65B` and `LLaMA-65B`, compare equal.

OVERLAP_N = 12  # n-gram length for coverage: long enough that shared phrasing or boilerplate rarely reaches it
_WORD = re.compile(r"[^\W_]+")
_ESCAPES = re.compile(r"\\([%&$#_{}])")


@functools.lru_cache(maxsize=512)
def match_words(text: str) -> tuple[str, ...]:
    """Normalised word sequence used by every overlap measure."""
    s = unicodedata.normalize("NFKC", text)
    if "\\" in s or "{" in s:
        s = latex_to_unicode(_ESCAPES.sub(r"\1", s))
    return tuple(_WORD.findall(s.casefold()))


_MUL = np.uint64(1_000_003)


@functools.lru_cache(maxsize=256)
def _gram_hashes(words: tuple[str, ...], n: int) -> np.ndarray:
    """64-bit rolling hashes of every word n-gram (vectorised: a body of 20k words costs n array passes)."""
    if len(words) < n:
        return np.zeros(0, dtype=np.uint64)
    ids = np.fromiter((hash(w) for w in words), dtype=np.int64, count=len(words)).view(np.uint64)
    m = len(words) - n + 1
    h = np.zeros(m, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            h = h * _MUL + ids[k : k + m]
    return h


@functools.lru_cache(maxsize=256)
def _sorted_hashes(words: tuple[str, ...], n: int) -> np.ndarray:
    return np.unique(_gram_hashes(words, n))


@dataclass(frozen=True)
class Overlap:
    """How much of a label (in words) is present in one input text."""

    coverage: float  # share of the label's n-grams (n = min(OVERLAP_N, label words)) found in the text
    run: int  # longest stretch of the label covered by shared n-grams, in words (0 when none is shared)
    label_words: int

    @property
    def run_share(self) -> float:
        return self.run / self.label_words if self.label_words else 0.0


def overlap(label: str, text: str) -> Overlap:
    """Coverage and longest common run of `label` inside `text` (both normalised by `match_words`).

    The run is the longest stretch of consecutive label n-grams that all occur in the text, plus n - 1: the
    longest common word sequence whenever the shared n-grams come from one place in the text (what a copied
    passage gives); an upper bound otherwise."""
    lw, tw = match_words(label), match_words(text)
    if not lw or not tw:
        return Overlap(0.0, 0, len(lw))
    n = min(OVERLAP_N, len(lw))
    return overlap_of_hits(_hits(_gram_hashes(lw, n), _sorted_hashes(tw, n)), len(lw))


def _hits(grams: np.ndarray, have: np.ndarray) -> np.ndarray:
    """Which of the label's n-gram hashes `grams` occur in the sorted text hashes `have`."""
    if not len(grams) or not len(have):
        return np.zeros(len(grams), dtype=bool)
    pos = np.searchsorted(have, grams)
    pos[pos >= len(have)] = 0
    return have[pos] == grams


def overlap_of_hits(hit: np.ndarray, label_words: int) -> Overlap:
    """The Overlap a label has given which of its n-grams (n = min(OVERLAP_N, label_words)) were found: one text's
    hits, or the union over several texts (`TextGrams`)."""
    if not label_words or not len(hit):
        return Overlap(0.0, 0, label_words)
    n = min(OVERLAP_N, label_words)
    run = 0
    if hit.any():
        # longest streak of True in `hit`
        edges = np.diff(np.concatenate(([0], hit.astype(np.int8), [0])))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        run = int((ends - starts).max()) + n - 1
    return Overlap(float(hit.mean()), run, label_words)


def label_grams(label: str) -> tuple[int, np.ndarray]:
    """A label's word count and the hashes of its n-grams (n = min(OVERLAP_N, words)), as `overlap` uses them."""
    lw = match_words(label)
    return len(lw), _gram_hashes(lw, min(OVERLAP_N, len(lw))) if lw else np.zeros(0, dtype=np.uint64)


class TextGrams:
    """One text's n-gram hashes, computed once per n, for testing many labels against it (a release's leak check
    tests every withheld label against every released text): `found(label_grams(label)[1], tg.grams(n))` per label,
    then `overlap_of_hits` — the same numbers as `overlap(label, text)`."""

    def __init__(self, text: str) -> None:
        self.words = match_words(text)
        self._by_n: dict[int, np.ndarray] = {}

    def grams(self, n: int) -> np.ndarray:
        """The sorted distinct hashes of the text's word n-grams."""
        if n not in self._by_n:
            self._by_n[n] = np.unique(_gram_hashes(self.words, n)) if n else np.zeros(0, dtype=np.uint64)
        return self._by_n[n]

    def hits(self, grams: tuple[int, np.ndarray]) -> np.ndarray:
        words, hashes = grams
        return found(hashes, self.grams(min(OVERLAP_N, words)))


def found(grams: np.ndarray, have: np.ndarray) -> np.ndarray:
    """Which of the hashes `grams` occur in the sorted hashes `have` (one bool per gram)."""
    return _hits(grams, have)


@dataclass(frozen=True)
class OverlapLimits:
    """A label counts as leaked into an input text when either limit is reached (see notes/rounds.md for how
    the values were chosen from the measured distribution)."""

    max_coverage: float = 0.2  # share of the label's 12-grams that may appear in one input text
    max_run: int = 40  # longest common run of words
    max_run_share: float = 0.5  # ... or this share of a short label (titles: the whole title is the run)

    def leaks(self, o: Overlap) -> bool:
        if o.label_words == 0:
            return False
        if o.label_words < OVERLAP_N:  # titles and other short labels: only a (near) whole copy counts
            return o.run_share >= 0.999 or o.coverage >= 1.0
        return o.coverage > self.max_coverage or o.run >= self.max_run


DEFAULT_LIMITS = OverlapLimits()


def leak_reason(label: str, texts: dict[str, str], limits: OverlapLimits = DEFAULT_LIMITS) -> str | None:
    """The first named input text the label leaks into (as a counted reason), or None."""
    for name, text in texts.items():
        if not text:
            continue
        o = overlap(label, text)
        if limits.leaks(o):
            return f"label near-copied in the input ({name})"
    return None
