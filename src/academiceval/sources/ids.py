"""arXiv identifiers: recognise, split off the version, and turn into safe file names.

Two schemes exist: new-style `YYMM.NNNN[N]` (since 2007) and old-style `archive[.SUBJ]/YYMMNNN` (before). The
old-style slash is why ids are never used as paths directly: `pdf_filename` replaces it and refuses anything that
is not an id, so a hostile or garbled id can never leave the destination directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from academiceval.sources.errors import InvalidArxivIdError, UnsafePathError
from academiceval.store.artifacts import ArtifactError, check_name

_NEW = r"\d{4}\.\d{4,5}"
_OLD = r"[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}"
ARXIV_ID_RE = re.compile(rf"(?P<id>{_NEW}|{_OLD})(?:v(?P<version>\d+))?")
_FULL_RE = re.compile(rf"^(?P<id>{_NEW}|{_OLD})(?:v(?P<version>\d+))?$")
_PREFIX_RE = re.compile(r"^(?:https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/|arxiv:)", re.IGNORECASE)


def parse_arxiv_id(raw: str) -> tuple[str, int | None]:
    """`"http://arxiv.org/abs/hep-th/9901001v2"` → `("hep-th/9901001", 2)`; raises InvalidArxivIdError."""
    s = _PREFIX_RE.sub("", raw.strip())
    s = s.removesuffix(".pdf")
    m = _FULL_RE.match(s)
    if not m:
        raise InvalidArxivIdError(
            f"not an arXiv id: {raw[:80]!r}", hint="use 2301.01234, 2301.01234v2 or old-style hep-th/9901001"
        )
    v = m.group("version")
    return m.group("id"), int(v) if v else None


def versionless(raw: str) -> str:
    return parse_arxiv_id(raw)[0]


def id_from_filename(stem: str) -> tuple[str, int | None] | None:
    """Recognise files named by id: `2203.00130v1`, `hep-th_9901001v2` (slash replaced), else None."""
    m = _FULL_RE.match(stem)
    if m is None and "_" in stem:
        m = _FULL_RE.match(stem.replace("_", "/", 1))
    if m is None:
        return None
    v = m.group("version")
    return m.group("id"), int(v) if v else None


def pdf_filename(arxiv_id: str) -> str:
    """The file name of a paper's PDF: versionless id, `/` replaced by `_` (`hep-th_9901001.pdf`)."""
    base, _ = parse_arxiv_id(arxiv_id)
    return base.replace("/", "_") + ".pdf"


def safe_child(dest_dir: Path, name: str) -> Path:
    """dest_dir/name: the name must pass the workspace's one name validator (`store.artifacts.check_name`), and
    the result must not resolve outside dest_dir (a symlink)."""
    try:
        check_name(name, "file name")
    except ArtifactError as e:
        raise UnsafePathError(e.message, hint="ids must not contain path parts") from None
    root = dest_dir.resolve()
    target = (root / name).resolve()
    if target.parent != root:
        raise UnsafePathError(f"refusing to write {name!r} outside {root}", hint="ids must not contain path parts")
    return target
