"""The workspace's files: where every artifact lives and the one reader and writer of each.

Layout under the workspace home (each name is spelled here and nowhere else):

    rounds/NAME/                 an exported round
        manifest.json            RoundManifest: windows, configs, sha256 of every file
        data/CONFIG/SPLIT.parquet, jsonl/CONFIG/SPLIT.jsonl   the samples (the same rows twice)
        templates/               the prompt templates the round was built with
        README.md                dataset card
    runs/ROUND/RUN/              one model (and variant) on one round
        run.json                 RunSpec: what produced the run
        TASK-SETTING.jsonl       RunRecord lines, appended as samples finish
        scores.jsonl             ScoreRecord lines, appended as samples are scored
        scores.lock              held by the one process scoring the run (a second waits or refuses)
    reports/NAME/                a leaderboard (results.json + Markdown/HTML)
    release-keys/ROUND/SHA.key.jsonl   the private key of a release of ROUND (0600; store.release): the withheld
                                 samples in full, by release id; never in the release
    cache/responses.sqlite       the response cache
    cache/embeddings.sqlite      BERTScore label embeddings (scores.embed_cache)

Artifacts:

    round    write_round_config / write_manifest (rounds.publish)   load_round → LoadedRound (runs, scores, report)
    run      write_run_spec, RecordWriter (runs.runner/worker)      load_run → RunData; read_run_records
    scores   append_scores (scores.rescore)                         read_scores; load_run(...).scores
    results  Results.write (report.results, at RESULTS)              Results.read (report, cli demo)

Every name that becomes a path (a round name, a run directory name, a report name) goes through `check_name`
(`is_safe_name` is the rule); `safe_name` turns free text (a model spec) into such a name. Append-only JSONL
files are read line by line: a torn last line (an interrupted write) or a line that is not a valid record is
skipped and counted in `bad_lines`, never fatal. The last line for a key wins (a resumed run or a re-scoring appends).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined

from academiceval.errors import ConfigError
from academiceval.store.hashing import sha256_file, sha256_hex
from academiceval.store.models import ConfigInfo, RoundManifest, RunRecord, RunSpec, Sample, ScoreRecord

log = logging.getLogger(__name__)

# ---- names -------------------------------------------------------------------------------------------------
ROUNDS = "rounds"
RUNS = "runs"
REPORTS = "reports"
PDFS = "pdf"
CACHE = "cache"
RESPONSE_CACHE = "responses.sqlite"
EMBEDDING_CACHE = "embeddings.sqlite"
MANIFEST = "manifest.json"
TEMPLATES = "templates"
DATASET_CARD = "README.md"
CHECKSUMS = "SHA256SUMS"  # a release: `sha256sum -c SHA256SUMS` checks every file
RUN_SPEC = "run.json"
SCORES = "scores.jsonl"
SCORES_LOCK = "scores.lock"  # held by the one writer of scores.jsonl (scores.rescore)
RESULTS = "results.json"
RELEASE_KEYS = "release-keys"  # release-keys/ROUND/<release manifest sha256>.key.jsonl: a release's private key
SPLITS = ("train", "val", "test")
PARQUET_BATCH = 32

M = TypeVar("M", bound=BaseModel)


class ArtifactError(ConfigError):
    """A workspace file or directory cannot be found, named or read as asked."""

    code = "artifact"


class RoundIntegrityError(ConfigError):
    """A round file is missing or no longer matches the sha256 recorded in its manifest: scores on a silently
    changed round would not be comparable, so runs refuse it before sending any request."""

    code = "round_integrity"


_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+=-]{0,199}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")


def is_safe_name(name: object) -> bool:
    """The one rule for names that become paths: a single directory or file name made of letters, digits and
    `._+=-` — never empty, absolute, `..`, or holding a separator — so nothing lands outside the workspace."""
    return isinstance(name, str) and bool(_NAME.match(name)) and ".." not in name


def check_name(name: str, what: str = "name") -> str:
    """`name` if `is_safe_name`, else an ArtifactError naming the option (`what`) it came from."""
    if not is_safe_name(name):
        raise ArtifactError(
            f"{what} {name!r} is not a safe directory name",
            hint="use letters, digits and '.', '_', '-', '+', '=' (no '/', no '..', at most 200 characters)",
        )
    return name


def safe_name(text: str) -> str:
    """A checked name from free text: `openai/gpt-4o` → `openai__gpt-4o`, `random:2` → `random_2`."""
    name = _UNSAFE.sub("_", text.replace("/", "__")).strip("._").replace("..", "_")
    return check_name(name or "_", "name")


# ---- layout ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Paths of one workspace home. Nothing is created until a writer asks (`ensure`)."""

    home: Path

    @classmethod
    def of(cls, where: Any) -> Layout:
        """A Layout for a Workspace (anything with `.home`), a workspace home, or its `runs/` directory."""
        if isinstance(where, Layout):
            return where
        if isinstance(where, str | os.PathLike):
            p = Path(where).resolve()
            return cls(p.parent if p.name == RUNS else p)
        return cls(Path(where.home).resolve())

    @staticmethod
    def ensure(path: Path) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def rounds_dir(self) -> Path:
        return self.home / ROUNDS

    @property
    def runs_dir(self) -> Path:
        return self.home / RUNS

    @property
    def reports_dir(self) -> Path:
        return self.home / REPORTS

    @property
    def pdf_dir(self) -> Path:
        return self.home / PDFS

    @property
    def response_cache(self) -> Path:
        return self.home / CACHE / RESPONSE_CACHE

    @property
    def embedding_cache(self) -> Path:
        return self.home / CACHE / EMBEDDING_CACHE

    def round_dir(self, name: str) -> Path:
        return self.rounds_dir / check_name(name, "round name")

    def run_dir(self, round_name: str, run_name: str) -> Path:
        return self.runs_dir / check_name(round_name, "round name") / check_name(run_name, "run name")

    def round_runs(self, round_name: str) -> list[Path]:
        """Every run directory saved under `runs/<round_name>/` (sorted; none when there is no such folder)."""
        d = self.runs_dir / check_name(round_name, "round name")
        return find_run_dirs([d]) if d.is_dir() else []

    def report_dir(self, name: str) -> Path:
        return self.reports_dir / check_name(name, "report name")

    def release_key(self, round_name: str, release_manifest_sha256: str) -> Path:
        """The private key of one release of a round (store.release): never inside the release itself."""
        return self.home / RELEASE_KEYS / check_name(round_name, "round name") / f"{release_manifest_sha256}.key.jsonl"

    def release_keys(self, round_name: str) -> list[Path]:
        d = self.home / RELEASE_KEYS / check_name(round_name, "round name")
        return sorted(d.glob("*.key.jsonl")) if d.is_dir() else []

    def known_rounds(self) -> list[str]:
        d = self.rounds_dir
        return sorted(p.parent.name for p in d.glob(f"*/{MANIFEST}")) if d.is_dir() else []

    def find_run(self, ref: str | Path) -> Path:
        """Where run directories are: a path (a run directory, or a directory holding several), or ROUND/RUN
        under `runs/` — the forms `score` and `compare` both take; an ArtifactError saying both otherwise."""
        p = Path(ref)
        if p.exists():
            return p
        parts = str(ref).strip("/").split("/")
        if len(parts) == 2 and all(is_safe_name(x) for x in parts) and (self.runs_dir / parts[0] / parts[1]).is_dir():
            return self.runs_dir / parts[0] / parts[1]
        raise ArtifactError(
            f"no run directory {str(ref)!r}", hint=f"give a run directory path or ROUND/RUN under {self.runs_dir}"
        )

    def find_round(self, ref: str | Path) -> Path:
        """A round directory given as a path, or by name under `rounds/`; an ArtifactError naming the known rounds
        otherwise."""
        p = Path(ref)
        if p.is_dir():
            return p.resolve()
        name = str(ref)
        if is_safe_name(name) and (self.rounds_dir / name).is_dir():
            return (self.rounds_dir / name).resolve()
        raise ArtifactError(
            f"round {name!r} not found",
            hint="give a round directory or one of: "
            + (", ".join(self.known_rounds()) or "(no rounds in the workspace)"),
        )


def home_of_run(run_dir: str | Path) -> Path | None:
    """The workspace home a run directory lives in (`<home>/runs/ROUND/RUN`), if it sits in that layout."""
    parents = Path(run_dir).resolve().parents
    return parents[2] if len(parents) >= 3 and parents[1].name == RUNS else None


def locate_round(
    round_name: str,
    *,
    rounds_dir: str | Path | None = None,
    home: str | Path | None = None,
    run_dir: str | Path | None = None,
) -> Path | None:
    """Where round `round_name` is: `rounds_dir/NAME` (or `rounds_dir` itself when it is that round), else
    `<home>/rounds/NAME`, else the `rounds/` beside the `runs/` a run directory sits in. None when none holds a
    manifest."""
    if not is_safe_name(round_name):  # a name read from a run.json is checked like any other
        return None
    cands: list[Path] = []
    if rounds_dir is not None:
        cands += [Path(rounds_dir) / round_name, Path(rounds_dir)]
    if home is not None:
        cands.append(Layout.of(home).rounds_dir / round_name)
    if run_dir is not None:
        h = home_of_run(run_dir)
        if h is not None:
            cands.append(Layout(h).rounds_dir / round_name)
    for c in cands:
        mpath = c / MANIFEST
        if mpath.is_file() and (c.name == round_name or _manifest_round(mpath) == round_name):
            return c
    return None


def _manifest_round(mpath: Path) -> str | None:
    try:
        return RoundManifest.model_validate_json(mpath.read_bytes()).round
    except (OSError, ValueError):
        return None


# ---- JSON and JSONL ----------------------------------------------------------------------------------------
def write_json_atomic(path: Path, data: Any) -> None:
    """Pretty, sorted JSON replaced atomically (temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _first_error(e: ValidationError) -> str:
    """One line for a person: the first problem and where (never a multi-line pydantic dump)."""
    err = e.errors()[0]
    where = ".".join(map(str, err.get("loc") or ()))
    return f"{where + ': ' if where else ''}{err['msg']}".replace("\n", " ")


def iter_jsonl(path: Path, model: type[M], bad: list[str] | None = None) -> Iterator[M]:
    """Every valid `model` line of an append-only JSONL file, in file order. A torn last line (no newline: an
    interrupted write), a line that is not JSON or not a valid record is skipped and described in `bad`."""
    if not path.exists():
        return
    if not path.is_file():  # a directory (or a device) where a JSONL file belongs: described, never opened
        if bad is not None:
            bad.append(f"{path.name}: not a regular file (skipped)")
        return
    with path.open("rb") as f:
        for i, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                if bad is not None:
                    bad.append(f"{path.name}:{i}: torn last line (an interrupted write)")
                break
            if not raw.strip():
                continue
            try:
                yield model.model_validate_json(raw)
            except ValidationError as e:
                if bad is not None:
                    kind = "not JSON" if e.errors()[0]["type"] == "json_invalid" else f"not a {model.__name__}"
                    bad.append(f"{path.name}:{i}: {kind} ({_first_error(e)})")


def append_jsonl(path: Path, records: Sequence[BaseModel | dict[str, Any]]) -> None:
    """The one way to append to a JSONL artifact: a torn last line left by an interrupted write (kill -9, disk
    full) is cut first (`cut_torn_tail`: otherwise the next record would be glued onto the fragment and both
    lost), then whole lines in one write and one flush (an interrupted write leaves at worst one torn last line,
    cut by the next append). The caller holds the artifact's writer lock (a run's `run.lock`, `scores.lock`)."""
    if not records:
        return
    try:
        cut_torn_tail(path)
        fh = path.open("ab")
    except OSError as e:  # a directory where the file belongs, no permission, disk gone, ...
        raise ArtifactError(f"cannot append to {path.name}: {e.strerror}", source=str(path)) from None
    with fh:
        fh.write(b"".join(_line(r) for r in records))
        fh.flush()


def _line(record: BaseModel | dict[str, Any]) -> bytes:
    if isinstance(record, BaseModel):
        return record.model_dump_json().encode() + b"\n"
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def cut_torn_tail(path: Path) -> None:
    """Drop a torn last line (no trailing newline) before appending to a JSONL file."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        size = f.seek(0, os.SEEK_END)
        pos = size
        block = 4096
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                f.truncate(start + i + 1)
                return
            pos = start
        f.truncate(0)


# ---- rounds ------------------------------------------------------------------------------------------------
def data_paths(config: str, split: str) -> tuple[str, str]:
    """The parquet and JSONL files (relative to the round) of one config and split."""
    return f"data/{config}/{split}.parquet", f"jsonl/{config}/{split}.jsonl"


def sample_schema(field_names: Sequence[str]) -> pa.Schema:
    """The parquet schema of a config's samples; `field_names` are the task's input fields."""
    fields_t = pa.struct([(k, pa.string()) for k in field_names])
    demo_t = pa.struct(
        [
            ("arxiv_id", pa.string()),
            ("published", pa.date32()),
            ("fields", fields_t),
            ("label", pa.string()),
            ("origin", pa.string()),
            ("paper_id", pa.string()),
            ("date_precision", pa.string()),
            ("shared_authors", pa.list_(pa.string())),
        ]
    )
    cite_t = pa.struct(
        [
            ("arxiv_id", pa.string()),
            ("title", pa.string()),
            ("abstract", pa.string()),
            ("distractor", pa.bool_()),
            ("authors", pa.list_(pa.string())),
            ("year", pa.int64()),
            ("resolved", pa.bool_()),
            ("found_by", pa.string()),
            ("abstract_withheld", pa.bool_()),
            ("mentions", pa.int64()),
        ]
    )
    return pa.schema(
        [
            ("sample_id", pa.string()),
            ("round", pa.string()),
            ("task", pa.string()),
            ("setting", pa.string()),
            ("setting_name", pa.string()),
            ("split", pa.string()),
            ("arxiv_id", pa.string()),
            ("paper_id", pa.string()),
            ("published", pa.date32()),
            ("date_precision", pa.string()),
            ("primary_category", pa.string()),
            ("fields", fields_t),
            ("citations", pa.list_(cite_t)),
            ("demos", pa.list_(demo_t)),
            ("label", pa.string()),
            ("prompt_sha256", pa.string()),
            ("seed", pa.int64()),
            ("input_tokens", pa.int64()),
            ("label_tokens", pa.int64()),
        ]
    )


def write_round_config(
    round_dir: Path, info: ConfigInfo, samples: Iterable[Sample], field_names: Sequence[str]
) -> None:
    """Stream one config's samples (already in split order) into a parquet and a JSONL file per split, appending
    their relative paths to `info.files`."""
    schema = sample_schema(field_names)
    cur_split: str | None = None
    pw: pq.ParquetWriter | None = None
    jf: IO[str] | None = None
    batch: list[dict[str, object]] = []

    def flush() -> None:
        if batch and pw is not None:
            pw.write_table(pa.Table.from_pylist(batch, schema=schema))
            batch.clear()

    def close() -> None:
        flush()
        if pw is not None:
            pw.close()
        if jf is not None:
            jf.close()

    try:
        for s in samples:
            s = s.model_copy(update={"setting_name": info.setting_name})
            if s.split != cur_split:
                close()
                cur_split = s.split
                pq_rel, js_rel = data_paths(info.setting_name, s.split)
                for rel in (pq_rel, js_rel):
                    (round_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                    info.files.append(rel)
                pw = pq.ParquetWriter(round_dir / pq_rel, schema, compression="zstd")
                jf = (round_dir / js_rel).open("w", encoding="utf-8")
            assert jf is not None
            jf.write(s.model_dump_json() + "\n")
            batch.append(s.model_dump())
            if len(batch) >= PARQUET_BATCH:
                flush()
    finally:
        close()


def manifest_json(manifest: RoundManifest) -> str:
    skip = {"release"} if manifest.release is None else None  # a built round's manifest is unchanged by the field
    return json.dumps(manifest.model_dump(mode="json", exclude=skip), indent=2, sort_keys=True) + "\n"


def write_manifest(round_dir: Path, manifest: RoundManifest) -> None:
    """Record the sha256 of every file of the round in the manifest, then write it (the round's last file)."""
    for p in sorted(round_dir.rglob("*")):
        if p.is_file() and p != round_dir / MANIFEST:
            manifest.files[p.relative_to(round_dir).as_posix()] = sha256_file(p)
    (round_dir / MANIFEST).write_text(manifest_json(manifest), encoding="utf-8")


@dataclass
class LoadedRound:
    """An exported round: its manifest (and that file's sha256) and streamed access to its samples."""

    path: Path
    manifest: RoundManifest
    manifest_sha256: str

    @property
    def name(self) -> str:
        return self.manifest.round

    @property
    def templates_dir(self) -> Path | None:
        """The templates the round was built with (copied into the round), for re-rendering prompts."""
        d = self.path / TEMPLATES
        return d if d.is_dir() else None

    def configs(self) -> list[str]:
        return sorted(self.manifest.configs)

    def resolve_config(self, name: str) -> str:
        """The config `name` stands for. Config names used to carry the measured mean input size
        (`title-zero-shot-14K`, `-17K` in the next round); they are now task + setting (`title-zero-shot`), the
        size being metadata (`ConfigInfo.mean_input_tokens`). Either spelling finds the config in a round of either
        age (with a note on stderr); an unknown name is a ConfigError listing the round's configs."""
        if name in self.manifest.configs:
            return name
        stem = config_stem(name)
        hits = [
            c
            for c, info in self.manifest.configs.items()
            if config_stem(c) == stem or artifact_name(info.task, info.setting) == stem
        ]
        if len(hits) != 1:
            raise ConfigError(f"round {self.name} has no config {name!r}", hint=f"one of: {', '.join(self.configs())}")
        log.warning(
            "config %r of round %s is read as %r (config names are task + setting; the size is metadata)",
            name,
            self.name,
            hits[0],
        )
        return hits[0]

    def samples(self, config: str | None = None, *, split: str | None = None) -> Iterator[Sample]:
        """Samples of one config (all configs when None), streamed from parquet in split order. A config named the
        old way (with its size, `title-zero-shot-14K`) is found too (`resolve_config`)."""
        names = self.configs() if config is None else [self.resolve_config(config)]
        for name in names:
            info = self.manifest.configs[name]
            for sp in SPLITS if split is None else (split,):
                rel = data_paths(name, sp)[0]
                if rel not in info.files:
                    continue
                pf = pq.ParquetFile(self.path / rel)
                for batch in pf.iter_batches(batch_size=64):
                    for row in batch.to_pylist():
                        yield Sample.model_validate(row)

    def distinct_samples(self) -> list[Sample]:
        """Every sample once, in config order (a sample id appears once even if several configs hold it)."""
        out: list[Sample] = []
        seen: set[str] = set()
        for s in self.samples():
            if s.sample_id not in seen:
                seen.add(s.sample_id)
                out.append(s)
        return out

    def samples_by_id(self) -> dict[str, Sample]:
        return {s.sample_id: s for s in self.samples()}


def verify_round(round_dir: Path, manifest: RoundManifest) -> None:
    """Refuse a round whose files changed after it was built (naming the file)."""
    root = round_dir.resolve()
    for rel, expected in sorted(manifest.files.items()):
        p = (root / rel).resolve()
        if root not in p.parents:
            raise RoundIntegrityError(f"manifest lists a file outside the round: {rel!r}", source=str(round_dir))
        if not p.is_file():
            raise RoundIntegrityError(f"round file {rel} is missing (sha256 cannot be checked)", source=str(round_dir))
        actual = sha256_file(p)
        if actual != expected:
            raise RoundIntegrityError(
                f"round file {rel} has sha256 {actual[:16]}… but the manifest records {expected[:16]}…",
                source=str(round_dir),
                hint="the file changed after the round was built; rebuild the round or restore the file",
            )


def load_round(round_dir: str | Path, *, verify: bool = True) -> LoadedRound:
    """The one reader of an exported round. `verify=True` recomputes the sha256 of every file the manifest lists
    and refuses a round whose files changed after it was built."""
    d = Path(round_dir)
    mpath = d / MANIFEST
    if not mpath.is_file():
        raise ConfigError(f"{d} has no {MANIFEST}", hint="is this a round directory written by `academiceval build`?")
    raw = mpath.read_bytes()
    try:
        manifest = RoundManifest.model_validate_json(raw)
    except ValidationError as e:
        raise ArtifactError(
            f"{MANIFEST} is not a valid round manifest ({_first_error(e)})",
            source=str(mpath),
            hint="rebuild the round with `academiceval build --force`, or restore the file",
        ) from None
    if verify:
        verify_round(d, manifest)
    return LoadedRound(d, manifest, sha256_hex(raw))


# ---- runs --------------------------------------------------------------------------------------------------
def setting_slug(setting: str) -> str:
    """A readable slug of a setting spec: `zero-shot`, `random:1` → `random1`, `mixed:1+1` → `mixed1-1`,
    `ctx:32000` → `ctx32K`."""

    def kilo(m: re.Match[str]) -> str:
        n = int(m.group(0))
        return f"{n // 1000}K" if n >= 1000 and n % 1000 == 0 else m.group(0)

    slug = re.sub(r"\d+", kilo, setting.replace(":", "").replace("+", "-"))
    return safe_name(slug)


def artifact_name(task: str, setting: str, size: str | None = None) -> str:
    """THE name of a task-setting artifact: a round config and a run's records file stem (`abstract-random1`,
    `title-ctx32K`). The same in every round: the measured size is metadata (`ConfigInfo.mean_input_tokens`), not
    part of the name. `size` appends it anyway (`abstract-random1-19K`: how rounds before the change named their
    configs; `LoadedRound.resolve_config` reads those names)."""
    name = f"{safe_name(task)}-{setting_slug(setting)}"
    return f"{name}-{size}" if size else name


SIZE_SUFFIX = re.compile(r"-\d+(?:\.\d+)?K$")  # the size old config names ended with: -14K, -0.9K


def config_stem(name: str) -> str:
    """A config name without the size old names carried: `title-zero-shot-14K` → `title-zero-shot`
    (`title-ctx32K-14K` → `title-ctx32K`; a name without a size is returned as it is)."""
    return SIZE_SUFFIX.sub("", name)


def records_file(run_dir: Path, task: str, setting: str) -> Path:
    """`{task}-{setting slug}.jsonl`; a run started before the rename keeps its old file
    (`abstract-random_1.jsonl`), so resumed runs append where their records already are."""
    path = Path(run_dir) / f"{artifact_name(task, setting)}.jsonl"
    legacy = Path(run_dir) / f"{safe_name(task)}-{safe_name(setting)}.jsonl"
    return legacy if not path.exists() and legacy.exists() else path


def _record_files(run_dir: Path) -> list[Path]:
    return [p for p in sorted(Path(run_dir).glob("*.jsonl")) if p.name != SCORES]


def read_run_records(run_dir: Path, bad: list[str] | None = None) -> dict[str, RunRecord]:
    """sample_id → its latest record of epoch 1, over every task-setting file of a run directory (what every
    reader that pairs samples wants; `read_epoch_records` has the repeats of a `run --epochs N` too)."""
    return {sid: r for (sid, epoch), r in read_epoch_records(run_dir, bad).items() if epoch == 1}


def read_epoch_records(run_dir: Path, bad: list[str] | None = None) -> dict[tuple[str, int], RunRecord]:
    """(sample_id, epoch) → its latest record, over every task-setting file of a run directory (a line without
    an epoch is epoch 1: every run written before epochs existed)."""
    out: dict[tuple[str, int], RunRecord] = {}
    for p in _record_files(run_dir):
        for r in iter_jsonl(p, RunRecord, bad):
            out[(r.sample_id, r.epoch)] = r
    return out


def write_run_spec(run_dir: Path, spec: RunSpec) -> None:
    """`run.json`, replaced atomically."""
    write_json_atomic(Path(run_dir) / RUN_SPEC, spec.model_dump(mode="json"))


def read_run_spec(run_dir: Path) -> RunSpec | None:
    """The run's spec, None when the directory holds none; an ArtifactError when it is not a RunSpec."""
    p = Path(run_dir) / RUN_SPEC
    if not p.exists():
        return None
    if not p.is_file():
        raise ArtifactError(
            f"{RUN_SPEC} is not a regular file", source=str(p), hint="remove it, or delete the run directory"
        )
    try:
        return RunSpec.model_validate_json(p.read_bytes())
    except ValidationError as e:
        raise ArtifactError(
            f"{RUN_SPEC} is not a valid run spec ({_first_error(e)})",
            source=str(p),
            hint="rerun the same `academiceval run` command with --run-name NEW, or delete the run directory",
        ) from None


def read_scores(run_dir: Path, bad: list[str] | None = None) -> list[ScoreRecord]:
    """Every valid score line of a run directory, in file order (re-scoring appends: later lines win)."""
    return list(iter_jsonl(Path(run_dir) / SCORES, ScoreRecord, bad))


def append_scores(run_dir: Path, records: Sequence[ScoreRecord]) -> None:
    """Append score lines (torn tail repaired first); the caller holds the run's `SCORES_LOCK`."""
    append_jsonl(Path(run_dir) / SCORES, records)


@dataclass
class RunData:
    """One run directory, de-duplicated: the current record per sample and per sample × metric configuration.

    `records` / `scores` hold epoch 1 (one line per sample: what paired comparisons, plots and examples read);
    `epoch_records` / `epoch_scores` hold every epoch of a `run --epochs N` (epoch 1 included), keyed with the
    epoch last, for the summaries that aggregate over repeats."""

    path: Path
    spec: RunSpec
    records: dict[str, RunRecord] = field(default_factory=dict)  # sample_id -> record (epoch 1)
    scores: dict[tuple[str, str, str], ScoreRecord] = field(default_factory=dict)  # (sample, metric, hash), epoch 1
    bad_lines: list[str] = field(default_factory=list)  # "file:line: reason"
    epoch_records: dict[tuple[str, int], RunRecord] = field(default_factory=dict)  # (sample, epoch) -> record
    epoch_scores: dict[tuple[str, str, str, int], ScoreRecord] = field(default_factory=dict)  # (..., epoch)

    def __post_init__(self) -> None:
        """A RunData built from one-epoch dicts (by hand, in tests) gets its epoch views from them."""
        if self.records and not self.epoch_records:
            self.epoch_records = {(sid, r.epoch): r for sid, r in self.records.items()}
        if self.scores and not self.epoch_scores:
            self.epoch_scores = {(sid, m, h, sr.epoch): sr for (sid, m, h), sr in self.scores.items()}

    @property
    def epochs(self) -> int:
        """How many epochs the run has records for (1 for a run without repeats)."""
        return max((epoch for _, epoch in self.epoch_records), default=1)

    @property
    def label(self) -> str:
        """How the run is named in tables (`RunSpec.label`)."""
        return self.spec.label


def load_run(path: str | Path, *, scores: bool = True) -> RunData:
    """The one reader of a run directory (`run.json`, run records, `scores.jsonl`)."""
    d = Path(path)
    spec = read_run_spec(d)
    if spec is None:
        raise ArtifactError(
            f"no {RUN_SPEC} here", source=str(d), hint="pass a run directory written by `academiceval run`"
        )
    run = RunData(path=d, spec=spec)
    run.epoch_records = read_epoch_records(d, run.bad_lines)
    run.records = {sid: r for (sid, epoch), r in run.epoch_records.items() if epoch == 1}
    if scores:
        for sr in read_scores(d, run.bad_lines):  # re-scoring appends: the last line wins
            run.epoch_scores[(sr.sample_id, sr.metric, sr.config_hash, sr.epoch)] = sr
        run.scores = {(sid, m, h): sr for (sid, m, h, epoch), sr in run.epoch_scores.items() if epoch == 1}
    return run


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories at or below each path (a run directory holds `run.json`), sorted, unique."""
    found: dict[Path, None] = {}
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise ArtifactError("path does not exist", source=str(p), hint="check --runs / --home")
        if (p / RUN_SPEC).is_file():
            found[p.resolve()] = None
            continue
        for spec in sorted(p.rglob(RUN_SPEC)):
            found[spec.parent.resolve()] = None
    return sorted(found)


# RunRecord's fields in declaration order with their defaults (required ones hold a placeholder until given);
# mutable defaults (lists, dicts) are made fresh per record
_FIELDS = RunRecord.model_fields
_TEMPLATE: dict[str, Any] = {
    name: (None if f.default is PydanticUndefined else f.default) for name, f in _FIELDS.items()
}
_REQUIRED = frozenset(name for name, f in _FIELDS.items() if f.is_required())
_FACTORIES = {name: f.default_factory for name, f in _FIELDS.items() if f.default_factory is not None}


def new_record(**values: Any) -> RunRecord:
    """A RunRecord from values the runner built itself (already typed), without validation.

    The same object as `RunRecord.model_construct(**values)` (fields in declaration order, so the JSON line is
    byte-identical; a required field not given is absent, as there), at a quarter of its cost: a cache replay
    builds thousands of records a second, and `model_construct` walks every field's metadata each time."""
    data = _TEMPLATE.copy()
    for name, factory in _FACTORIES.items():
        data[name] = factory()
    data.update(values)
    for name in _REQUIRED.difference(values):
        del data[name]
    rec = RunRecord.__new__(RunRecord)
    object.__setattr__(rec, "__dict__", data)
    object.__setattr__(rec, "__pydantic_fields_set__", set(values))
    object.__setattr__(rec, "__pydantic_extra__", None)
    object.__setattr__(rec, "__pydantic_private__", None)
    return rec


def record_of(data: dict[str, Any], fields_set: set[str]) -> RunRecord:
    """A RunRecord whose every field the caller gave, in declaration order, already typed (`data` becomes its
    `__dict__`; `fields_set` the fields it says were given). The runner's answered record goes through here: it
    names all the fields itself, so `new_record`'s defaults, factories and required-field pass are not needed.
    The same object, and JSON line, as `new_record` of the given fields (tests/runs/test_record_fast_path.py)."""
    rec = RunRecord.__new__(RunRecord)
    object.__setattr__(rec, "__dict__", data)
    object.__setattr__(rec, "__pydantic_fields_set__", fields_set)
    object.__setattr__(rec, "__pydantic_extra__", None)
    object.__setattr__(rec, "__pydantic_private__", None)
    return rec


def _record_json(record: RunRecord) -> bytes:
    """`record.model_dump_json().encode()`, straight from pydantic's serializer (the same bytes, without the
    Python-level wrapper and the str round trip: a third of a record's serialising cost)."""
    return RunRecord.__pydantic_serializer__.to_json(record)


class RecordWriter:
    """The one writer of run records: appends to per task-setting files, one open handle per file.

    A record that cost a request is flushed at once (`urgent=True`): that is what makes kill -9 lose only the
    requests in flight. Records that cost nothing to redo (cache hits, skips) are flushed in groups, since a
    flush per line would dominate a cache replay."""

    def __init__(self, run_dir: Path, *, lazy_every: int = 256, lazy_delay_s: float = 0.25) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._files: dict[tuple[str, str], IO[bytes]] = {}
        self._dirty: set[IO[bytes]] = set()
        self._lazy = 0
        self._lazy_since = 0.0
        self.lazy_every, self.lazy_delay_s = lazy_every, lazy_delay_s
        self.written = 0

    def _handle(self, task: str, setting: str) -> IO[bytes]:
        f = self._files.get((task, setting))
        if f is None:
            path = records_file(self.run_dir, task, setting)
            try:
                cut_torn_tail(path)
                f = self._files[(task, setting)] = path.open("ab")
            except OSError as e:  # a directory where the records file belongs, no permission, disk gone, ...
                raise ArtifactError(f"cannot append to {path.name}: {e.strerror}", source=str(path)) from None
        return f

    def append(self, record: RunRecord, *, urgent: bool = True) -> None:
        f = self._handle(record.task, record.setting)
        f.write(_record_json(record) + b"\n")
        self.written += 1
        if urgent:
            f.flush()
            self._dirty.discard(f)
            return
        if not self._dirty:
            self._lazy_since = time.monotonic()
        self._dirty.add(f)
        self._lazy += 1
        if self._lazy >= self.lazy_every or time.monotonic() - self._lazy_since >= self.lazy_delay_s:
            self.flush()

    def append_many(self, records: list[RunRecord]) -> None:
        """Append a batch with one `write` + `flush` per task-setting file (a cache replay: thousands of records
        that cost nothing to redo, so a flush per line would be most of their cost). A kill mid-batch leaves
        whole lines and at most one torn last line, like `append`."""
        lines: dict[tuple[str, str], list[bytes]] = {}
        for rec in records:
            key = (rec.task, rec.setting)
            group = lines.get(key)
            if group is None:
                group = lines[key] = []
            group.append(_record_json(rec))
        for (task, setting), group in lines.items():
            f = self._handle(task, setting)
            f.write(b"\n".join(group) + b"\n")
            f.flush()
            self._dirty.discard(f)
        self.written += len(records)

    def flush(self) -> None:
        for f in self._dirty:
            f.flush()
        self._dirty.clear()
        self._lazy = 0

    def close(self) -> None:
        self.flush()
        for f in self._files.values():
            f.close()
        self._files.clear()


__all__ = [
    "DATASET_CARD",
    "MANIFEST",
    "RESULTS",
    "RUN_SPEC",
    "SCORES",
    "SCORES_LOCK",
    "SPLITS",
    "TEMPLATES",
    "ArtifactError",
    "Layout",
    "LoadedRound",
    "RecordWriter",
    "RoundIntegrityError",
    "RunData",
    "append_jsonl",
    "append_scores",
    "artifact_name",
    "check_name",
    "data_paths",
    "find_run_dirs",
    "home_of_run",
    "is_safe_name",
    "iter_jsonl",
    "load_round",
    "load_run",
    "locate_round",
    "new_record",
    "read_epoch_records",
    "read_run_records",
    "read_run_spec",
    "read_scores",
    "record_of",
    "records_file",
    "safe_name",
    "setting_slug",
    "verify_round",
    "write_json_atomic",
    "write_manifest",
    "write_round_config",
    "write_run_spec",
]
