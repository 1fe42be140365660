"""Property tests for every reader of workspace files (run records, scores, run specs, round manifests): whatever
the bytes on disk, a reader returns valid objects and describes what it skipped, or raises one
`AcademicEvalError` naming the file — never a traceback (UnicodeDecodeError, RecursionError, pydantic's
ValidationError, IsADirectoryError, ...)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

artifacts = pytest.importorskip("academiceval.store.artifacts")

from academiceval.errors import AcademicEvalError  # noqa: E402
from academiceval.store.models import RunRecord, RunSpec, ScoreRecord  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

RECORD = RunRecord(
    sample_id="title/zero-shot/2212.00001",
    task="title",
    setting="zero-shot",
    split="test",
    arxiv_id="2212.00001",
    published="2022-12-01",
    prompt_sha256="ab" * 32,
    output_raw="A title",
    output="A title",
).model_dump(mode="json")
SCORE = {
    "sample_id": "title/zero-shot/2212.00001",
    "task": "title",
    "setting": "zero-shot",
    "split": "test",
    "published": "2022-12-01",
    "metric": "rouge-l",
    "config_hash": "abc",
    "values": {"f": 0.5},
}

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
    max_leaves=8,
)
NASTY_BYTES = st.sampled_from(
    [b"\xff\xfe", b"\x00", b"\xef\xbb\xbf", b"[" * 5000, b"\r", b"\\u0000", b'"', b"{", b"NaN", b"\xc3"]
)


def fresh(tmp_path: Path) -> Path:
    """A new directory per hypothesis example (the function-scoped tmp_path is shared by all of them)."""
    return Path(tempfile.mkdtemp(dir=tmp_path))


def mutate(base: dict, data: st.DataObject) -> bytes:
    """A valid line, then some of: a field replaced by any JSON, a field dropped, nasty bytes spliced in."""
    d = dict(base)
    for _ in range(data.draw(st.integers(0, 3))):
        key = data.draw(st.sampled_from(sorted(d)))
        if data.draw(st.booleans()):
            d[key] = data.draw(JSON)
        else:
            d.pop(key)
            if not d:
                break
    raw = json.dumps(d, allow_nan=True).encode()
    if data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + data.draw(NASTY_BYTES) + raw[at:]
    return raw


def jsonl_lines(base: dict):
    return st.lists(st.one_of(st.data().map(lambda d: mutate(base, d)), st.binary(max_size=200)), max_size=8)


@SETTINGS
@given(data=st.data())
def test_run_records_reader(tmp_path: Path, data: st.DataObject) -> None:
    run = fresh(tmp_path)
    lines = [mutate(RECORD, data) if data.draw(st.booleans()) else data.draw(st.binary(max_size=200)) for _ in
             range(data.draw(st.integers(0, 6)))]  # fmt: skip
    good = json.dumps(RECORD).encode()
    body = b"\n".join([good, *(ln.replace(b"\n", b" ") for ln in lines), good]) + b"\n"
    (run / "title-zero-shot.jsonl").write_bytes(body)
    bad: list[str] = []
    recs = artifacts.read_run_records(run, bad)
    assert all(isinstance(r, RunRecord) for r in recs.values())
    assert RECORD["sample_id"] in recs  # the good lines around the bad ones survive
    assert all(b.startswith("title-zero-shot.jsonl:") for b in bad)


@SETTINGS
@given(body=st.binary(max_size=2000))
def test_any_bytes_as_scores(tmp_path: Path, body: bytes) -> None:
    run = fresh(tmp_path)
    (run / artifacts.SCORES).write_bytes(body)
    bad: list[str] = []
    out = artifacts.read_scores(run, bad)
    assert all(isinstance(s, ScoreRecord) for s in out)


@SETTINGS
@given(data=st.data())
def test_mutated_score_lines(tmp_path: Path, data: st.DataObject) -> None:
    run = fresh(tmp_path)
    raw = mutate(SCORE, data).replace(b"\n", b" ")
    (run / artifacts.SCORES).write_bytes(raw + b"\n" + json.dumps(SCORE).encode() + b"\n")
    bad: list[str] = []
    out = artifacts.read_scores(run, bad)
    assert out and out[-1].metric == "rouge-l"


def spec_dict() -> dict:
    return RunSpec(
        round="2022-12", round_manifest_sha256="0" * 64, model="baseline/lead", backend="baseline",
        package_version="0", created_at="2026-01-01T00:00:00+00:00",
    ).model_dump(mode="json")  # fmt: skip


@SETTINGS
@given(data=st.data())
def test_run_spec_reader(tmp_path: Path, data: st.DataObject) -> None:
    run = fresh(tmp_path)
    body = mutate(spec_dict(), data) if data.draw(st.booleans()) else data.draw(st.binary(max_size=500))
    (run / artifacts.RUN_SPEC).write_bytes(body)
    try:
        spec = artifacts.read_run_spec(run)
    except AcademicEvalError as e:
        assert artifacts.RUN_SPEC in str(e) and "\n" not in str(e)
        return
    assert spec is None or isinstance(spec, RunSpec)


@SETTINGS
@given(data=st.data())
def test_load_run_whatever_the_files(tmp_path: Path, data: st.DataObject) -> None:
    run = fresh(tmp_path)
    for name, base in ((artifacts.RUN_SPEC, spec_dict()), ("title-zero-shot.jsonl", RECORD), (artifacts.SCORES, SCORE)):
        choice = data.draw(st.sampled_from(["good", "mutated", "bytes", "missing", "directory"]))
        p = run / name
        if choice == "good":
            p.write_bytes(json.dumps(base).encode() + b"\n")
        elif choice == "mutated":
            p.write_bytes(mutate(base, data) + b"\n")
        elif choice == "bytes":
            p.write_bytes(data.draw(st.binary(max_size=300)))
        elif choice == "directory":
            p.mkdir()
    try:
        rd = artifacts.load_run(run)
    except AcademicEvalError as e:
        assert "\n" not in str(e)
        return
    assert isinstance(rd.spec, RunSpec)


@SETTINGS
@given(data=st.data())
def test_round_manifest_reader(tmp_path: Path, data: st.DataObject) -> None:
    rnd = fresh(tmp_path)
    base = {"round": "r", "created_at": "2026-01-01", "package_version": "0", "seed": 0, "files": {}, "configs": {}}
    body = mutate(base, data) if data.draw(st.booleans()) else data.draw(st.binary(max_size=500))
    (rnd / artifacts.MANIFEST).write_bytes(body)
    try:
        loaded = artifacts.load_round(rnd)
        list(loaded.samples())
    except AcademicEvalError as e:
        assert "\n" not in str(e)


def test_a_directory_where_a_run_file_belongs(tmp_path: Path) -> None:
    """Found by the properties above: each of these crashed with IsADirectoryError."""
    run = tmp_path / "run"
    run.mkdir()
    (run / artifacts.RUN_SPEC).write_text(json.dumps(spec_dict()))
    (run / artifacts.SCORES).mkdir()
    (run / "title-zero-shot.jsonl").mkdir()
    rd = artifacts.load_run(run)
    assert sorted(rd.bad_lines) == [
        "scores.jsonl: not a regular file (skipped)",
        "title-zero-shot.jsonl: not a regular file (skipped)",
    ]
    with pytest.raises(artifacts.ArtifactError, match=r"cannot append to scores\.jsonl"):
        artifacts.append_scores(run, [ScoreRecord.model_validate(SCORE)])
    writer = artifacts.RecordWriter(run)
    with pytest.raises(artifacts.ArtifactError, match=r"cannot append to title-zero-shot\.jsonl"):
        writer.append(RunRecord.model_validate(RECORD))
    writer.close()
    (run / artifacts.RUN_SPEC).unlink()
    (run / artifacts.RUN_SPEC).mkdir()
    with pytest.raises(artifacts.ArtifactError, match=r"run\.json is not a regular file"):
        artifacts.read_run_spec(run)
