"""Find the arXiv data under a directory and say which format each file is, by name and a peek at its content.

Formats: `abs` (one `.abs` record), `listing` (mailing listing: `.abs` records concatenated), `kaggle`
(arxiv-metadata-oai-snapshot JSON lines, whatever the extension), `unarxive` (unarXive JSONL), `atom` (saved API
response: raw XML, or a recorded JSON wrapper with a `body`), `scalar` (SCALAR metadata JSON), `scalar_paper` (a
SCALAR paper object with its cited papers' texts), `pdf` (a PDF named by arXiv id). Anything else is skipped and
counted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from academiceval.sources.errors import RecordParseError
from academiceval.sources.ids import id_from_filename
from academiceval.sources.mirror.records import (
    MirrorRecord,
    RecordWarning,
    decode_bytes,
    read_abs_text,
    read_atom,
    read_kaggle_lines,
    read_scalar,
)
from academiceval.sources.mirror.scalar_papers import is_scalar_paper_object, read_scalar_paper_object
from academiceval.sources.mirror.unarxive import read_unarxive_lines

FORMATS = ("abs", "listing", "kaggle", "unarxive", "atom", "scalar", "scalar_paper", "pdf")
Item = MirrorRecord | RecordParseError


@dataclass(frozen=True)
class FoundFile:
    path: Path
    fmt: str  # one of FORMATS, or "skipped"
    arxiv_id: str | None = None  # for PDFs
    version: int | None = None


def _first_json_line(path: Path) -> dict | None:
    with path.open("rb") as f:
        line = f.readline(4_000_000)
    try:
        d = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past Python's limit
        return None
    return d if isinstance(d, dict) else None


def detect(path: Path) -> FoundFile:
    name = path.name.lower()
    try:
        if name.endswith(".pdf"):
            parsed = id_from_filename(path.stem)
            if parsed:
                return FoundFile(path, "pdf", parsed[0], parsed[1])
            return FoundFile(path, "skipped")
        if name.endswith(".abs"):  # arXiv records; LaTeX sources sometimes use .abs for an abstract file too
            with path.open("rb") as f:
                head = f.read(4096)
            return FoundFile(
                path, "abs" if re.search(rb"^(arXiv|Paper|Title|Authors):", head, re.MULTILINE) else "skipped"
            )
        if name.endswith(".xml"):
            with path.open("rb") as f:
                head = f.read(2048)
            return FoundFile(path, "atom" if b"<feed" in head else "skipped")
        if name.endswith(".txt"):
            with path.open("rb") as f:
                head = f.read(4096)
            return FoundFile(path, "listing" if b"\\\\\narXiv:" in head or b"\\\\\r\narXiv:" in head else "skipped")
        if name.endswith((".jsonl", ".json")):
            first = _first_json_line(path)
            if first is not None and "body_text" in first and "metadata" in first:
                return FoundFile(path, "unarxive")
            if first is not None and "versions" in first and "id" in first:
                return FoundFile(path, "kaggle")
            if name.endswith(".json") and path.stat().st_size < 200_000_000:
                data = json.loads(path.read_bytes())
                if isinstance(data, dict) and "<feed" in str(data.get("body", ""))[:2000]:
                    return FoundFile(path, "atom")
                if isinstance(data, list) and any(isinstance(x, dict) and "metadata" in x for x in data[:50]):
                    return FoundFile(path, "scalar")
                if is_scalar_paper_object(data):
                    return FoundFile(path, "scalar_paper")
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON / UTF-8, nested past Python's limit
        return FoundFile(path, "skipped")
    return FoundFile(path, "skipped")


def find_files(root: Path) -> list[FoundFile]:
    """Every file under root with its format, in a stable (sorted) order; hidden directories are skipped.

    Directory links are followed (a mirror is often assembled from links), but each real directory is entered
    once and each real file read once: a link back to a parent, or links that form a loop, would otherwise make
    the walk branch at every level and never end."""
    if root.is_file():  # a single file is a (small) mirror too: `--source listing.txt`
        return [detect(root)]
    out: list[FoundFile] = []
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        st = os.stat(dirpath)
        if (st.st_dev, st.st_ino) in seen_dirs:
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.startswith("."):
                continue
            path = Path(dirpath) / fn
            try:
                fst = path.stat()
            except OSError:  # a dangling link
                out.append(FoundFile(path, "skipped"))
                continue
            if (fst.st_dev, fst.st_ino) in seen_files:
                continue
            seen_files.add((fst.st_dev, fst.st_ino))
            out.append(detect(path))
    return out


def read_file(found: FoundFile) -> Iterator[Item]:
    """The records of one file (errors as items, never raised)."""
    path, where = found.path, str(found.path)
    try:
        if found.fmt in ("abs", "listing"):
            hint = id_from_filename(path.stem)
            repairs: list[RecordWarning] = []
            text = decode_bytes(path.read_bytes(), path=where, warnings=repairs)
            yield from repairs  # bad bytes and NULs are repaired and recorded with file and line, never silent
            yield from read_abs_text(text, path=where, fmt=found.fmt, version_hint=hint[1] if hint else None)
        elif found.fmt in ("kaggle", "unarxive"):
            reader = read_kaggle_lines if found.fmt == "kaggle" else read_unarxive_lines
            with path.open("rb") as f:  # bytes: each line is decoded (and repaired, with a warning) on its own
                yield from reader(iter(f), path=where)
        elif found.fmt == "atom":
            raw = path.read_bytes()
            if path.suffix.lower() == ".json":
                wrapper = json.loads(raw)
                body = str(wrapper.get("body", ""))
                status = wrapper.get("status_code")
                if status not in (None, 200):
                    yield RecordParseError(f"recorded response has HTTP status {status}", source=where)
                raw = body.encode("utf-8")
            yield from read_atom(raw, path=where)
        elif found.fmt == "scalar":
            yield from read_scalar(json.loads(path.read_bytes()), path=where)
        elif found.fmt == "scalar_paper":
            yield from read_scalar_paper_object(json.loads(path.read_bytes()), path=where)
    except (OSError, json.JSONDecodeError) as e:
        yield RecordParseError(f"cannot read file: {e}", source=where)
    except RecursionError:
        yield RecordParseError("cannot read file: nested too deeply to be metadata", source=where)
