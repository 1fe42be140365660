"""Where a run's labels come from, and saying so (issue 28 item 2): the round a run is scored against.

A run records the round it was made on by name and by manifest sha256 (`run.json`). That is the round to score
against, and every score record says which one it was (`details["scored_against"]`):

1. `--round-dir DIR` (a round or a release), as given;
2. a **release** this workspace made (its private key, `store.release`, records the release's manifest sha256):
   the published labels from the release (or the round it was made from), the withheld ones from the key — the
   score records say "private key", so a leaderboard never mixes them up with labels anyone can check;
3. the workspace's round of that name (as before; a run made on another manifest is said so).

A withheld sample with no key to score it (a release scored anywhere but in its creator's workspace) is a
placeholder with an empty label: it scores as "label withheld", never against some other round's label. A run made
on a release (`runs/ROUND/NAME+release`, the runner's name for it) is never scored silently against a full round of
the same name it was not made on.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.errors import AcademicEvalError
from academiceval.store.artifacts import Layout, LoadedRound, home_of_run, load_round, locate_round
from academiceval.store.models import RunRecord, RunSpec, Sample
from academiceval.store.release import placeholder, read_withheld, release_id_of
from academiceval.store.release_key import ReleaseKey, find_key, read_key

RELEASE_RUN = "+release"  # runs.runner names a run of a release RUN+release


class ScoreError(AcademicEvalError):
    """A run directory cannot be scored as asked (bad input: a missing round, an unreadable run)."""

    code = "score"
    exit_code = 2


@dataclass
class RunLabels:
    """The samples a run is scored against, by the ids its records carry, and what each came from."""

    samples: dict[str, Sample] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)  # sample id -> what it is scored against
    default: str = ""  # for ids not in `source`
    notes: list[str] = field(default_factory=list)  # said once in the output (a manifest the run was not made on)

    def against(self, sample_id: str) -> str:
        return self.source.get(sample_id, self.default)

    def add(self, samples: dict[str, Sample], what: str, *, replace: bool = False) -> None:
        for sid, s in samples.items():
            if replace or sid not in self.samples:
                self.samples[sid] = s
                self.source[sid] = what


def _describe(rnd: LoadedRound) -> str:
    kind = "release" if rnd.manifest.release is not None else "round"
    return f"{kind} {rnd.name} (manifest {rnd.manifest_sha256[:12]})"


def _homes(run_dir: Path, home: Path | None) -> list[Path]:
    return [h for h in dict.fromkeys([home, home_of_run(run_dir)]) if h is not None]


def _key_for(rnd_name: str, sha: str, homes: list[Path]) -> ReleaseKey | None:
    for h in homes:
        key = find_key(h, rnd_name, sha)
        if key is not None:
            return key
    return None


def _with_release(labels: RunLabels, rnd: LoadedRound, homes: list[Path]) -> None:
    """A release's withheld samples: from its private key when this workspace made it, else placeholders."""
    items = read_withheld(rnd.path)
    if not items:
        return
    key = _key_for(rnd.name, rnd.manifest_sha256, homes)
    if key is not None:
        labels.add(key.by_id(), _key_text(key), replace=True)
        return
    labels.add(
        {i.sample_id: placeholder(i, rnd.name) for i in items},
        f"{_describe(rnd)}: label withheld (only the workspace that made the release holds its key)",
    )


def _key_text(key: ReleaseKey) -> str:
    h = key.header
    return (
        f"private key of release {h.round} (manifest {h.release_manifest_sha256[:12]}; {key.path}): the withheld "
        "labels, in the workspace that made the release"
    )


class Rounds:
    """Rounds read while scoring several runs, each loaded (and its sha256s checked) once."""

    def __init__(self) -> None:
        self._loaded: dict[Path, tuple[LoadedRound, dict[str, Sample]]] = {}

    def load(self, path: Path) -> LoadedRound:
        return self._get(path)[0]

    def samples(self, rnd: LoadedRound) -> dict[str, Sample]:
        return self._get(rnd.path)[1]

    def _get(self, path: Path) -> tuple[LoadedRound, dict[str, Sample]]:
        p = Path(path).resolve()
        if p not in self._loaded:
            rnd = load_round(p)
            self._loaded[p] = (rnd, rnd.samples_by_id())
        return self._loaded[p]


def run_labels(
    run_dir: Path,
    spec: RunSpec,
    round_dir: Path | None,
    home: Path | None,
    rounds: Rounds | None = None,
    records: Collection[RunRecord] = (),
) -> RunLabels:
    """The samples `run_dir` is scored against (see the module docstring), by the ids its `records` carry (a record
    that names a multiple-choice sample by its own id finds it under its release id too)."""
    rounds = rounds or Rounds()
    homes = _homes(Path(run_dir), home)
    labels = RunLabels()
    key = None if round_dir is not None else _key_for(spec.round, spec.round_manifest_sha256, homes)
    if round_dir is not None:
        rnd = rounds.load(round_dir)
        labels.default = _describe(rnd)
        labels.add(rounds.samples(rnd), _describe(rnd))
        _with_release(labels, rnd, homes)
    elif key is not None:  # a run of a release this workspace made
        _release_run(labels, key, spec.round, homes, rounds)
    else:
        _round_run(labels, Path(run_dir), spec, homes, rounds, {r.sample_id for r in records})
    for rec in records:
        if rec.sample_id not in labels.samples:
            rid = release_id_of(spec.round, rec.task, rec.setting, rec.arxiv_id, rec.prompt_sha256)
            if rid in labels.samples:
                labels.samples[rec.sample_id] = labels.samples[rid]
                labels.source[rec.sample_id] = labels.against(rid)
    return labels


def _release_run(labels: RunLabels, key: ReleaseKey, name: str, homes: list[Path], rounds: Rounds) -> None:
    public = _public_of(key, name, homes, rounds)
    if public is not None:
        labels.add(rounds.samples(public), f"{_describe(public)}: published labels")
    labels.add(key.by_id(), _key_text(key), replace=True)
    labels.default = _key_text(key)
    if public is None:
        labels.notes.append(
            f"the published samples of release {name} are not found (neither {key.header.release_dir} nor the "
            "round it was made from): pass --round-dir of the release to score them"
        )


def _round_run(
    labels: RunLabels, run_dir: Path, spec: RunSpec, homes: list[Path], rounds: Rounds, ids: set[str]
) -> None:
    """A run scored against the workspace's round of its name, and the keys of that round's releases for ids the
    round lacks (a submission made on a rebuilt round, scored after the round was replaced)."""
    found, key_paths = None, []
    for h in homes:  # the first workspace (--home before the run's own) with the round or its releases' keys
        found, key_paths = locate_round(spec.round, home=h), Layout.of(h).release_keys(spec.round)
        if found is not None or key_paths:
            break
    if found is None and not key_paths:
        looked = [Layout.of(h).rounds_dir / spec.round for h in homes]
        raise ScoreError(
            f"cannot find round {spec.round} for {run_dir} (looked in {', '.join(map(str, looked)) or 'nowhere'})",
            hint="pass --round-dir, or --home of the workspace the run belongs to",
        )
    if found is not None:
        rnd = rounds.load(found)
        if rnd.manifest_sha256 != spec.round_manifest_sha256 and run_dir.name.endswith(RELEASE_RUN):
            raise ScoreError(
                f"{run_dir} was made on a release of {spec.round} (manifest {spec.round_manifest_sha256[:12]}), not "
                f"on the round {found} (manifest {rnd.manifest_sha256[:12]}), and this workspace holds no key for it",
                hint="pass --round-dir of the release (its withheld samples then score as 'label withheld')",
            )
        labels.default = _describe(rnd)
        labels.add(rounds.samples(rnd), _describe(rnd))
        _with_release(labels, rnd, homes)
        if rnd.manifest_sha256 != spec.round_manifest_sha256:
            labels.notes.append(
                f"the run was made on manifest {spec.round_manifest_sha256[:12]}, scored against {_describe(rnd)}"
            )
    else:
        labels.notes.append(f"round {spec.round} is not in the workspace: only its releases' withheld samples score")
    if ids <= labels.samples.keys():
        return  # the round has every sample the run names: no key is read
    keys = [read_key(p) for p in sorted(key_paths, key=lambda p: p.stat().st_mtime, reverse=True)]
    for k in keys:
        labels.add(k.by_id(), _key_text(k))
    if not labels.default and keys:
        labels.default = _key_text(keys[0])


def _public_of(key: ReleaseKey, name: str, homes: list[Path], rounds: Rounds) -> LoadedRound | None:
    """The published samples of a key's release: the release itself when it is still where it was written, else the
    round it was made from (same labels), when that round is unchanged."""
    rel = Path(key.header.release_dir)
    if rel.is_dir():
        try:
            r = rounds.load(rel)
        except AcademicEvalError:
            r = None
        if r is not None and r.manifest_sha256 == key.header.release_manifest_sha256:
            return r
    for h in homes:
        found = locate_round(name, home=h)
        if found is not None:
            r = rounds.load(found)
            if r.manifest_sha256 == key.header.source_manifest_sha256:
                return r
    return None
