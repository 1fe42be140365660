"""nltk's PorterStemmer (NLTK_EXTENSIONS mode, the one rouge-score builds), restated for speed.

Why: rouge-score stems with `nltk.stem.porter.PorterStemmer()`. That implementation is pure Python built from
rule tuples, lambdas and per-character method calls (~40 µs a word), so on a first pass over short texts the
stemmer is most of FastRouge's time. This module applies the *same rules in the same order* with the same
first-matching-suffix-decides semantics, but dispatches each step's suffix list on the word's last two letters
and computes Porter's measure from one `str.translate` (vowel/consonant string) instead of per-letter calls.

Scope: words that are already lowercase (rouge-score's tokens are runs of [a-z0-9]; nltk lowercases first,
which is the identity on those). Identity with nltk is tested on every distinct word of the real parity pairs,
on the bert-base-uncased vocabulary and on random / exhaustive short strings over the letters the rules look
at (tests/scores/test_rouge.py); `stem` falls back to nltk for anything that is not lowercase ASCII.

Rule sources: nltk/stem/porter.py (nltk 3.x), `_step1a` … `_step5b`, `_measure`, `_ends_cvc`,
`_ends_double_consonant`, the irregular-forms pool.
"""

from __future__ import annotations

from functools import lru_cache

# nltk's NLTK_EXTENSIONS irregular forms: word -> stem
_POOL = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}
_VOWELS = frozenset("aeiou")
# every character -> "c", vowels -> "v", "y" kept for the context rule (a y after a consonant is a vowel)
_CV = str.maketrans({**{chr(i): "c" for i in range(128)}, **dict.fromkeys("aeiou", "v"), "y": "y"})


def _cv(word: str) -> str:
    """Consonant/vowel string of `word` (nltk `_consonant_flags`: y is a consonant at the start or after a vowel)."""
    s = word.translate(_CV)
    if "y" not in s:
        return s
    out = []
    prev = "v"  # so a leading y is a consonant
    for ch in s:
        if ch == "y":
            ch = "c" if prev == "v" else "v"
        out.append(ch)
        prev = ch
    return "".join(out)


def _m(stem: str) -> int:
    """nltk `_measure`: the number of VC pairs."""
    return _cv(stem).count("vc")


def _is_cons_last(word: str) -> bool:
    """nltk `_is_consonant(word, len(word) - 1)`."""
    return _cv(word)[-1] == "c"


def _ends_cvc(word: str) -> bool:
    """nltk `_ends_cvc` in NLTK_EXTENSIONS mode (condition *o, plus the two-letter vowel-consonant case)."""
    n = len(word)
    if n >= 3:
        cv = _cv(word)
        return cv[-3:] == "cvc" and word[-1] not in "wxy"
    if n == 2:
        return _cv(word) == "vc"
    return False


def _ends_double_cons(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_cons_last(word)


def _table(rules: list[tuple[str, str]]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Group (suffix, replacement) rules by the suffix's last two letters, keeping their order (every suffix
    here has ≥2 letters, so only rules of the same group can match a word: first match within it decides)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for suf, rep in rules:
        out.setdefault(suf[-2:], []).append((suf, rep))
    return {k: tuple(v) for k, v in out.items()}


# nltk `_step2` rule list in NLTK_EXTENSIONS mode ("bli" instead of "abli"; "fulli" and "logi" appended)
_STEP2 = _table(
    [
        ("ational", "ate"),
        ("tional", "tion"),
        ("enci", "ence"),
        ("anci", "ance"),
        ("izer", "ize"),
        ("bli", "ble"),
        ("alli", "al"),
        ("entli", "ent"),
        ("eli", "e"),
        ("ousli", "ous"),
        ("ization", "ize"),
        ("ation", "ate"),
        ("ator", "ate"),
        ("alism", "al"),
        ("iveness", "ive"),
        ("fulness", "ful"),
        ("ousness", "ous"),
        ("aliti", "al"),
        ("iviti", "ive"),
        ("biliti", "ble"),
        ("fulli", "ful"),
        ("logi", "log"),
    ]
)
_STEP3 = _table(
    [
        ("icate", "ic"),
        ("ative", ""),
        ("alize", "al"),
        ("iciti", "ic"),
        ("ical", "ic"),
        ("ful", ""),
        ("ness", ""),
    ]
)
_STEP4 = _table(
    [
        (s, "")
        for s in (
            "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()  # noqa: SIM905
        )
    ]
)


def _step1a(w: str) -> str:
    if w[-1:] != "s":  # every step-1a suffix ends in "s"
        return w
    if w.endswith("ies") and len(w) == 4:
        return w[:-3] + "ie"
    if w.endswith("sses") or w.endswith("ies"):
        return w[:-2]
    if w.endswith("ss"):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w[-1:] not in ("d", "g"):  # -ied, -eed, -ed, -ing
        return w
    if w.endswith("ied"):
        return w[:-3] + ("ie" if len(w) == 4 else "i")
    if w.endswith("eed"):
        stem = w[:-3]
        return stem + "ee" if _m(stem) > 0 else w
    if w.endswith("ed"):
        s = w[:-2]
    elif w.endswith("ing"):
        s = w[:-3]
    else:
        return w
    if "v" not in _cv(s):  # nltk `_contains_vowel`
        return w
    if s.endswith("at") or s.endswith("bl") or s.endswith("iz"):
        return s + "e"
    if _ends_double_cons(s):
        return s[:-1] if s[-1] not in "lsz" else s
    if _m(s) == 1 and _ends_cvc(s):
        return s + "e"
    return s


def _step1c(w: str) -> str:
    if w.endswith("y"):
        stem = w[:-1]
        if len(stem) > 1 and _is_cons_last(stem):
            return stem + "i"
    return w


def _step2(w: str) -> str:
    if w.endswith("alli") and _m(w[:-4]) > 0:
        return _step2(w[:-4] + "al")
    for suf, rep in _STEP2.get(w[-2:], ()):
        if w.endswith(suf):
            stem = w[: -len(suf)]
            # "logi" tests the measure of the stem plus its "l" (nltk: `word[:-3]`)
            ok = _m(w[:-3]) > 0 if suf == "logi" else _m(stem) > 0
            return stem + rep if ok else w
    return w


def _step3(w: str) -> str:
    for suf, rep in _STEP3.get(w[-2:], ()):
        if w.endswith(suf):
            stem = w[: -len(suf)]
            return stem + rep if _m(stem) > 0 else w
    return w


def _step4(w: str) -> str:
    for suf, _ in _STEP4.get(w[-2:], ()):
        if w.endswith(suf):
            stem = w[: -len(suf)]
            ok = _m(stem) > 1 and (suf != "ion" or stem[-1] in "st")
            return stem if ok else w
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _m(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            w = stem
    if w.endswith("ll") and _m(w[:-1]) > 1:  # step 5b
        return w[:-1]
    return w


def _ascii_lower(word: str) -> bool:
    return word.isascii() and word == word.lower()


@lru_cache(maxsize=1)
def _nltk():  # type: ignore[no-untyped-def]
    from nltk.stem import porter

    return porter.PorterStemmer()


def stem(word: str) -> str:
    """`nltk.stem.porter.PorterStemmer().stem(word)` (default mode), fast for lowercase ASCII words."""
    if not _ascii_lower(word):
        return _nltk().stem(word)
    return stem_lower(word)


def stem_lower(word: str) -> str:
    """`stem` for a word known to be lowercase ASCII (rouge-score's tokens), without re-checking it."""
    pooled = _POOL.get(word)
    if pooled is not None:
        return pooled
    if len(word) <= 2:
        return word
    return _step5(_step4(_step3(_step2(_step1c(_step1b(_step1a(word)))))))
