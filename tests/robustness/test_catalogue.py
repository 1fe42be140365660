"""The catalogue of hostile inputs and interruptions, run against every surface by construction (issue 26, items
10-11): the commands come from the CLI itself (a new command without an entry in `catalogue/surfaces.py` fails),
and each probe is judged by the same oracle (`catalogue/probes.py`): exit 0, or 1/2 with exactly one `error:`
line naming what is wrong; no traceback; nothing outside the command's own output changed; a damaged row among
valid ones skipped and reported while the valid rows go in; a destination that is or holds what must not be
touched refused with every file intact; kill -9 at random points and a rerun equal to an uninterrupted run.

Fast by sampling, general by rotation: each importer gets its valid input and 3 of the damage classes, rotated
so that every class meets some importer in every run (ACADEMICEVAL_CATALOGUE_FULL=1 runs the whole matrix; the
table of all of it is `scripts/robustness_table.py`). Kill points come from ACADEMICEVAL_CATALOGUE_SEED (26).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from .catalogue import probes, surfaces
from .catalogue.inputs import IMPORTERS, Importer, elaip_rows
from .catalogue.rows import jsonl

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

FULL = os.environ.get("ACADEMICEVAL_CATALOGUE_FULL") == "1"
SEED = int(os.environ.get("ACADEMICEVAL_CATALOGUE_SEED", "26"))
PER_IMPORTER = 3
KILLED = ["import-publist", "cloze build", "release", "score"]


def _sampled(i: int, imp: Importer) -> list[str]:
    if FULL:
        return list(imp.damages)
    n = len(imp.damages)
    return sorted({imp.damages[(i * PER_IMPORTER + j) % n] for j in range(min(PER_IMPORTER, n))})


IMPORT_CASES = [
    pytest.param(imp, damage, id=f"{imp.command}|{imp.form}|{damage or 'valid'}")
    for i, imp in enumerate(IMPORTERS)
    for damage in [None, *_sampled(i, imp)]
]


def test_every_command_is_in_the_catalogue() -> None:
    """Every command of the CLI has catalogue entries, every entry names a command that exists, and every
    module an entry points to exists."""
    commands = set(surfaces.cli_commands())
    assert commands - set(surfaces.COVERAGE) == set(), "commands without catalogue entries"
    assert set(surfaces.COVERAGE) - commands == set(), "catalogue entries for commands that no longer exist"
    missing = {
        m for classes in surfaces.COVERAGE.values() for m in classes.values() if not surfaces.pinned_by(m).is_file()
    }
    assert missing == set()
    # what this module probes is exactly what the catalogue says it probes
    here = {
        surfaces.BAD_ROWS: {imp.command for imp in IMPORTERS},
        surfaces.OCCUPIED: {surface for surface, _ in probes.destinations(Path("/c"), Path("/h"), Path("/r")).values()},
        surfaces.RESOURCES: set(probes.home_file_argv(Path("/c"), Path("/t"))),
        surfaces.KILL: set(KILLED),
    }
    for cls, commands in here.items():
        claimed = {c for c, classes in surfaces.COVERAGE.items() if classes.get(cls) == surfaces.IMPORTS}
        assert claimed == commands, (cls, claimed ^ commands)


@pytest.mark.parametrize(("imp", "damage"), IMPORT_CASES)
def test_importers_take_bad_rows_as_one_line_and_go_on(
    imp: Importer, damage: str | None, corpus: Path, tmp_path: Path
) -> None:
    """The valid input imports (real files of the corpus: SCALAR's own published questions did not, before);
    with one damage planted, the shared oracle holds and a bad row does not stop the valid ones."""
    got = probes.probe_importer(imp, damage, tmp_path / "case", corpus)
    if damage is None:
        assert got.outcome == "handled" and got.detail.startswith(f"exit {imp.valid_exit}"), got.detail
    got = probes.rest_goes_on(imp, damage or "", imp.valid_exit, got)
    assert got.outcome == "handled", got.detail


@pytest.fixture(scope="module")
def dest_master(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("dest")
    home = probes.destination_home(corpus, root / "parent" / "ws")
    rows = root / "elabench.jsonl"
    rows.write_bytes(jsonl(elaip_rows(corpus)))
    return home, rows


DEST_CASES = list(probes.destinations(Path("/corpus"), Path("/parent/ws"), Path("/rows")))


@pytest.mark.parametrize("case", DEST_CASES)
def test_occupied_destinations_are_refused_and_nothing_is_touched(
    case: str, dest_master: tuple[Path, Path], corpus: Path, tmp_path: Path
) -> None:
    home0, rows = dest_master
    home = tmp_path / "parent" / "ws"
    shutil.copytree(home0, home)
    (tmp_path / "parent" / "sibling.txt").write_text("beside the workspace\n")
    surface, argv = probes.destinations(corpus, home, rows)[case]
    got = probes.probe_destination(case, surface, argv, home)
    assert got.outcome == "handled", got.detail


@pytest.mark.parametrize("surface", list(probes.home_file_argv(Path("/corpus"), Path("/tmp"))))
def test_a_workspace_path_that_is_a_file_is_one_line(surface: str, corpus: Path, tmp_path: Path) -> None:
    argv = probes.home_file_argv(corpus, tmp_path)[surface]
    got = probes.probe_home_is_a_file(surface, argv, tmp_path)
    assert got.outcome == "handled", got.detail


@pytest.fixture(scope="module")
def kill_masters(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, probes.KillSurface]:
    root = tmp_path_factory.mktemp("kill-masters")
    return {ks.surface: ks for ks in probes.kill_surfaces(corpus, root, entries=150)}


@pytest.mark.parametrize("surface", KILLED)
def test_killed_at_random_points_a_rerun_equals_an_uninterrupted_run(
    surface: str, kill_masters: dict[str, probes.KillSurface], tmp_path: Path
) -> None:
    ks = kill_masters[surface]
    reference, duration = probes.uninterrupted(ks, tmp_path)
    rng = random.Random(f"{SEED}-{surface}")
    got = probes.kill_trial(ks, tmp_path, reference, duration, rng, kills=2)
    assert got.outcome == "handled", got.detail
