"""The one round publisher (`store.publisher`): every command that writes a round or a release refuses what it
must not touch, replaces only its own output, leaves nothing behind when it fails, and repairs a killed replace.

Issue 26.1 (`release --force` deleted the workspace), 26.2 (an import over an existing round name destroyed it)
and 28.4 (one overwrite policy; empty or failed outputs leave nothing behind), on real L-Eval, ElaipBench and
SCALAR data from the corpus.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.store.artifacts import MANIFEST, ArtifactError, load_round, write_manifest
from academiceval.store.models import ConfigInfo, RoundManifest, SplitWindows
from academiceval.store.publisher import EmptyOutputError, publishing

ROUND = "demo"


def cli(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(app, [str(a) for a in args])
    return r.exit_code, r.output


def tree(d: Path) -> dict[str, bytes]:
    """Every file under `d` with its bytes (what "nothing changed" compares)."""
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture()
def home(corpus: Path, tmp_path: Path) -> Path:
    """A workspace holding an L-Eval round `demo` (the real TPO task file) and a file of the user's."""
    h = tmp_path / "ws"
    code, out = cli("leval", "import", corpus / "leval" / "LEval-data", "--round", ROUND, "--tasks", "tpo", "--home", h)
    assert code == 0, out
    (h / "notes.txt").write_text("the user's own file\n")
    return h


@pytest.fixture()
def elaip_rows(corpus: Path, tmp_path: Path) -> Path:
    """ElaipBench-format rows on a real paper (unarXive sample), as `make_peers.sh` writes them."""
    c = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    d = json.loads(c.read_text(encoding="utf-8").splitlines()[0])
    paper = "\n\n".join(p["text"] for p in d["body_text"])
    sents = [s for s in paper.split(". ") if len(s.split()) > 8]
    rows = []
    for i, (q, a) in enumerate([("SA-MCQ", "A"), ("MA-MCQ", "AC"), ("SA-MCQ", "D")]):
        opts = "\n".join(f"{x}. option {x.lower()}: {sents[i + 10][:60]}" for x in "ABCD")
        rows.append(
            {"paper_id": "2212.01234", "question_type": q, "question": f"Which holds? ({i})\n{opts}", "answer": a}
            | {"relevant_passage": sents[i], "paper_content": paper}
        )
    p = tmp_path / "elabench.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_release_force_never_deletes_the_workspace_or_the_round(home: Path, tmp_path: Path) -> None:
    before = tree(home)
    for out in (home, home.parent, home / "rounds" / ROUND, home / "runs" / "x", home / "rounds" / ROUND / "sub"):
        code, msg = cli("release", ROUND, out, "--home", home, "--force")
        assert code == 2, (out, msg)
        assert "workspace" in msg or "reads" in msg, msg
    assert tree(home) == before  # database, round, the user's file: all as they were
    assert not list(home.parent.glob(".*publishing*"))

    out = tmp_path / "release"
    assert cli("release", ROUND, out, "--home", home)[0] == 0
    load_round(out)
    code, msg = cli("release", ROUND, out, "--home", home)
    assert code == 2 and "already holds files" in msg
    assert cli("release", ROUND, out, "--home", home, "--with-labels", "--force")[0] == 0
    (out / "mine.txt").write_text("not academiceval's")
    code, msg = cli("release", ROUND, out, "--home", home, "--force")
    assert code == 2 and "did not write" in msg and (out / "mine.txt").is_file()
    # a release may go where rounds go (it loads like a round), never over the round it reads
    assert cli("release", ROUND, home / "rounds" / "demo-public", "--home", home)[0] == 0


def test_importing_over_an_existing_round_is_refused_unless_forced(home: Path, corpus: Path, elaip_rows: Path) -> None:
    rdir = home / "rounds" / ROUND
    before = tree(rdir)
    scalar = sorted((corpus / "samples" / "scalar_questions" / "easy").glob("*.json"))[:3]
    attempts = [
        ("cloze", "import", *scalar, "--round", ROUND, "--level", "easy"),
        ("elaip", "import", elaip_rows, "--round", ROUND),
        ("leval", "import", corpus / "leval" / "LEval-data", "--round", ROUND, "--tasks", "quality"),
        ("cloze", "build", "--round", ROUND),
    ]
    for args in attempts:
        code, msg = cli(*args, "--home", home)
        assert code == 2 and "already holds files" in msg, (args, msg)
    assert tree(rdir) == before

    # --force replaces the round as a whole: no file of the old round is left behind
    code, msg = cli("elaip", "import", elaip_rows, "--round", ROUND, "--home", home, "--force")
    assert code == 0, msg
    loaded = load_round(rdir)
    assert loaded.configs() == ["elaipbench-full"]
    assert sorted(tree(rdir)) == sorted([*loaded.manifest.files, MANIFEST])
    assert not list((home / "rounds").glob(".*"))  # no staging or replaced directory remains
    # --force never replaces what academiceval did not write
    (rdir / "notes.md").write_text("mine")
    code, msg = cli(
        "leval",
        "import",
        corpus / "leval" / "LEval-data",
        "--round",
        ROUND,
        "--tasks",
        "tpo",
        "--home",
        home,
        "--force",
    )
    assert code == 2 and "did not write" in msg and (rdir / "notes.md").is_file()
    # an input is never a destination
    code, msg = cli("leval", "import", corpus / "leval" / "LEval-data", "--out", corpus / "leval", "--home", home)
    assert code == 2 and "reads" in msg


def test_empty_or_failed_outputs_leave_nothing_behind(tmp_path: Path) -> None:
    h = tmp_path / "empty-ws"
    bad = tmp_path / "cloze_examples_easy"
    bad.mkdir()
    (bad / "2410.00001_1.json").write_text(json.dumps({"question": "no candidates"}))
    code, msg = cli("cloze", "import", bad, "--round", "c", "--home", h)
    assert code == 1 and "nothing was written" in msg
    code, msg = cli("cloze", "build", "--round", "c", "--home", h)  # a workspace without papers
    assert code == 2 and "no sample" in msg, msg
    assert not (h / "rounds" / "c").exists() and not list((h / "rounds").glob(".*"))


def _round_files(d: Path, name: str, samples: int = 1) -> None:
    (d / "data.txt").write_text(f"{name}\n")
    info = ConfigInfo(task="title", setting="zero-shot", setting_name="title-zero-shot", counts={"test": samples})
    manifest = RoundManifest(
        round=name, created_at="2026-01-01T00:00:00+00:00", package_version="test", seed=0,
        windows=SplitWindows(), configs={info.setting_name: info}, counts={info.setting_name: dict(info.counts)},
    )  # fmt: skip
    write_manifest(d, manifest)


def test_a_failed_or_killed_replace_keeps_the_old_round(tmp_path: Path) -> None:
    dest = tmp_path / "rounds" / "r"
    with publishing(dest) as tmp:
        _round_files(tmp, "old")
    old = tree(dest)
    with pytest.raises(RuntimeError), publishing(dest, force=True) as tmp:  # the writer fails half-way
        _round_files(tmp, "new")
        raise RuntimeError("disk full")
    assert tree(dest) == old and not list(dest.parent.glob(".*"))
    with pytest.raises(EmptyOutputError), publishing(dest, force=True) as tmp:  # a round without samples
        _round_files(tmp, "new", samples=0)
    assert tree(dest) == old

    # killed between the two renames of a replace: the old round aside, the new one staged, no round in place
    aside = dest.parent / ".r.replaced-0badc0de"
    dest.rename(aside)
    stale = dest.parent / ".r.publishing-999999999-deadbeef"
    stale.mkdir()
    (stale / "half.txt").write_text("x")
    with pytest.raises(ArtifactError, match="already holds files"), publishing(dest) as tmp:
        pass  # the next publish puts the old round back first, then refuses to replace it without --force
    assert tree(dest) == old and not aside.exists() and not stale.exists()
    with publishing(dest, force=True) as tmp:
        _round_files(tmp, "new")
    assert (dest / "data.txt").read_text() == "new\n"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["r"]


def test_an_empty_directory_made_for_the_release_is_used(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    dest.mkdir()
    with publishing(dest, what="release") as tmp:
        _round_files(tmp, "x")
    assert load_round(dest).name == "x"
    shutil.rmtree(dest)
    dest.write_text("a file")
    with pytest.raises(ArtifactError, match="is a file"), publishing(dest) as tmp:
        _round_files(tmp, "x")
