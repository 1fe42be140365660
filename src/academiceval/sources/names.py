"""Author names: a display form, a matching key, author-list splitting, and a conservative resolver.

The co-author graph is keyed by `author_key(name)`. The key has to survive the ways one person's name is written
across arXiv's formats (LaTeX escapes such as `Paczy\\'nski` or `{\\"o}` in `.abs` records, UTF-8 decoded as Latin-1
in some Atom feeds, "Last, First", hyphens, stray whitespace), yet must not merge different people: "J. Doe" and
"Jane Doe" get different keys. `NameResolver` merges an initial form into a full form only on evidence (see its
docstring). The original string is kept for display (`Author.name`, LaTeX decoded).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from academiceval.store.paper_models import Author, PaperMeta

# ---- LaTeX → Unicode --------------------------------------------------------------------------------------------
_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "b": "\u0331",
    "d": "\u0323",
}
_SPECIAL = {
    "ss": "ß",
    "aa": "å",
    "AA": "Å",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "o": "ø",
    "O": "Ø",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
    "dh": "ð",
    "DH": "Ð",
    "th": "þ",
    "TH": "Þ",
}
# \'e  \'{e}  {\'e}  \"{\i}  \c{c}  \c c  \v{S}
_SYMBOL_ACCENT = re.compile(r"""\\(['`^"~=.])\s*(?:\{\s*(\\[ij]|[A-Za-z])\s*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))""")
_LETTER_ACCENT = re.compile(r"\\([uvHckrbd])(?:\s*\{\s*(\\[ij]|[A-Za-z])\s*\}|\s+([A-Za-z]))")
_SPECIAL_RE = re.compile(r"\\(ss|aa|AA|ae|AE|oe|OE|dh|DH|th|TH|o|O|l|L|i|j)(?![A-Za-z])(?:\{\})?\s?")
_OTHER_CMD = re.compile(r"\\(?:em|it|bf|rm|sc|textrm|textit|textbf|emph|mbox|relax)\b\s*")
_MOJIBAKE = re.compile(r"[ÃÂÅÄÐÑØ][\x80-\xbf]|â€")


def _accent(mark: str, base: str) -> str:
    base = base[1:] if base.startswith("\\") else base  # \\"{\\i} is ï, not a dotless i with diaeresis
    return unicodedata.normalize("NFC", base + _ACCENTS[mark])


def latex_to_unicode(text: str) -> str:
    """Decode the accent and special-letter escapes arXiv records use in names and titles."""
    if "\\" not in text and "{" not in text:
        return text
    s = _SYMBOL_ACCENT.sub(lambda m: _accent(m.group(1), m.group(2) or m.group(3)), text)
    s = _LETTER_ACCENT.sub(lambda m: _accent(m.group(1), m.group(2) or m.group(3)), s)
    s = _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(1)], s)
    s = _OTHER_CMD.sub("", s)
    s = s.replace("~", " ").replace("\\&", "&").replace("\\ ", " ")
    return s.replace("{", "").replace("}", "")


def fix_mojibake(text: str) -> str:
    """Undo UTF-8 read as Latin-1 ("WÃ¼bben" → "Wübben", seen in real arXiv Atom); unchanged when unsure."""
    if text.isascii() or not _MOJIBAKE.search(text):
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        try:
            return text.encode("cp1252").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return text


def display_name(name: str) -> str:
    """The name as written, readable: LaTeX decoded, mojibake fixed, whitespace collapsed, NFC."""
    s = fix_mojibake(latex_to_unicode(name))
    return unicodedata.normalize("NFC", " ".join(s.split()))


# ---- matching key -----------------------------------------------------------------------------------------------
_FOLD = str.maketrans(
    {"ß": "ss", "ø": "o", "Ø": "o", "ł": "l", "Ł": "l", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "đ": "d"}
    | {"Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th", "ı": "i", "ȷ": "j", "ħ": "h"}
)
_SUFFIXES = {"jr", "sr", "ii", "iii", "iv", "jnr", "snr"}
_NON_WORD = re.compile(r"[^\w\s]|_")


def _fold(text: str) -> str:
    if text.isascii():
        return text.casefold()
    s = unicodedata.normalize("NFKC", text).translate(_FOLD)
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).casefold()


def _flip_comma(name: str) -> str:
    """ "Doe, Jane" → "Jane Doe"; "Doe, Jr., John" → "John Doe Jr"; "John Smith, Jr." stays."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) < 2 or not all(parts):
        return name
    tail = [p for p in parts[1:] if p.strip(".").lower() not in _SUFFIXES]
    sufs = [p for p in parts[1:] if p.strip(".").lower() in _SUFFIXES]
    if not tail:  # "John Smith, Jr."
        return " ".join([parts[0], *sufs])
    if len(tail) > 1:  # not a "Last, First" form: leave it alone
        return name
    return " ".join([tail[0], parts[0], *sufs])


def key_tokens(name: str) -> list[str]:
    return list(_key_tokens(name))


_INNER_APOSTROPHE = re.compile(r"(?<=\w)['’`](?=\w)")


@lru_cache(maxsize=200_000)
def _key_tokens(name: str) -> tuple[str, ...]:
    s = _fold(display_name(name))
    s = _flip_comma(s)
    s = s.replace("-", " ").replace("‐", " ").replace(".", " ")
    # An apostrophe inside a word is dropped, not split on: real listings write "Soszy'nski" (a LaTeX accent
    # that lost its backslash) beside "Soszy\\'nski"; both, like "O'Brien", must give one key.
    s = _INNER_APOSTROPHE.sub("", s)
    s = _NON_WORD.sub(" ", s)
    return tuple(s.split())


def author_key(name: str) -> str:
    """The matching key: "Bohdan Paczy\\'nski" and "Paczyński, Bohdan" → "bohdan paczynski".

    Folds case, accents, LaTeX escapes, hyphens ("Wagner-Kaiser" = "Wagner Kaiser"), dots after initials
    ("C.J. Horowitz" = "C. J. Horowitz") and "Last, First". Initials are kept as initials: "J. Doe" → "j doe",
    which differs from "jane doe" on purpose.
    """
    return " ".join(_key_tokens(name))


def make_author(name: str, affiliations: Iterable[str] = ()) -> Author:
    shown, key = _shown_and_key(name)
    return Author(name=shown, key=key, affiliations=[display_name(a) for a in affiliations if a])


@lru_cache(maxsize=65_536)
def _shown_and_key(name: str) -> tuple[str, str]:
    """(display form, key) of a name as written. Cached: building an index of millions of records meets the same
    author strings again and again (a prolific author's name, as each of their papers spells it), and the
    display form and key were ~60% of the time `make_author` took (benchmarks/mirror_scale.py, notes/scale.md)."""
    shown = display_name(name)
    return shown, author_key(shown)


@lru_cache(maxsize=65_536)  # the index posts every author of millions of records under its surname
def surname_of(key: str) -> str:
    toks = [t for t in key.split() if t not in _SUFFIXES]
    return toks[-1] if toks else key


def is_initial_form(key: str) -> bool:
    toks = [t for t in key.split() if t not in _SUFFIXES]
    return len(toks) >= 2 and all(len(t) == 1 for t in toks[:-1])


def initials_compatible(short: str, full: str) -> bool:
    """Same surname and the same initials, one given-name token each: "j m doe" ~ "jane mary doe"."""
    s = [t for t in short.split() if t not in _SUFFIXES]
    f = [t for t in full.split() if t not in _SUFFIXES]
    if len(s) != len(f) or len(s) < 2 or s[-1] != f[-1] or s == f:
        return False
    return all(a == b or (len(a) == 1 and b.startswith(a)) for a, b in zip(s[:-1], f[:-1], strict=True))


# ---- author lists -----------------------------------------------------------------------------------------------
_AND = re.compile(r",?\s+and\s+|\s*&\s*", re.IGNORECASE)
_ET_AL = re.compile(r"\bet\s*al\.?$", re.IGNORECASE)
_NUMBERED_AFFIL = re.compile(r"\(\s*(\d+)\s*\)\s*([^()]*(?:\([^()]*\)[^()]*)*?)(?=,?\s*\(\s*\d+\s*\)|$)")
_COLLAB = re.compile(r"^[^,()]*\b(?:collaboration|consortium|team|group)\b[^,()]*:\s*", re.IGNORECASE)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _trailing_parens(text: str) -> tuple[str, list[str]]:
    """ "Jane Doe (MIT) (CERN)" → ("Jane Doe", ["MIT", "CERN"])."""
    groups: list[str] = []
    s = text.rstrip()
    while s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            if s[i] == ")":
                depth += 1
            elif s[i] == "(":
                depth -= 1
                if depth == 0:
                    groups.insert(0, s[i + 1 : -1].strip())
                    s = s[:i].rstrip()
                    break
        else:
            break
    return s, groups


def _last_group(text: str) -> tuple[str, str] | None:
    """ "A (1), B (2) ((1) X, (2) Y)" → ("A (1), B (2)", "(1) X, (2) Y"); None without a trailing group."""
    s = text.rstrip()
    if not s.endswith(")"):
        return None
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(s[i], 0)
        if depth == 0:
            return s[:i].rstrip(), s[i + 1 : -1].strip()
    return None


def split_authors(text: str) -> list[tuple[str, list[str]]]:
    """Split an arXiv `Authors:` string into (name, affiliations), the way arXiv's own records write it.

    Handles "A, B, and C", "A and B", affiliations in parentheses after a name, and numbered affiliations
    resolved from a trailing "((1) Univ X, (2) Univ Y)" block. A leading "X Collaboration:" is dropped (it is not a
    person); "et al." is dropped.
    """
    s = " ".join(latex_to_unicode(text).split())
    s = _COLLAB.sub("", s)
    numbered: dict[str, str] = {}
    last = _last_group(s)
    if last is not None and re.match(r"\(\s*\d+\s*\)", last[1]):
        for m in _NUMBERED_AFFIL.finditer(last[1]):
            numbered[m.group(1)] = m.group(2).strip().rstrip(",").strip()
        s = last[0]
    if "(" not in s and ")" not in s:  # most lists: no affiliations, nothing to walk character by character
        return _split_plain(s)
    return _split_with_parens(s, numbered)


def _split_with_parens(s: str, numbered: dict[str, str]) -> list[tuple[str, list[str]]]:
    """The names of `s` and the affiliations in parentheses after each (numbers resolved through `numbered`)."""
    pieces: list[str] = []
    for chunk in _split_top(s, ","):
        for part in _AND.split(chunk) if "(" not in chunk else _split_and_outside(chunk):
            if part.strip():
                pieces.append(part.strip())
    out: list[tuple[str, list[str]]] = []
    for p in pieces:
        name, affs = _trailing_parens(re.sub(r"\)\s*[.;]+$", ")", p))
        resolved: list[str] = []
        for a in affs:
            nums = re.findall(r"\d+", a)
            if numbered and nums and re.fullmatch(r"[\d\s,and&]+", a):
                resolved.extend(numbered.get(n, n) for n in nums)
            else:
                resolved.append(a)
        name = _ET_AL.sub("", name).strip(" ,;")
        if name:
            out.append((name, resolved))
    return out


def _split_plain(s: str) -> list[tuple[str, list[str]]]:
    """`split_authors` of a list without parentheses (no affiliations): what the general path gives for it —
    commas and "and"s split, "et al." dropped — with `str.split` instead of a walk over each character (the walk
    was ~40% of parsing a Kaggle line; `tests/sources/test_names.py` checks both paths agree)."""
    out: list[tuple[str, list[str]]] = []
    for chunk in s.split(","):
        for part in _AND.split(chunk):
            p = part.strip()
            if p:
                name = _ET_AL.sub("", p).strip(" ,;")
                if name:
                    out.append((name, []))
    return out


def _split_and_outside(chunk: str) -> list[str]:
    parts, depth, i, start = [], 0, 0, 0
    low = chunk.lower()
    while i < len(chunk):
        ch = chunk[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and low.startswith(" and ", i):
            parts.append(chunk[start:i])
            i += 5
            start = i
            continue
        i += 1
    parts.append(chunk[start:])
    return parts


def parse_authors(text: str) -> list[Author]:
    return [make_author(n, a) for n, a in split_authors(text)]


def author_fields(text: str) -> list[dict[str, Any]]:
    """`parse_authors` as the `Author` fields, for a record model to validate in one call: a reader that passes
    these to `PaperMeta(authors=...)` builds the same `Author`s ~1 µs faster each than `make_author` (one pydantic
    call for the record instead of one per author; the mirror index parses ~7 authors a record, millions of
    records)."""
    out: list[dict[str, Any]] = []
    for name, affs in split_authors(text):
        shown, key = _shown_and_key(name)
        out.append({"name": shown, "key": key, "affiliations": [display_name(a) for a in affs if a]})
    return out


# ---- resolver ---------------------------------------------------------------------------------------------------
class NameResolver:
    """Merges an initial-form key into a full-form key only on evidence, never by similarity alone.

    Rule: "j doe" is merged into "jane doe" when some paper (same versionless arXiv id) is listed, by two records
    (e.g. the Atom API and an `.abs` listing), with "J. Doe" at the same author position where the other has
    "Jane Doe" — the two strings then provably name one person. The merge is refused when the evidence points
    to more than one full form ("j doe" seen as both "jane doe" and "john doe"), so ambiguous initials stay
    separate. Keys without such evidence are returned unchanged.
    """

    def __init__(self) -> None:
        self._lists: dict[str, list[list[str]]] = defaultdict(list)
        self._candidates: dict[str, set[str]] = defaultdict(set)

    def observe(self, paper_id: str, authors: Sequence[Author | str]) -> None:
        keys = [a.key or author_key(a.name) if isinstance(a, Author) else author_key(a) for a in authors]
        for other in self._lists[paper_id]:
            if len(other) != len(keys):
                continue
            for a, b in zip(other, keys, strict=True):
                if initials_compatible(a, b):
                    self._candidates[a].add(b)
                elif initials_compatible(b, a):
                    self._candidates[b].add(a)
        self._lists[paper_id].append(keys)

    def merges(self) -> dict[str, str]:
        """initial form → full form, only where exactly one full form is supported by evidence."""
        return {k: next(iter(v)) for k, v in self._candidates.items() if len(v) == 1}

    def resolve(self, key: str) -> str:
        full = self._candidates.get(key)
        return next(iter(full)) if full and len(full) == 1 else key

    def apply(self, meta: PaperMeta) -> PaperMeta:
        """A copy of meta with author keys resolved (display names untouched)."""
        authors = [a.model_copy(update={"key": self.resolve(a.key or author_key(a.name))}) for a in meta.authors]
        return meta.model_copy(update={"authors": authors})
