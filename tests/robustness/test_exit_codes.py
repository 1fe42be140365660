"""Exit status rule (issue 10): every error a user can meet ends as one line, with exit code 2 for bad input and 1
for a failure while working. The error class decides (`exit_code`); the commands only call `fail(err)`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.common import fail
from academiceval.cli.main import app
from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.models import errors as model_errors
from academiceval.papers import errors as paper_errors
from academiceval.rounds.leakage import LeakageError
from academiceval.scores.rescore import ScoreError
from academiceval.sources import errors as source_errors
from academiceval.store.artifacts import ArtifactError, RoundIntegrityError

BAD_INPUT = [
    ConfigError,
    ArtifactError,
    RoundIntegrityError,
    model_errors.MissingAPIKeyError,
    model_errors.UnknownModelError,
    model_errors.AuthError,
    source_errors.InvalidArxivIdError,
    source_errors.UnknownIdError,
    source_errors.QuerySyntaxError,
    source_errors.SourceNotFoundError,
    source_errors.SourceRequestError,
    source_errors.UnsafePathError,
    paper_errors.NotAPdfError,
    paper_errors.EncryptedPdfError,
    ScoreError,
]
FAILURES = [
    AcademicEvalError,
    source_errors.SourceError,
    source_errors.RetriesExhaustedError,
    source_errors.HTTPStatusError,
    model_errors.BackendError,
    model_errors.ServerError,
    model_errors.ConnectionFailedError,
    paper_errors.IngestBatchError,
    LeakageError,
]


@pytest.mark.parametrize("cls", BAD_INPUT, ids=lambda c: c.__name__)
def test_bad_input_classes_exit_2(cls: type[AcademicEvalError]) -> None:
    assert cls.exit_code == 2
    assert fail(cls("x", source="here", hint="do this")).exit_code == 2


@pytest.mark.parametrize("cls", FAILURES, ids=lambda c: c.__name__)
def test_failure_classes_exit_1(cls: type[AcademicEvalError]) -> None:
    assert cls.exit_code == 1
    assert fail(cls("x")).exit_code == 1


def test_fail_given_a_message_or_a_foreign_exception_is_bad_input() -> None:
    assert fail("--x 3: must be above 5").exit_code == 2
    assert fail(ValueError("not a number")).exit_code == 2
    assert fail("explicit", code=1).exit_code == 1


def _bad_input_cases(tmp: Path) -> dict[str, list[str]]:
    home = str(tmp / "ws")
    nope = str(tmp / "nope")
    return {
        "ingest": ["ingest", nope + ".pdf", "--home", home],
        "import": ["import", nope + ".bib", "--home", home],
        "collect": ["collect", "--source", nope, "--seed-author", "A B", "--home", home],
        "update": ["update", "--source", nope, "--since", "April 2018", "--home", home],
        "stats": ["stats", "nosuchround", "--home", home],
        "audit": ["audit", "nosuchround", "--home", home],
        "run": ["run", "nosuchround", "--model", "echo", "--home", home],
        "score": ["score", nope, "--home", home],
        "report": ["report", "--round", "nosuchround", "--home", home],
        "compare": ["compare", nope, nope + "2", "--home", home],
        "mirror": ["mirror", "index", nope, "--home", home],
        "score-predictions": ["score-predictions", nope, "--format", "nonsense"],
        "judge-length-control": ["judge-length-control", nope],
        "release": ["release", "nosuchround", str(tmp / "out"), "--home", home],
    }


@pytest.mark.parametrize(
    "command",
    [
        "ingest",
        "import",
        "collect",
        "update",
        "stats",
        "audit",
        "run",
        "score",
        "report",
        "compare",
        "mirror",
        "score-predictions",
        "judge-length-control",
        "release",
    ],
)
def test_bad_input_exits_2_with_one_line(command: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, _bad_input_cases(tmp_path)[command])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_network_failure_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`collect` against a server that refuses connections: a failure while working, not bad input."""
    from academiceval.sources.client import ArxivClient

    init = ArxivClient.__init__

    def no_retries(self, *a, **kw) -> None:  # the retries themselves are tested in tests/sources
        init(self, *a, **{**kw, "max_retries": 0})

    monkeypatch.setattr(ArxivClient, "__init__", no_retries)
    argv = ["collect", "--source", "arxiv", "--api-url", "http://127.0.0.1:9/api/query", "--min-interval", "0"]
    argv += ["--seed-author", "A B", "--home", str(tmp_path / "ws")]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output


def test_ingest_with_nothing_usable_exits_1(tmp_path: Path) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "x.pdf").write_text("not a pdf")
    res = CliRunner().invoke(app, ["ingest", str(pdfs), "--home", str(tmp_path / "ws")])
    assert res.exit_code == 1, res.output
    assert "no file was ingested successfully" in res.output
