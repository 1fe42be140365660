"""The catalogue's probes: each runs one command the way a user does with one hostile input or interruption and
judges the outcome by construction — the same oracle for every surface, never a case-by-case expectation.

Outcomes: `handled` (the rule held), `crash` (traceback, an exception out of the entry point, a bad exit status,
not exactly one `error:` line), `unclear` (the error does not name the input or destination), `stopped` (one bad
row stopped the batch: the valid rows were not imported), `damaged` (a file outside the command's own output
changed or vanished), `differs` (killed and rerun, the result is not an uninterrupted run's), `doubled`.
Used by `test_catalogue.py` (asserts `handled`) and `scripts/robustness_table.py` (prints the matrix).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .inputs import Importer
from .invoke import Outcome, fork, run
from .rows import ROW_DAMAGE


@dataclass
class Probe:
    surface: str
    cls: str
    case: str
    outcome: str
    detail: str = ""
    seconds: float = 0.0


def tree(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every file under `root` (not under `skip`) → its sha256: what "nothing damaged" compares."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not any(p.is_relative_to(s) for s in skip):
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before if after.get(k) != before[k])


def judge(o: Outcome, *, names: tuple[str, ...] = ()) -> tuple[str, str]:
    """The shared oracle: one line or success; an error names one of `names` (the input, the destination)."""
    if o.problems():
        return "crash", "; ".join(o.problems()) + " :: " + o.brief()
    if o.code and names and not any(n in line for line in o.error_lines() for n in names):
        return "unclear", o.brief()
    return "handled", o.brief()


# ---- bad rows × importers -----------------------------------------------------------------------------------------
def probe_importer(imp: Importer, damage: str | None, tmp: Path, corpus: Path) -> Probe:
    """The importer on its valid input with `damage` planted (None: the valid input alone). Also: nothing outside
    the workspace and the input folder changes, and — for a damaged row among valid ones — the valid rows still
    go in (the exit status of the valid input alone)."""
    home, folder = tmp / "home", tmp / "in"
    home.mkdir(parents=True)
    (tmp / "mine.txt").write_text("a file of the user's beside the workspace\n")
    argv = imp.make(folder, corpus, damage)
    before = tree(tmp, skip=(home, folder))
    o = run(argv, home)
    outcome, detail = judge(o, names=(str(folder), folder.name, "in/"))
    lost = _changed(before, tree(tmp, skip=(home, folder)))
    if outcome == "handled" and lost:
        outcome, detail = "damaged", f"changed outside: {lost[:3]}"
    case = damage or "valid"
    return Probe(imp.command, f"bad rows ({imp.form})", case, outcome, detail, o.seconds)


def rest_goes_on(imp: Importer, damage: str, valid_code: int, got: Probe) -> Probe:
    """A damaged row among valid ones must not change a success into a failure."""
    if got.outcome == "handled" and damage in ROW_DAMAGE and valid_code == 0 and not got.detail.startswith("exit 0"):
        return Probe(got.surface, got.cls, got.case, "stopped", got.detail, got.seconds)
    return got


# ---- occupied destinations ----------------------------------------------------------------------------------------
ROUND = "demo"


def destination_home(corpus: Path, home: Path) -> Path:
    """A workspace holding the L-Eval round `demo` (the real TPO task file) and a file of the user's."""
    o = run(["leval", "import", str(corpus / "leval" / "LEval-data"), "--round", ROUND, "--tasks", "tpo"], home)
    assert o.code == 0, o.brief()
    (home / "notes.txt").write_text("the user's own file\n")
    return home


def destinations(corpus: Path, home: Path, elaip_file: Path) -> dict[str, tuple[str, list[str]]]:
    """surface → (case, argv) writing over what must not be touched (all with --force where it has one: force
    replaces only what academiceval wrote)."""
    scalar = sorted((corpus / "samples" / "scalar_questions" / "easy").glob("*.json"))[:2]
    leval = str(corpus / "leval" / "LEval-data")
    rnd = str(home / "rounds" / ROUND)
    return {
        "cloze import/existing round": ("cloze import", ["cloze", "import", *map(str, scalar), "--round", ROUND]),
        "leval import/existing round": ("leval import", ["leval", "import", leval, "--round", ROUND]),
        "elaip import/existing round": ("elaip import", ["elaip", "import", str(elaip_file), "--round", ROUND]),
        "cloze build/existing round": ("cloze build", ["cloze", "build", "--round", ROUND]),
        "release/OUT is the workspace": ("release", ["release", ROUND, str(home), "--force"]),
        "release/OUT contains the workspace": ("release", ["release", ROUND, str(home.parent), "--force"]),
        "release/OUT is the round read": ("release", ["release", ROUND, rnd, "--force"]),
        "release/OUT is rounds/": ("release", ["release", ROUND, str(home / "rounds"), "--force"]),
        "release/OUT is a file": ("release", ["release", ROUND, str(home / "notes.txt"), "--force"]),
        "leval import/--out is the workspace":
            ("leval import", ["leval", "import", leval, "--out", str(home), "--force"]),
        "cloze import/--round ../..": ("cloze import", ["cloze", "import", *map(str, scalar), "--round", "../.."]),
    }  # fmt: skip


def probe_destination(case: str, surface: str, argv: list[str], home: Path) -> Probe:
    """Refused (exit ≠ 0, one line), and every file of the workspace and beside it unchanged."""
    root = home.parent
    before = tree(root)
    o = run(argv, home)
    outcome, detail = judge(o)
    lost = _changed(before, tree(root))
    if outcome == "handled" and lost:
        outcome, detail = "damaged", f"changed or removed: {lost[:3]}"
    elif outcome == "handled" and o.code == 0:
        outcome, detail = "damaged", "accepted: " + detail
    return Probe(surface, "occupied destination", case.split("/", 1)[1], outcome, detail, o.seconds)


# ---- resources: a workspace path that is a file ------------------------------------------------------------------
def home_file_argv(corpus: Path, tmp: Path) -> dict[str, list[str]]:
    scalar = sorted((corpus / "samples" / "scalar_questions" / "easy").glob("*.json"))[:2]
    return {
        "stats": ["stats", ROUND],
        "audit": ["audit", ROUND],
        "export": ["export", "--format", "lm-eval", ROUND, str(tmp / "export-out")],
        "release": ["release", ROUND, str(tmp / "release-out")],
        "cloze import": ["cloze", "import", *map(str, scalar), "--round", "x"],
        "cloze build": ["cloze", "build", "--round", "x"],
        "leval import": ["leval", "import", str(corpus / "leval" / "LEval-data"), "--round", "x", "--tasks", "tpo"],
        "lm-eval import": ["lm-eval", "import", str(tmp)],
        "elaip generate": [
            "elaip",
            "generate",
            "2305.03393",
            "--generator",
            "baseline/lead",
            "--reference",
            "baseline/lead",
            "--review",
            str(tmp / "review.jsonl"),
        ],
        "demo": ["demo"],
    }


def probe_home_is_a_file(surface: str, argv: list[str], tmp: Path) -> Probe:
    """`--home` naming a file: one line naming it, the file untouched, nothing created beside it."""
    home = tmp / "home-file"
    home.write_text("not a workspace\n")
    before = tree(tmp)
    o = run(argv, home)
    outcome, detail = judge(o, names=(str(home), home.name))
    if outcome == "handled" and o.code == 0:
        outcome, detail = "unclear", "exit 0 with --home a file: " + detail
    if outcome == "handled" and _changed(before, tree(tmp)):
        outcome, detail = "damaged", f"changed: {_changed(before, tree(tmp))}"
    return Probe(surface, "resource failure", "--home is a file", outcome, detail, o.seconds)


# ---- kill -9 at a random point, then the same command again --------------------------------------------------------
@dataclass
class KillSurface:
    """A command to interrupt: its workspace (copied per trial), its argv, and the state an uninterrupted run
    leaves (compared after kill + rerun)."""

    surface: str
    master: Path  # a folder holding `home/` (and any input)
    argv: Callable[[Path], list[str]]  # folder -> argv (without --home)
    state: Callable[[Path], object]  # folder -> what the run leaves, comparable
    rerun_codes: tuple[int, ...] = (0,)  # exit statuses of the rerun that are fine (e.g. 2: "already built")


def _sql(db: Path, query: str) -> list[tuple]:  # type: ignore[type-arg]
    with contextlib.closing(sqlite3.connect(db)) as c:
        return c.execute(query).fetchall()


def import_state(folder: Path) -> object:
    db = folder / "home" / "academiceval.sqlite"
    return {
        "meta": _sql(db, "SELECT arxiv_id, title, published, json FROM paper_meta ORDER BY 1"),
        "authorship": _sql(db, "SELECT * FROM authorship ORDER BY 1, 2"),
        "authors": _sql(db, "SELECT key, name, state, in_graph FROM graph_author ORDER BY 1"),
        "edges": _sql(db, "SELECT * FROM graph_edge ORDER BY 1, 2"),
    }


_VOLATILE = (
    "released_at",
    "release_manifest_sha256",  # a release key's header: the manifest's hash holds its time
    "release_dir",  # a release key's header: where this trial's release went (a different folder per trial)
    "created_at",
    "seconds",
    "generated_at",
    "finished_at",
    "started_at",
    "built_at",
    "package_version",
)


def _stable(value: object) -> object:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def files_state(root: Path) -> object:
    """Every file under `root`: JSON/JSONL parsed with run-time fields dropped, other files by hash; leftovers of a
    killed write (temp or staging siblings) show up as extra names."""
    out: dict[str, object] = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        if rel.startswith("release-keys/") and p.name.endswith(".key.jsonl") and not p.name.startswith("."):
            rel = rel.rsplit("/", 1)[0] + "/KEY"  # named by the release manifest's hash, which holds its time
        data = p.read_bytes()
        try:
            if p.name == "SHA256SUMS":  # the hashes hold the manifest's time: checked against the files instead
                out[rel] = _sums_hold(p)
            elif p.suffix == ".json":
                out[rel] = _stable(json.loads(data))
            elif p.suffix == ".jsonl":
                out[rel] = sorted(json.dumps(_stable(json.loads(x)), sort_keys=True) for x in data.splitlines() if x)
            else:
                out[rel] = hashlib.sha256(data).hexdigest()
        except ValueError:
            out[rel] = "unparsable:" + hashlib.sha256(data).hexdigest()
    return out


def _sums_hold(sums: Path) -> list[str]:
    """The names SHA256SUMS lists, each marked by whether the file beside it has that hash."""
    out = []
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        f = sums.parent / name.strip()
        ok = f.is_file() and hashlib.sha256(f.read_bytes()).hexdigest() == digest.strip()
        out.append(f"{name.strip()}:{'ok' if ok else 'MISMATCH'}")
    return sorted(out)


def scores_state(folder: Path) -> object:
    """Every score line of every run (run-time fields dropped); a doubled line shows as a count of 2."""
    lines = Counter()
    for f in sorted((folder / "home" / "runs").rglob("scores.jsonl")):
        for x in f.read_bytes().splitlines():
            if x.strip():
                lines[json.dumps(_stable(json.loads(x)), sort_keys=True)] += 1
    return sorted(lines.items())


def kill_trial(ks: KillSurface, tmp: Path, reference: object, duration: float, rng: random.Random, kills: int) -> Probe:
    """A fresh copy of the master; the command killed -9 `kills` times at random points of an uninterrupted run's
    duration; then run to the end; its state compared with `reference`."""
    folder = tmp / "trial"
    shutil.copytree(ks.master, folder, symlinks=True)
    home = folder / "home"
    landed = 0
    at = []
    for k in range(kills):
        child = fork(ks.argv(folder), home, tmp / f"logs{k}")
        when = rng.uniform(0.0, duration)
        at.append(round(when, 2))
        time.sleep(when)
        child.kill()
        landed += child.wait(timeout=30).killed
    o = run(ks.argv(folder), home)
    outcome, detail = judge(o)
    if outcome == "handled" and o.code not in ks.rerun_codes:
        outcome = "differs"
    if outcome == "handled":
        got = ks.state(folder)
        if got != reference:
            outcome = "differs"
            detail = _diff(reference, got)
        else:
            detail = f"{landed}/{kills} kills landed (at {at} s); rerun exit {o.code}"
    shutil.rmtree(folder, ignore_errors=True)
    return Probe(ks.surface, "kill -9 and rerun", f"{kills} kills", outcome, detail, o.seconds)


def _diff(want: object, got: object) -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        keys = sorted(k for k in {*want, *got} if want.get(k) != got.get(k))
        return f"differs in {keys[:4]}"
    return "differs"


def uninterrupted(ks: KillSurface, tmp: Path) -> tuple[object, float]:
    """The reference state and how long the command takes (the window the kills fall in)."""
    folder = tmp / "reference"
    shutil.copytree(ks.master, folder, symlinks=True)
    t0 = time.perf_counter()
    o = run(ks.argv(folder), folder / "home")
    duration = time.perf_counter() - t0  # the window the kills fall in (a kill after the end is a trial too)
    assert o.code == 0 and not o.problems(), o.brief()
    state = ks.state(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return state, duration


def _run_dir(folder: Path) -> str:
    return str(next(p.parent for p in sorted((folder / "home" / "runs").rglob("run.json"))))


def kill_surfaces(corpus: Path, root: Path, *, entries: int = 300) -> list[KillSurface]:
    """The masters of the four interrupted commands, built under `root` from real data: a BibTeX list of real
    listing records (`import`), SCALAR's paper objects indexed (`cloze build`), the L-Eval TPO round
    (`release`), a baseline run over 6 real papers (`score`)."""
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace
    from academiceval.testing.publists import entries_bib
    from academiceval.testing.sample_round import write_sample_round

    from ..conftest import run_model

    imp = root / "import"
    (imp / "home").mkdir(parents=True)
    entries_bib(corpus, entries, imp / "in")

    cloze = root / "cloze"
    ws = Workspace(cloze / "home")
    index_mirror(ws, corpus / "samples" / "scalar_paper_obj_anno")
    index_mirror(ws, corpus / "metadata" / "scalar_iclr2025_metadata.json")
    ws.close()

    rel = root / "release"
    destination_home(corpus, rel / "home")

    sc = root / "score"
    rnd = write_sample_round(corpus, sc / "home" / "rounds" / "2022-12-sample", max_papers=6, body_chars=3000)
    run_model(sc / "home", rnd, "baseline/lead")

    return [
        KillSurface("import-publist", imp, lambda f: ["import-publist", str(f / "in"), "--no-parse"], import_state),
        KillSurface(
            "cloze build",
            cloze,
            lambda f: ["cloze", "build", "--round", "c", "--level", "easy", "--set", "max_questions=10", "--seed", "3"],
            lambda f: files_state(f / "home" / "rounds"),
            rerun_codes=(0, 2),  # 2: the kill came after the round was published ("already holds files")
        ),
        KillSurface(
            "release",
            rel,
            lambda f: ["release", ROUND, str(f / "out")],
            lambda f: {"out": files_state(f / "out"), "workspace": files_state(f / "home")},
            rerun_codes=(0, 2),
        ),
        KillSurface(
            "score",
            sc,
            lambda f: ["score", _run_dir(f), "--metrics", "rouge-l,rouge-1"],
            scores_state,
        ),
    ]
