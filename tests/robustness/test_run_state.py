"""A run's own state under damage: a corrupted response cache (finding 4), errors that must be retried by a
rerun once their cause is fixed (finding 12)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from academiceval.errors import ConfigError
from academiceval.models.base import Completion
from academiceval.models.cache import ResponseCache
from academiceval.models.errors import FINAL_ERROR_CODES, RETRY_ON_RERUN_CODES, is_final
from academiceval.models.retry import RetryPolicy

from .conftest import run_model, run_records

FAST = RetryPolicy(max_attempts=3, initial_s=0.001, max_backoff_s=0.004)


def damage(path: Path, how: str) -> None:
    data = path.read_bytes() if path.exists() else b""
    if how == "garbage":
        path.write_bytes(os.urandom(8192))
    elif how == "header":
        path.write_bytes(b"this is not an SQLite file at all" + data[33:])
    elif how == "truncated":
        path.write_bytes(data[: max(1, len(data) // 3)])
    elif how == "pages":  # a valid header, garbage from page 2 on
        page = int.from_bytes(data[16:18], "big") or 4096
        path.write_bytes(data[:page] + os.urandom(max(len(data) - page, 4 * page)))
    elif how == "empty-dir":
        path.unlink()
        path.mkdir()


def filled_cache(path: Path, n: int = 300) -> None:
    c = ResponseCache(path)
    for i in range(n):
        c.put(f"k{i}", {"backend": "b", "model": "m"}, f"sha{i}", Completion(text="answer " * 20))
    c.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["garbage", "header", "truncated", "pages"])
def test_damaged_cache_is_set_aside_and_work_goes_on(tmp_path: Path, how: str, caplog) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    filled_cache(path)
    damage(path, how)
    cache = ResponseCache(path)
    with caplog.at_level(logging.WARNING):
        for i in range(300):  # before: sqlite3.DatabaseError from the first query ("file is not a database")
            cache.get(f"k{i}")
        cache.put("new", {"backend": "b", "model": "m"}, "sha", Completion(text="fresh"))
        got = cache.get("new")
    cache.close()
    assert got is not None and got.text == "fresh"
    if cache.recovered:  # some damage (a truncated tail) can leave the rows SQLite can still read
        aside = Path(cache.recovered[0])
        assert aside.exists() and aside.name.startswith("responses.sqlite.corrupt-")
        assert "damaged" in caplog.text and "moved aside" in caplog.text
    assert ResponseCache(path).get("new") is not None


def test_a_run_goes_on_over_a_corrupted_cache(robust_round: Path, fake_server, tmp_path: Path, caplog) -> None:
    srv = fake_server()
    ws = tmp_path / "ws"
    cache = ws / "cache" / "responses.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"\x00garbage" * 1000)
    with caplog.at_level(logging.WARNING):
        s = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    assert s.total("errors") == 0 and s.total("done") == s.total("selected") > 0
    assert list(cache.parent.glob("responses.sqlite.corrupt-*")) and "moved aside" in caplog.text


def test_error_classification_is_complete() -> None:
    assert not FINAL_ERROR_CODES & RETRY_ON_RERUN_CODES
    assert is_final(None) and not is_final(None, "boom")
    for code in RETRY_ON_RERUN_CODES | {"some_future_code"}:
        assert not is_final(code, "x")
    for code in FINAL_ERROR_CODES:
        assert is_final(code, "x") and not is_final(code, "x", retryable=True)
    assert not is_final("rejected", "HTTP 401: Incorrect API key provided")  # records written before `auth`


@pytest.mark.parametrize("status", [401, 403, 429, 500, 503])
def test_after_every_request_failed_a_rerun_with_the_cause_fixed_retries_them(
    robust_round: Path, fake_server, tmp_path: Path, status: int
) -> None:
    # before: 401 was recorded as `rejected` (final); the rerun said `resumed` and sent nothing
    srv = fake_server(fail_all=status, retry_after_s=0.0)
    ws = tmp_path / "ws"
    first = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    n = first.total("selected")
    assert first.total("errors") == n
    codes = {r.error_code for r in run_records(first.run_dir).values()}
    assert codes == {"auth" if status in (401, 403) else "rate_limited" if status == 429 else "server_error"}
    srv.config.fail_all = None  # the key is fixed / the server is back
    sent = srv.stats.total
    second = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    assert second.total("errors") == 0 and second.total("already_done") == 0
    assert srv.stats.total > sent
    recs = run_records(second.run_dir)
    assert len(recs) == n and all(r.error is None and r.output for r in recs.values())
    third = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    assert third.total("already_done") == n  # final answers stay final


def test_final_errors_stay_final(robust_round: Path, fake_server, tmp_path: Path) -> None:
    srv = fake_server(permanent={"empty": 1.0})
    ws = tmp_path / "ws"
    first = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    sent = srv.stats.total
    again = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url, retry_policy=FAST)
    assert again.total("already_done") == first.total("selected") and srv.stats.total == sent


def test_cache_file_replaced_by_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    path.mkdir()
    with pytest.raises(ConfigError, match=r"cannot open the response cache.*--no-cache"):  # before: OperationalError
        ResponseCache(path).get("k")


@pytest.mark.timeout(120)
def test_cli_max_wait_gives_up_on_a_day_long_retry_after(robust_round: Path, fake_server, tmp_path: Path) -> None:
    # before: Retry-After 86400 → up to 5 x 300 s of silence per sample
    from typer.testing import CliRunner

    from academiceval.cli.main import app

    srv = fake_server(transient={"429": 1.0}, transient_attempts=99, retry_after_s=86400)
    home = tmp_path / "ws"
    args = ["run", str(robust_round), "--model", "openai/fake-model", "--base-url", srv.url, "--home", str(home)]
    res = CliRunner().invoke(app, [*args, "--max-wait", "30"])
    assert res.exit_code == 1, res.output  # issue 26 #9: failed requests are not answers; the run says it is incomplete
    assert "rate_limited" in res.output and "answers missing" in res.output
    assert srv.stats.total == len(srv.stats.by_prompt)  # one attempt per prompt: no wait was started
    recs = run_records(next((home / "runs").rglob("run.json")).parent)
    assert {r.error_code for r in recs.values()} == {"rate_limited"} and all(r.retryable for r in recs.values())
    assert "--max-wait" in CliRunner().invoke(app, ["run", "--help"]).output
