"""Which classes of hostile input each command of the CLI is probed with, and where.

`COVERAGE` is checked against the command tree itself (`test_catalogue.py::test_every_command_is_in_the_
catalogue`): a new command without an entry, or an entry for a command that no longer exists, fails. Each class
names the test module that probes it (a module of this suite that must exist); `probes.py` is this catalogue's
own generated matrix.
"""

from __future__ import annotations

from pathlib import Path

import click

from academiceval.cli.main import command

SUITE = Path(__file__).resolve().parents[1]

# the classes of hostile input and interruption
BAD_ROWS = "bad rows"  # rows of the wrong kind / type, damaged bytes, deep nesting, whole-file damage
OCCUPIED = "occupied destination"  # an existing round, the workspace itself, a file, the round being read
DAMAGED_WS = "damaged workspace files"  # records, scores, run.json, manifests, the SQLite file
RESOURCES = "resource failure"  # --home that is a file, disk full, read-only
KILL = "kill -9 and rerun"
CONCURRENT = "concurrent second process"
BAD_NUMBERS = "bad numeric options"
SECRETS = "secrets in arguments"
NETWORK = "hostile server"
NO_INPUT = "reads no input"  # listings built from the registries: what they print is pinned instead

IMPORTS = "test_catalogue.py"  # this catalogue: BAD_ROWS, OCCUPIED, RESOURCES, KILL
NUMBERS = "test_cli_numbers.py"  # walks every command's numeric options itself

COVERAGE: dict[str, dict[str, str]] = {
    "agreement": {BAD_ROWS: IMPORTS, BAD_NUMBERS: NUMBERS},
    "audit": {DAMAGED_WS: "test_exit_codes.py", RESOURCES: IMPORTS},
    "build": {DAMAGED_WS: "test_workspace_db.py", OCCUPIED: "../rounds/test_publisher.py", BAD_NUMBERS: NUMBERS},
    "cloze build": {OCCUPIED: IMPORTS, KILL: IMPORTS, RESOURCES: IMPORTS},
    "cloze import": {BAD_ROWS: IMPORTS, OCCUPIED: IMPORTS, RESOURCES: IMPORTS},
    "collect": {NETWORK: "test_exit_codes.py", BAD_NUMBERS: NUMBERS},
    "compare": {DAMAGED_WS: "test_exit_codes.py"},
    "demo": {RESOURCES: IMPORTS},
    "elaip generate": {RESOURCES: IMPORTS},
    "elaip import": {BAD_ROWS: IMPORTS, OCCUPIED: IMPORTS},
    "elaip run": {BAD_ROWS: IMPORTS, NETWORK: "../runs/test_outage.py"},
    "export": {DAMAGED_WS: "test_exit_codes.py", RESOURCES: IMPORTS},
    "import-publist": {BAD_ROWS: IMPORTS, RESOURCES: "test_import_resources.py", KILL: IMPORTS},
    # the old name of import-publist, one command with it (kept for one release): the same probes reach it
    "import": {BAD_ROWS: "../sources/test_publist_rows.py", RESOURCES: "test_import_resources.py"},
    "ingest": {BAD_ROWS: IMPORTS, DAMAGED_WS: "test_workspace_db.py", BAD_NUMBERS: NUMBERS},
    "judge-length-control": {DAMAGED_WS: "test_exit_codes.py"},
    "judge-predictions": {BAD_ROWS: IMPORTS, SECRETS: "test_secrets.py"},
    "leval import": {BAD_ROWS: IMPORTS, OCCUPIED: IMPORTS, RESOURCES: IMPORTS},
    "leval run": {NETWORK: "../runs/test_outage.py"},
    "lm-eval import": {BAD_ROWS: IMPORTS, RESOURCES: IMPORTS},
    "metrics": {NO_INPUT: "../test_discoverability.py"},
    "mirror harvest": {NETWORK: "../sources/test_oai_bounds.py", BAD_NUMBERS: NUMBERS},
    "mirror index": {BAD_ROWS: IMPORTS, KILL: "../sources/test_disk_kill.py", DAMAGED_WS: "test_workspace_db.py"},
    "mirror serve": {NETWORK: "../sources/test_serve_bounds.py", BAD_NUMBERS: NUMBERS},
    "models": {NO_INPUT: "../test_discoverability.py"},
    "release": {OCCUPIED: IMPORTS, KILL: IMPORTS, RESOURCES: IMPORTS, SECRETS: "test_secrets.py"},
    "report": {DAMAGED_WS: "test_bad_inputs.py", KILL: "test_crash_score_report.py"},
    "run": {
        DAMAGED_WS: "test_bad_inputs.py",
        CONCURRENT: "test_run_lock.py",
        KILL: "test_run_state.py",
        SECRETS: "test_secrets.py",
    },
    "score": {
        DAMAGED_WS: "test_bad_inputs.py",
        KILL: IMPORTS,
        CONCURRENT: "../scores/test_scores_writer.py",
        SECRETS: "test_secrets.py",
    },
    "score-predictions": {BAD_ROWS: IMPORTS},
    "stats": {DAMAGED_WS: "test_bad_inputs.py", RESOURCES: IMPORTS},
    "update": {DAMAGED_WS: "test_exit_codes.py", BAD_NUMBERS: NUMBERS},
}


def cli_commands() -> dict[str, click.Command]:
    """Every leaf command of `academiceval` (sub-apps included), by its words: `mirror index`, `run`, ..."""
    out: dict[str, click.Command] = {}

    def walk(cmd: click.Command, words: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*words, name])
        else:
            out[" ".join(words)] = cmd

    walk(command(), [])
    return out


def pinned_by(module: str) -> Path:
    return (SUITE / module).resolve()
