"""One way to publish a round or a release directory, with one overwrite policy (issue 22, issues 26.1/26.2/28.4).

Every command that writes a round (`build`, `cloze build|import`, `leval import`, `elaip import`) or a release
(`release`) writes through `publishing(final, …)`:

1. **Refuse before anything is touched** (`check_destination`): a destination that is, contains or lies inside the
   workspace root, one of the command's inputs, or the round being read. Inside the workspace, a round's only place
   is `rounds/NAME`. An existing destination is refused unless `force`; with `force` it is replaced only when it is
   ours — an academiceval round or release whose every file its manifest lists — so nothing we did not create is
   ever deleted (an existing *empty* directory is simply used).
2. **Stage** everything in a temporary sibling (`.NAME.publishing-PID-…`), which the caller fills.
3. **Check** the result: a round or release without a manifest or without any sample is an error with a hint,
   and leaves nothing behind.
4. **fsync** every file and directory, then **rename** into place: a new name is one atomic rename; a replacement
   moves the old directory aside, renames the new one in, and only then deletes the old one (a kill between the two
   renames is repaired by the next publish of the name, which puts the old round back first).

A failure at any step removes the staging directory; the destination is as it was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from academiceval.store.artifacts import CHECKSUMS, MANIFEST, ROUNDS, ArtifactError
from academiceval.store.models import RoundManifest

STAGING = "publishing"  # .NAME.publishing-PID-…: the directory being filled
ASIDE = "replaced"  # .NAME.replaced-…: the directory being replaced, between the two renames


class EmptyOutputError(ArtifactError):
    """A round or release would hold no sample: nothing is published."""

    code = "empty_output"


def _within(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_destination(
    final: str | Path,
    *,
    force: bool = False,
    home: str | Path | None = None,
    protect: Iterable[str | Path] = (),
    what: str = "round",
) -> Path:
    """The resolved destination, or an ArtifactError saying why it may not be written (nothing is touched)."""
    dest = Path(final).resolve()
    guarded = [Path(p).resolve() for p in protect]
    root = Path(home).resolve() if home is not None else None
    for p in guarded:
        if _within(p, dest):
            raise ArtifactError(
                f"{what} destination {dest} is or contains {p}, which this command reads",
                hint="write it somewhere else",
            )
        if _within(dest, p):
            raise ArtifactError(
                f"{what} destination {dest} lies inside {p}, which this command reads", hint="write it somewhere else"
            )
    if root is not None:
        if _within(root, dest):
            raise ArtifactError(
                f"{what} destination {dest} is or contains the workspace {root}",
                hint=f"choose a new directory outside it, or a name under {root / ROUNDS}",
            )
        if _within(dest, root) and dest.parent != root / ROUNDS:
            raise ArtifactError(
                f"{what} destination {dest} lies inside the workspace {root} but not under {root / ROUNDS}",
                hint=f"choose a directory outside the workspace, or a name under {root / ROUNDS}",
            )
    if dest.exists() and not dest.is_dir():
        raise ArtifactError(f"{what} destination {dest} is a file", hint="choose a directory")
    if dest.is_dir() and any(dest.iterdir()):
        if not force:
            raise ArtifactError(
                f"{what} destination {dest} already holds files", hint="choose another name, or pass --force"
            )
        stray = _not_ours(dest)
        if stray:
            raise ArtifactError(
                f"{dest} holds files academiceval did not write (e.g. {stray}); --force replaces only a round or "
                "release whose manifest lists every file",
                hint="move those files away, or choose another destination",
            )
    return dest


def _not_ours(d: Path) -> str | None:
    """The first file of `d` that its manifest does not list (or a reason the manifest cannot be read); None when
    every file is one academiceval wrote."""
    try:
        manifest = RoundManifest.model_validate_json((d / MANIFEST).read_bytes())
    except (OSError, ValidationError):
        return f"{MANIFEST} missing or not a round manifest"
    owned = {*manifest.files, MANIFEST, CHECKSUMS}
    for p in sorted(d.rglob("*")):
        if (p.is_file() or p.is_symlink()) and p.relative_to(d).as_posix() not in owned:
            return p.relative_to(d).as_posix()
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _repair(dest: Path) -> None:
    """Undo what a killed publish of `dest` left: stale staging directories go; a round moved aside whose
    replacement never arrived goes back."""
    for p in dest.parent.glob(f".{dest.name}.{STAGING}-*"):
        pid = p.name.rsplit(f".{STAGING}-", 1)[-1].split("-", 1)[0]
        if not (pid.isdigit() and _pid_alive(int(pid)) and int(pid) != os.getpid()):
            shutil.rmtree(p, ignore_errors=True)
    asides = sorted(dest.parent.glob(f".{dest.name}.{ASIDE}-*"))
    if asides and not dest.exists():
        asides.pop().rename(dest)
    for p in asides:
        shutil.rmtree(p, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    dirs = [root]
    for p in root.rglob("*"):
        if p.is_dir():
            dirs.append(p)
        elif p.is_file():
            with p.open("rb") as f:
                os.fsync(f.fileno())
    for d in [*dirs, root.parent]:
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _check_output(staging: Path, what: str, hint: str) -> None:
    try:
        manifest = RoundManifest.model_validate_json((staging / MANIFEST).read_bytes())
    except (OSError, ValidationError) as exc:
        raise ArtifactError(f"the {what} was not completed: no valid {MANIFEST} ({type(exc).__name__})") from None
    if not any(sum(c.values()) for c in manifest.counts.values()):
        reasons = sorted(((n, f"{r}") for c in manifest.skipped.values() for r, n in c.items()), reverse=True)
        why = "; ".join(f"{r} ×{n}" for n, r in reasons[:3])
        raise EmptyOutputError(
            f"{what} {manifest.round} would hold no sample: nothing was written"
            + (f" (skipped: {why})" if why else ""),
            hint=hint,
        )


@contextmanager
def publishing(
    final: str | Path,
    *,
    force: bool = False,
    home: str | Path | None = None,
    protect: Iterable[str | Path] = (),
    what: str = "round",
    empty_hint: str = "check the inputs: nothing in them could be used",
) -> Iterator[Path]:
    """Yield a staging directory to fill; on a normal exit publish it as `final` (see the module docstring)."""
    protect = list(protect)
    dest = check_destination(final, force=force, home=home, protect=protect, what=what)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _repair(dest)
    check_destination(dest, force=force, home=home, protect=protect, what=what)  # a round the repair put back
    staging = dest.parent / f".{dest.name}.{STAGING}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        yield staging
        _check_output(staging, what, empty_hint)
        check_destination(dest, force=force, home=home, protect=protect, what=what)  # nothing appeared meanwhile
        _fsync_tree(staging)
        _swap(staging, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap(staging: Path, dest: Path) -> None:
    if not dest.exists() or not any(dest.iterdir()):
        staging.rename(dest)  # atomic; an empty directory the user made for it is replaced as well
        return
    aside = dest.parent / f".{dest.name}.{ASIDE}-{uuid.uuid4().hex[:8]}"
    dest.rename(aside)
    try:
        staging.rename(dest)
    except OSError:
        aside.rename(dest)
        raise
    shutil.rmtree(aside, ignore_errors=True)
