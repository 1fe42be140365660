"""The catalogue: bad workspace files × every command that reads that kind of file.

Each bad input is generated here (not only the ones issue 10 found: deep nesting, a BOM, a directory where a
file belongs, a 4 MB line, wrong JSON types, ...). It is planted in a copy of a small real workspace (a round of
real paper text, a baseline run, its ROUGE scores) and each command that reads that artifact runs on it through
the real entry point. The rule: the command ends normally (a bad line skipped), or with exit status 1/2 and
exactly one `error:` line that names the file or its directory — never a traceback.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from academiceval.cli.main import main

from .conftest import run_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RNG = random.Random(10)
DEEP = b"[" * 200_000 + b"]" * 200_000  # json.loads: RecursionError, not ValueError


# ---- the catalogue ------------------------------------------------------------------------------------------
# whole-document damage (run.json, manifest.json): bytes -> bytes
DOC_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda b: b"",
    "binary": lambda b: RNG.randbytes(4096),
    "truncated": lambda b: b[: len(b) // 2],
    "bad-utf8": lambda b: b.replace(b'"', b'"\xff\xfe', 3),
    "nul-bytes": lambda b: b[:20] + b"\x00" * 50 + b[20:],
    "bom": lambda b: b"\xef\xbb\xbf" + b,
    "json-list": lambda b: b"[]",
    "json-string": lambda b: b'"run"',
    "json-number": lambda b: b"42",
    "json-null": lambda b: b"null",
    "wrong-types": lambda b: json.dumps({k: [1, {"x": None}] for k in json.loads(b)}).encode(),
    "missing-fields": lambda b: json.dumps({"unexpected": True}).encode(),
    "deep-nesting": lambda b: DEEP,
    "huge": lambda b: b'{"x": "' + b"a" * 4_000_000 + b'"}',
    "nan-infinity": lambda b: b.replace(b"}", b', "nan_field": NaN, "inf_field": Infinity}', 1),
}
# one-line damage in a JSON-lines file (records, scores): the other lines must survive
LINE_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "bad-utf8-line": lambda line: line[:30] + b"\xff\xfe\xfd" + line[30:],
    "nul-line": lambda line: line[:30] + b"\x00" + line[30:],
    "truncated-line": lambda line: line[: len(line) // 2],
    "binary-line": lambda line: RNG.randbytes(300).replace(b"\n", b" "),
    "json-list-line": lambda line: b"[1, 2, 3]",
    "json-null-line": lambda line: b"null",
    "wrong-types-line": lambda line: json.dumps({k: [1] for k in json.loads(line)}).encode(),
    "deep-nesting-line": lambda line: DEEP,
    "huge-line": lambda line: b'{"sample_id": "' + b"a" * 4_000_000 + b'"}',
    "crlf": lambda line: line + b"\r",
    "bom-line": lambda line: b"\xef\xbb\xbf" + line,
    "empty-object-line": lambda line: b"{}",
}
# damage to the file itself
FILE_DAMAGE = ("directory", "missing", "empty-file")


@pytest.fixture(scope="module")
def master(robust_round_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with a round, a baseline run of it and ROUGE-L scores."""
    ws = tmp_path_factory.mktemp("catalogue") / "ws"
    rnd = ws / "rounds" / robust_round_master.name
    shutil.copytree(robust_round_master, rnd)
    run = run_model(ws, rnd, "baseline/lead").run_dir
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs

    score_runs([run], ScoreConfig(metrics=["rouge-l"]), home=ws)
    return ws


def the_run(ws: Path) -> Path:
    return next(p.parent for p in (ws / "runs").rglob("run.json"))


def the_round(ws: Path) -> Path:
    return next(p.parent for p in (ws / "rounds").rglob("manifest.json"))


ARTIFACTS: dict[str, Callable[[Path], Path]] = {
    "run-spec": lambda ws: the_run(ws) / "run.json",
    "records": lambda ws: sorted(p for p in the_run(ws).glob("*.jsonl") if p.name != "scores.jsonl")[0],
    "scores": lambda ws: the_run(ws) / "scores.jsonl",
    "manifest": lambda ws: the_round(ws) / "manifest.json",
    "response-cache": lambda ws: ws / "cache" / "responses.sqlite",
}
COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "run": lambda ws: ["run", the_round(ws).name, "--model", "baseline/lead", "--home", str(ws)],
    "score": lambda ws: ["score", str(the_run(ws)), "--metrics", "rouge-l", "--home", str(ws)],
    "report": lambda ws: ["report", "--home", str(ws), "--examples", "0"],
    "stats": lambda ws: ["stats", the_round(ws).name, "--home", str(ws)],
    # a second run of the round, so that every sample is looked up in the response cache
    "run-fresh": lambda ws: [
        "run",
        the_round(ws).name,
        "--model",
        "baseline/lead",
        "--run-name",
        "again",
        "--home",
        str(ws),
    ],
}
READERS = {  # which commands read which artifact
    "run-spec": ("run", "score", "report"),
    "records": ("run", "score", "report"),
    "scores": ("score", "report"),
    "manifest": ("run", "score", "report", "stats"),
    "response-cache": ("run-fresh",),
}
JSONL = {"records", "scores"}


def cases() -> list[tuple[str, str, str]]:
    out = []
    for artifact, commands in READERS.items():
        damages = [*LINE_DAMAGE] if artifact in JSONL else [*DOC_DAMAGE]
        if artifact == "response-cache":  # a binary file: every byte-level damage (the JSON rewrites need JSON)
            damages = [d for d in damages if d != "wrong-types"]
        for damage in [*damages, *FILE_DAMAGE]:
            for command in commands:
                out.append((artifact, damage, command))
    return out


CASES = cases()


def plant(ws: Path, artifact: str, damage: str) -> Path:
    path = ARTIFACTS[artifact](ws)
    if damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "missing":
        path.unlink()
    elif damage == "empty-file":
        path.write_bytes(b"")
    elif damage in DOC_DAMAGE:
        path.write_bytes(DOC_DAMAGE[damage](path.read_bytes()))
    else:
        lines = path.read_bytes().splitlines()
        mid = len(lines) // 2
        lines[mid] = LINE_DAMAGE[damage](lines[mid])
        path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def invoke(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The console entry point in-process (its last-resort handlers included); output from capsys."""
    old = sys.argv
    sys.argv = ["academiceval", *argv]
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out + out.err


def test_catalogue_size() -> None:
    inputs = len(DOC_DAMAGE) + len(LINE_DAMAGE) + len(FILE_DAMAGE)
    print(f"catalogue: {inputs} bad inputs, {len(CASES)} (artifact, input, command) cases")
    assert inputs >= 30 and len(CASES) >= 200


@pytest.mark.parametrize(("artifact", "damage", "command"), CASES, ids=["-".join(c) for c in CASES])
def test_bad_input_is_a_clear_error_or_a_skipped_line(master: Path, tmp_path: Path, capsys, artifact, damage, command):
    ws = tmp_path / "ws"
    shutil.copytree(master, ws, symlinks=True)
    argv = COMMANDS[command](ws)  # before the damage (it may remove the file the paths are found from)
    path = plant(ws, artifact, damage)
    try:
        code, out = invoke(argv, capsys)
    except Exception as e:
        pytest.fail(f"{command} on {artifact}/{damage}: {type(e).__name__}: {str(e)[:300]}")
    assert "Traceback" not in out, out[-2000:]
    assert code in (0, 1, 2), (code, out[-500:])
    if code:
        errors = [ln for ln in out.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1, out[-1500:]
        names = {path.name, path.parent.name, the_run(master).name if artifact != "manifest" else path.parent.name}
        assert any(n in errors[0] for n in names), errors[0]
