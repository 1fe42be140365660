"""Every numeric option of every command is validated at the CLI (issue 10, finding 10): `--timeout inf` used to
fail every sample with OverflowError and write `Infinity` into run.json; 0, -1 and nan were accepted silently.

The walk below finds the options itself, so an option added later without a validator fails here."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from academiceval.cli.main import app

# options where any integer is meaningful (a seed), or whose domain is checked where it is used
ANY_INTEGER = {"--seed", "--layer"}


def _base(annotation: object) -> object:
    args = getattr(annotation, "__args__", None)
    if args:  # int | None
        return next((a for a in args if a is not type(None)), None)
    return annotation


def numeric_options() -> list[tuple[str, str, type, object]]:
    """(command path, option name, int or float, default) for every numeric option of every command."""
    out: list[tuple[str, str, type, object]] = []

    def walk(cmd, path: str) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, f"{path} {name}".strip())
            return
        for p in cmd.params:
            opts = getattr(p, "opts", [])
            kind = _base(p.type_descriptor.annotation)
            if opts and opts[0].startswith("-") and kind in (int, float):
                out.append((path, max(opts, key=len), kind, p.default))

    walk(typer.main.get_command(app), "")
    return out


OPTIONS = numeric_options()


def invoke(cmd: str, option: str, raw: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, [*cmd.split(), option, raw])
    return res.exit_code, res.output


def test_the_walk_finds_the_options() -> None:
    names = {(c, o) for c, o, _, _ in OPTIONS}
    assert {("run", "--timeout"), ("run", "--limit"), ("run", "--max-wait"), ("mirror serve", "--port")} <= names
    assert len(OPTIONS) >= 20


@pytest.mark.parametrize(("cmd", "option", "kind", "default"), OPTIONS, ids=[f"{c}:{o}" for c, o, _, _ in OPTIONS])
def test_every_numeric_option_refuses_nonsense(cmd: str, option: str, kind: type, default, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # were a value accepted, the command would start in an empty directory
    bad = ["nan", "inf", "-inf", "-1"] if kind is float else ["-1", "nan", "1.5"]
    if option in ANY_INTEGER:
        bad = ["nan", "1.5"]
    for raw in bad:
        code, out = invoke(cmd, option, raw)
        assert code == 2, f"{cmd} {option} {raw} was accepted: {out}"
        assert "Traceback" not in out and option in out, out
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_run_timeout_nonsense_is_one_line_and_exit_2(value: str, tmp_path) -> None:
    res = CliRunner().invoke(app, ["run", "x", "--model", "baseline/lead", "--timeout", value, "--home", str(tmp_path)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--timeout" in lines[0] and "finite number of seconds above 0" in lines[0]
    assert "Traceback" not in res.output and not (tmp_path / "runs").exists()


def test_run_max_wait_default_is_the_retry_policy_default() -> None:
    from academiceval.cli.run import DEFAULT_MAX_WAIT_S
    from academiceval.models.retry import DEFAULT_MAX_WAIT_S as POLICY_DEFAULT

    assert DEFAULT_MAX_WAIT_S == POLICY_DEFAULT
