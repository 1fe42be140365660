#!/usr/bin/env python3
"""Regenerate what the README's console blocks print, from a real run (issue 28, item 6).

    python scripts/readme_outputs.py [--corpus ../shared/corpus] [--workdir DIR] [--write]

Each ```console block of README.md is one session: in a fresh scratch checkout (DIR/blockN/work is the current
directory and DIR/blockN/shared/corpus points at the corpus, so the README's relative paths and the default
workspace `./academiceval-data` hold) every `$ academiceval ...` line runs in order, through the shell (globs
expand) with COLUMNS=120, offline. For each command the script prints the README's lines and the real ones
side by side in shape (numbers, dates and padding normalised, as `tests/test_readme.py` compares them) and
exits 1 when a shape differs. With `--write` it replaces the README's printed lines by the real ones, keeping:
no output where the README shows none, a trailing `   # note` on the new line of the same shape, and
parenthesised notes after the output; an output longer than 24 lines is cut with `…`; the corpus's and the
scratch checkout's absolute paths are written as the README's relative ones.

The test command checks the cheap commands' shapes on every run (`test_cheap_commands_run_after_the_demo_round`);
this script is how the numbers themselves are refreshed (a full demo session: ~10 minutes).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)
MAX_LINES = 24
PROGRESS_BAR = re.compile(r"━{10,}")  # a progress bar's last frame (a table's rules have corners)
TABLE_RULE = re.compile(r"[┏┓┡┩┳╇┗┛]")

sys.path.insert(0, str(ROOT / "tests"))
from test_readme import is_annotation, printed_shapes, shape  # noqa: E402  (one definition of "shape")


def sessions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, body) of every console block."""
    return [(m.start(1), m.end(1), m.group(1)) for m in BLOCK.finditer(text)]


def parse(body: str) -> list[tuple[list[str], list[str]]]:
    """[(command lines as written, printed lines)]: a command may continue over lines ending with a backslash."""
    out: list[tuple[list[str], list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd = [lines[i]]
            while cmd[-1].split("   #")[0].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd.append(lines[i])
            out.append((cmd, []))
        elif out:
            out[-1][1].append(lines[i])
        i += 1
    return out


def command_text(cmd: list[str]) -> str:
    joined = " ".join(ln.split("   #")[0].rstrip().removesuffix("\\").strip() for ln in cmd)
    return joined.removeprefix("$ ").strip()


def notes(printed: list[str]) -> tuple[dict[str, str], list[str]]:
    """README annotations: trailing comments by the shape of their line, and `# ` note lines (kept after the
    output)."""
    comments: dict[str, str] = {}
    paren: list[str] = []
    for ln in printed:
        if is_annotation(ln):
            paren.append(ln)
            continue
        text, sep, comment = ln.partition("   #")
        if sep:
            comments[shape(text)] = "#" + comment
    return comments, paren


def run(cmd: str, cwd: Path, exe: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ACADEMICEVAL_HOME"}
    env.update(COLUMNS="120", NO_COLOR="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TERM="dumb")
    line = str(exe) + cmd[len("academiceval") :]
    proc = subprocess.run(line, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  ! exit {proc.returncode}: {cmd}\n{proc.stderr[-2000:]}", file=sys.stderr)
    return proc.stdout + proc.stderr


def cleaned(output: str) -> list[str]:
    """The printed lines a reader sees: progress-bar frames and blank lines left out, trailing space cut."""
    lines = [ln.rstrip() for ln in output.splitlines()]
    return [ln for ln in lines if ln.strip() and not (PROGRESS_BAR.search(ln) and not TABLE_RULE.search(ln))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--block", type=int, action="append", help="only these console blocks (1 = the first)")
    ap.add_argument(
        "--reuse", action="store_true", help="use the outputs an earlier run saved in --workdir (same commands)"
    )
    ap.add_argument("--write", action="store_true", help="replace the README's printed lines by the real ones")
    args = ap.parse_args()
    exe = Path(sys.executable).parent / "academiceval"
    work_root = args.workdir or Path(tempfile.mkdtemp(prefix="readme-outputs-"))
    text = README.read_text(encoding="utf-8")
    pieces: list[str] = []
    pos = 0
    drift = 0
    for n, (start, end, body) in enumerate(sessions(text)):
        if args.block and n + 1 not in args.block:
            continue
        base = work_root / f"block{n + 1}"
        if not args.reuse:
            shutil.rmtree(base, ignore_errors=True)
            (base / "shared").mkdir(parents=True)
            (base / "shared" / "corpus").symlink_to(args.corpus.resolve())
            (base / "work").mkdir()
        new_body: list[str] = []
        n_cmd = 0
        for cmd, printed in parse(body):
            command = command_text(cmd)
            print(f"$ {command}", flush=True)
            n_cmd += 1
            saved = base / f"output{n_cmd:02d}.txt"
            if args.reuse and saved.is_file() and saved.read_text().split("\n", 1)[0] == f"$ {command}":
                raw = saved.read_text().split("\n", 1)[1]
            else:
                raw = run(command, base / "work", exe)
                saved.write_text(f"$ {command}\n{raw}")
            raw = raw.replace(str(base / "work") + "/", "").replace(str(args.corpus.resolve()), "../shared/corpus")
            real = cleaned(raw)
            comments, paren = notes(printed)
            readme_shapes = printed_shapes([ln.partition("   #")[0] for ln in printed if ln not in paren])
            real_shapes = set(printed_shapes(real))
            stale = [s for s in readme_shapes if s not in real_shapes and s != ""]
            drift += bool(stale)
            for s in stale:
                print(f"  stale: {s}")
            new_body += cmd
            if not [ln for ln in printed if ln.strip() and ln not in paren]:
                new_body += paren
                continue  # the README shows no output for this command
            shown = real[:MAX_LINES] + (["…"] if len(real) > MAX_LINES else [])
            for ln in shown:
                c = comments.get(shape(ln))
                new_body.append(f"{ln}      {c}" if c else ln)
            new_body += paren
        pieces += [text[pos:start], "\n".join(new_body) + "\n"]
        pos = end
    pieces.append(text[pos:])
    if args.write:
        README.write_text("".join(pieces), encoding="utf-8")
        print(f"README.md written ({drift} command(s) had stale output)")
        return 0
    print(f"{drift} command(s) print something else than the README shows" if drift else "README outputs fresh")
    return 1 if drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
