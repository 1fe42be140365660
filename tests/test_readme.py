"""The README's examples as tests, so they cannot rot (issue 14).

- every ```python block runs, in a fresh directory laid out like the checkout's (`../shared/corpus` beside it);
- every `academiceval ...` command in a ```bash / ```console block parses (command, options, values);
- the cheap ones run for real after a small round named `demo` (the round `academiceval demo` builds) is in
  the workspace: baselines, rouge-l scoring, stats, report, release, running the release.
"""

from __future__ import annotations

import glob
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
CHEAP = ("run", "stats", "report", "release", "score", "export")
COSTLY_OPTIONS = ("--metric-arg", "judge", "openai/", "hf/", "--rag", "--after-cutoff")
# lines that need lm_eval's output (import it, score it): tests/integrations/test_lmeval.py runs the same commands
NEEDS_LM_EVAL = ("lm-eval import", "runs/demo/lm-eval__")


def blocks(lang: tuple[str, ...]) -> list[str]:
    return [body for kind, body in BLOCK.findall(README.read_text(encoding="utf-8")) if kind in lang]


def console_outputs() -> dict[str, list[str]]:
    """The output lines the README prints under each `$ academiceval ...` line of its console blocks (README
    annotations left out: a trailing `   # ...` comment, a line that starts with `# `, an elision mark `…`)."""
    out: dict[str, list[str]] = {}
    for body in blocks(("console",)):
        current: list[str] | None = None
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            if line.startswith("$ "):
                current = out.setdefault(line[2:].split("  #")[0].strip(), [])
                continue
            text = line.split("   #")[0].rstrip()
            if current is not None and text.strip() and text.strip() != "…" and not is_annotation(text):
                current.append(text)
    return out


def is_annotation(line: str) -> bool:
    """A README note inside a console block: a line starting with `# ` (no command prints one)."""
    return line.startswith("# ")


BORDER = re.compile(r"^[\s┏┓┗┛┡┩└┘━─┳┻╇┴┼┬+|=-]*$")  # a table's rule lines: no content


def shape(line: str) -> str:
    """What may not drift in a printed line: its words and layout, not its values (numbers, dates and an empty
    value's dash become #; table rules and padding one `|` / one space)."""
    line = re.sub(r"[┃│]", "|", line)
    line = re.sub(r"\d{4}-\d{2}(-\d{2})?", "\x00", line)  # a date, or a range of two: one value
    line = re.sub(r"\x00\s*…\s*\x00", "\x00", line).replace("…", "")
    line = re.sub(r"\d[\d,.]*|—|\x00", "#", line)
    return re.sub(r"\s+", " ", line.replace("|", " | ")).strip()


def printed_shapes(lines: list[str]) -> list[str]:
    """Shapes of printed lines, as compared: every line except a table's data rows and rules; a table's header,
    which a narrow terminal folds over several lines ("erro" / "rs"), becomes one line of its column names with
    their spaces taken out (where a name folds depends on the width and on the rows). Data rows are left out:
    they name configs of the README's round, not of the small test round."""
    out: list[str] = []
    header: list[list[str]] = []  # the header lines of the table being read (rich: between ┏ and ┡)
    in_table = in_note = False
    for ln in lines:
        # a note or warning is about the data (a low-n split of this round), with its folded lines: not compared
        if ln.startswith(("note:", "warning:")):
            in_note = True
            continue
        if in_note and not BORDER.match(ln) and not shape(ln).startswith("|"):
            continue
        in_note = False
        if BORDER.match(ln):
            if header:  # the rule under a header: the header is complete
                cols = ["".join(parts).replace(" ", "") for parts in zip(*header, strict=False)]
                out.append("| " + " | ".join(cols) + " |")
                header = []
            continue
        s = shape(ln)
        is_row = s.startswith("|")
        if "┃" in ln:  # a rich header line: its cells by position (an empty cell stays a cell)
            cells = ln.split("┃")
            # a table too wide for the terminal is printed without its outer frame: no edge cell to drop then
            cells = cells[1 if ln.startswith("┃") else 0 : -1 if ln.endswith("┃") else None]
            header.append([re.sub(r"\d[\d,.]*", "#", c.strip()) for c in cells])
        elif is_row and not in_table:  # a plain table's first row: its header
            out.append("| " + " | ".join(c.replace(" ", "") for c in s.strip("| ").split(" | ")) + " |")
        elif not is_row:
            out.append(s)
        in_table = is_row
    return out


def commands() -> list[str]:
    """`academiceval ...` lines of the shell blocks (continuations joined, prompts and comments dropped)."""
    out = []
    for body in blocks(("bash", "console")):
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            if line.startswith("academiceval "):
                out.append(line.split("  #")[0].split(" # ")[0].strip())
    return out


@pytest.fixture()
def checkout(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/work is the cwd; tmp/shared/corpus is the corpus (README paths are relative to the checkout)."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "corpus").symlink_to(corpus)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("ACADEMICEVAL_HOME", raising=False)
    return work


def test_readme_has_examples() -> None:
    assert blocks(("python",)) and len(commands()) >= 15


@pytest.mark.parametrize("index", range(len(blocks(("python",)))))
def test_python_block_runs(index: int, checkout: Path) -> None:
    code = blocks(("python",))[index]
    exec(compile(code, f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})


def _parse(cmd: object, args: list[str]) -> None:
    """Resolve subcommands and parse options as click would, without running anything."""
    ctx = cmd.make_context("academiceval", list(args))  # type: ignore[attr-defined]
    while hasattr(cmd, "resolve_command"):
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not rest:
            break
        name, cmd, rest = cmd.resolve_command(ctx, rest)  # type: ignore[attr-defined]
        ctx = cmd.make_context(name, rest, parent=ctx)  # type: ignore[attr-defined]


@pytest.mark.parametrize("line", commands())
def test_shell_command_parses(line: str) -> None:
    from academiceval.cli.main import command

    _parse(command(), shlex.split(line)[1:])


def test_cheap_commands_run_after_the_demo_round(checkout: Path, corpus: Path) -> None:
    """README examples use the round the demo builds (`demo`); the cheap ones run on a small real round."""
    from academiceval.cli.main import app
    from academiceval.store.artifacts import Layout, load_round
    from academiceval.testing.sample_round import write_round, write_sample_round

    # train / val / test by date, as the demo's round (a release publishes train and val, withholds test)
    tmp = write_sample_round(corpus, checkout.parent / "sample", name="demo", max_papers=6, body_chars=2000)
    by_config = {}
    for config in load_round(tmp).configs():
        rows = sorted(load_round(tmp).samples(config), key=lambda r: (r.published, r.arxiv_id))
        splits = ["train"] * (len(rows) - 4) + ["val"] * 2 + ["test"] * 2
        by_config[config] = [r.model_copy(update={"split": sp}) for r, sp in zip(rows, splits, strict=True)]
    write_round(Layout.of(checkout / "academiceval-data").round_dir("demo"), "demo", by_config)
    ran, shown = [], set()
    for line in commands():
        args = shlex.split(line)[1:]
        if args[0] not in CHEAP or any(c in line for c in (*COSTLY_OPTIONS, *NEEDS_LM_EVAL)) or "--force" in args:
            continue
        if not any(a == "demo" or a.startswith(("demo-", "academiceval-data/runs/demo/")) for a in args[1:]):
            continue  # a session that builds its own round first (e.g. the lab list): parsed above, not run here
        expanded = [m for a in args for m in (sorted(glob.glob(a)) if "*" in a else [a])]
        res = CliRunner().invoke(app, expanded, env={"COLUMNS": "200"})
        assert res.exit_code == 0, f"{line}\n{res.output}"
        ran.append(args[0])
        # the README's printed output of this command has the shape a real run prints (issue 28, item 6)
        printed = res.output.replace(f"{checkout}/", "")  # the README shows paths relative to the checkout
        real = set(printed_shapes(printed.splitlines()))
        stale = [s for s in printed_shapes(console_outputs().get(line, [])) if s not in real]
        assert not stale, f"README output of `{line}` is stale:\n" + "\n".join(stale) + f"\n---\n{res.output}"
        shown.update({line} if console_outputs().get(line) else set())
    assert {"run", "stats", "report", "release", "export"} <= set(ran), ran
    assert shown, "no README console output was compared with a real run"
