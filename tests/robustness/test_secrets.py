"""Secrets never stored (issue 26, finding 4 / item 6).

Before: a key inside `--base-url http://user:KEY@…` was stripped from `run.json`, but `run.lock` stored the whole
command line (world-readable, kept after a kill), and a key in `--judge-base-url` was written into every line of
`scores.jsonl`. The end-to-end test plants keys in every place a user can put one (user-info, query string, the
key variable itself), runs `run` (killed once, so the lock keeps its holder) → `run` → `score --metrics judge` →
`report` → `release` as real processes, and greps every byte written (SQLite files included) and every line the
commands printed. The unit tests pin the scrubber itself.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from academiceval.rounds.config import BuildConfig
from academiceval.runs.config import RunConfig
from academiceval.runs.lock import RunLock
from academiceval.scores.config import ScoreConfig
from academiceval.store.secrets import (
    MASK,
    is_secret_name,
    private_file,
    scrub,
    scrub_argv,
    scrub_headers,
    scrub_text,
    scrub_url,
)

# ---- the scrubber ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("http://user:KEY@127.0.0.1:8000/v1", f"http://{MASK}@127.0.0.1:8000/v1"),
        ("https://KEY@host/v1", f"https://{MASK}@host/v1"),  # a user name alone can be the key
        ("http://h/v1?api_key=KEY&api-version=2024-02", f"http://h/v1?api_key={MASK}&api-version=2024-02"),
        ("http://h/?key=KEY", f"http://h/?key={MASK}"),
        ("http://h/?token=KEY&limit=3", f"http://h/?token={MASK}&limit=3"),
        ("http://h/?apiKey=KEY", f"http://h/?apiKey={MASK}"),
        ("http://h/?X-Amz-Signature=KEY&X-Amz-Date=1", f"http://h/?X-Amz-Signature={MASK}&X-Amz-Date=1"),
        ("http://h/cb#access_token=KEY&state=1", f"http://h/cb#access_token={MASK}&state=1"),
        ("http://[::1:8000/?key=KEY", f"http://[::1:8000/?key={MASK}"),  # urllib refuses it; still scrubbed
        ("http://localhost:8000/v1", "http://localhost:8000/v1"),  # nothing secret: unchanged, byte for byte
        ("http://h/?max_tokens=5&q=a%20b", "http://h/?max_tokens=5&q=a%20b"),
    ],
)
def test_urls(raw: str, want: str) -> None:
    assert scrub_url(raw) == want
    assert scrub_text(f"at {raw} (retrying)") == f"at {want} (retrying)"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Authorization: Bearer KEYKEYKEYKEY", f"Authorization: Bearer {MASK}"),
        ("api-key: KEY", f"api-key: {MASK}"),
        ('{"x-api-key": "KEY"}', f'{{"x-api-key": "{MASK}"}}'),
        ("password=KEY user=bob", f"password={MASK} user=bob"),
        ("failed with Bearer abcdefgh12345", f"failed with Bearer {MASK}"),
        ("export sk-proj-abcdefghijklmnopqrstuv", f"export {MASK}"),
        ("hf_abcdefghijklmnopqrstuvwxyz", MASK),
        ("--api-key-env OPENAI_API_KEY max_tokens=5 tokenizer=bert", None),  # names, not secrets
    ],
)
def test_text(raw: str, want: str | None) -> None:
    assert scrub_text(raw) == (raw if want is None else want)


def test_names_are_matched_whole() -> None:
    secret = [
        "api_key",
        "apiKey",
        "X-Api-Key",
        "Authorization",
        "proxy-authorization",
        "key",
        "token",
        "hf_token",
        "access_token",
        "client_secret",
        "password",
        "X-Amz-Signature",
        "Cookie",
        "sig",
    ]
    plain = [
        "max_tokens",
        "input_tokens",
        "tokenizer",
        "api_key_env",
        "author_key",
        "sort_key",
        "monkey",
        "judge_base_url",
        "keywords",
        "signal",
        "code",
        "api-version",
    ]
    assert [n for n in secret if not is_secret_name(n)] == []
    assert [n for n in plain if is_secret_name(n)] == []


def test_structures_headers_and_argv() -> None:
    got = scrub(
        {
            "base_url": "http://u:KEY@h/v1",
            "headers": {"Authorization": "Bearer KEY", "Accept": "json"},
            "max_tokens": 5,
            "api_key_env": "OPENAI_API_KEY",
            "n": [{"token": "KEY"}, "http://h/?key=KEY"],
        }
    )
    assert "KEY" not in json.dumps(got).replace("OPENAI_API_KEY", "")
    assert got["max_tokens"] == 5 and got["api_key_env"] == "OPENAI_API_KEY" and got["headers"]["Accept"] == "json"
    assert scrub_headers({"api-key": "KEY", "Content-Type": "x"}) == {"api-key": MASK, "Content-Type": "x"}
    line = scrub_argv(["academiceval", "run", "--api-key", "KEY", "--base-url=http://a:KEY@h/", "-m", "x"])
    assert line == f"academiceval run --api-key {MASK} --base-url=http://{MASK}@h/ -m x"


_name = st.sampled_from(["api_key", "key", "token", "access_token", "X-Api-Key", "apiKey", "sig", "password"])
_plain = st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda s: not is_secret_name(s))
_secret = st.from_regex(r"[A-Za-z0-9_\-.~]{6,24}", fullmatch=True).map(lambda s: f"Zq9{s}")
_host = st.sampled_from(["127.0.0.1:8000", "localhost", "api.example.org", "[::1]:9000"])


@settings(max_examples=300, deadline=None)
@given(
    secret=_secret,
    name=_name,
    host=_host,
    before=st.lists(st.tuples(_plain, _plain), max_size=3),
    where=st.sampled_from(["password", "user", "query", "fragment"]),
    path=st.sampled_from(["", "/v1", "/a/b"]),
)
def test_a_planted_secret_never_survives(secret, name, host, before, where, path) -> None:
    params = "&".join(f"{k}={v}" for k, v in before)
    if where == "password":
        url = f"http://user:{secret}@{host}{path}?{params}"
    elif where == "user":
        url = f"https://{secret}@{host}{path}?{params}"
    elif where == "query":
        url = f"http://{host}{path}?{params}{'&' if params else ''}{name}={secret}"
    else:
        url = f"http://{host}{path}?{params}#{name}={secret}"
    for out in (scrub_url(url), scrub_text(f"see {url}."), json.dumps(scrub({"u": [url]})), scrub_argv(["x", url])):
        assert secret not in out
    once = scrub_url(url)
    assert scrub_url(once) == once  # idempotent
    for k, v in before:  # the rest is kept
        assert f"{k}={v}" in once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_scrubbing_never_raises_and_is_idempotent(text: str) -> None:
    once = scrub_text(text)
    assert scrub_text(once) == once


def test_stored_configs_are_scrubbed_whole() -> None:
    """`StrictConfig.stored()` is the form every stage config is kept in; any field of it is covered."""
    rc = RunConfig(model="openai/m", base_url="http://u:KEY1@h:1/v1?api_key=KEY2")
    sc = ScoreConfig(judge="openai/j", judge_base_url="http://h/v1?token=KEY3", against="http://x:KEY4@y/")
    bc = BuildConfig(previous="https://KEY5@host/round")
    stored = json.dumps([rc.stored(), sc.stored(), bc.stored()])
    assert not [k for k in ("KEY1", "KEY2", "KEY3", "KEY4", "KEY5") if k in stored]
    assert rc.stored()["base_url"] == f"http://{MASK}@h:1/v1?api_key={MASK}"
    assert rc.stored()["api_key_env"] == "OPENAI_API_KEY" and rc.stored()["model"] == "openai/m"


def test_lock_holder_is_scrubbed_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.lock").write_text("")
    os.chmod(run_dir / "run.lock", 0o644)  # left by an older version: tightened
    monkeypatch.setattr(sys, "argv", ["academiceval", "run", "r", "--base-url", "http://u:KEY1@h/v1?key=KEY2"])
    with RunLock(run_dir) as lock:
        text = lock.path.read_text()
        assert "KEY1" not in text and "KEY2" not in text and "--base-url http://***@h/v1?key=***" in text
        assert stat.S_IMODE(lock.path.stat().st_mode) == 0o600


def test_private_file_leaves_unopenable_paths_to_the_caller(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert private_file(tmp_path / "d") == tmp_path / "d"  # a directory: the caller's open reports it
    new = private_file(tmp_path / "f")
    assert stat.S_IMODE(new.stat().st_mode) == 0o600


# ---- end to end: every file a run + score + report + release writes ----------------------------------

KEYS = {
    "env": "sk-EnvPlantedKey0123456789",  # the key variable itself ($OPENAI_API_KEY)
    "userinfo": "UserinfoKey4242",  # http://user:KEY@host
    "query": "QueryKey8888",  # ?api_key=KEY
    "judge_user": "JudgeUserKey77",  # the judge's URL: https://KEY@host
    "judge_token": "JudgeTokenKey99",  # ...?token=KEY
}


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "academiceval.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _finish(proc: subprocess.Popen, printed: list[str]) -> None:
    out, _ = proc.communicate(timeout=300)
    printed.append(out)
    assert proc.returncode == 0, out


def _leaks(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        data = f.read_bytes()
        for what, key in KEYS.items():
            if key.encode() in data:
                found.setdefault(str(f.relative_to(root)), []).append(what)
    return found


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_no_planted_key_reaches_any_file_or_output(robust_round: Path, fake_server, tmp_path: Path) -> None:
    ws = robust_round.parent.parent
    srv = fake_server(api_key=KEYS["env"], latency_s=0.25)
    host = srv.url.split("://", 1)[1].split("/", 1)[0]
    url = f"http://user:{KEYS['userinfo']}@{host}/v1?api_key={KEYS['query']}"
    judge_url = f"http://{KEYS['judge_user']}@{host}/v1?token={KEYS['judge_token']}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        "NO_COLOR": "1",
        "OPENAI_API_KEY": KEYS["env"],
    }
    home = ["--home", str(ws)]
    run = ["run", robust_round.name, "--model", "openai/fake-model", "--base-url", url, "--max-connections", "2"]
    printed: list[str] = []

    # 1. killed mid-run: the lock keeps its holder (what a second process would name), scrubbed and private
    proc = _cli(*run, *home, env=env)
    run_dir = ws / "runs" / robust_round.name / "openai__fake-model"
    deadline = time.monotonic() + 120
    while not any(f.stat().st_size for f in run_dir.glob("*.jsonl")) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run wrote nothing"
        time.sleep(0.05)
    lock = run_dir / "run.lock"
    holder = json.loads(lock.read_text())
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert holder["pid"] == proc.pid and "--base-url http://***@" in holder["command"]
    assert json.loads(lock.read_text()) == holder  # kept after the kill
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600

    # 2. the rest of the chain, to the end
    _finish(_cli(*run, *home, env=env), printed)
    _finish(
        _cli(
            "score",
            str(run_dir),
            "--metrics",
            "judge,rouge-l",
            "--judge",
            "openai/fake-model",
            "--judge-base-url",
            judge_url,
            *home,
            env=env,
        ),
        printed,
    )
    _finish(_cli("report", "--round", robust_round.name, *home, env=env), printed)
    release = tmp_path / "release"
    _finish(_cli("release", robust_round.name, str(release), *home, env=env), printed)

    # the judge did run against the server with the key (so its URL and key were really used and stored)
    lines = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    judged = [r for r in lines if r["metric"].startswith("judge")]
    assert judged and all(r["config"]["judge_base_url"] == f"http://***@{host}/v1?token=***" for r in judged)
    assert srv.stats.auth_headers == [f"Bearer {KEYS['env']}"]

    assert _leaks(ws) == {}
    assert _leaks(release) == {}
    assert [k for k, v in KEYS.items() if any(v in out for out in printed)] == []
    cache = ws / "cache"
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in cache.iterdir() if f.name.startswith("responses")}
    assert modes and set(modes.values()) == {0o600}, modes
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
