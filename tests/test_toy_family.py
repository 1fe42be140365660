"""Adding a task family = one folder + one registration line (issue 22).

The test writes a toy multiple-choice family as a package under tmp — one folder: `__init__.py` (its TaskSpec,
its multiple-choice port, its `import` sub-command) and its prompt template — and registers it with one line: an
`academiceval.families` entry point, as a third-party package would (a built-in family adds one line to
`store.tasks.FAMILY_MODULES` instead, checked too). Then the ordinary commands take it through the whole chain:
`toy import` writes a round through the one publisher, `run` a baseline, `score` with the task's own metric,
`report`. No file of academiceval is touched. The questions are real sentences of a paper in the corpus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from academiceval.store import tasks

FAMILY_INIT = '''
"""A toy multiple-choice family: which sentence of the paper follows the context?"""

import json
from pathlib import Path
from typing import Annotated

import typer

from academiceval.rounds.choice import ChoiceItem, ChoiceOption
from academiceval.rounds.prompts import prompt_sha256, render_prompt
from academiceval.store.artifacts import Layout, write_manifest, write_round_config
from academiceval.store.models import ConfigInfo, RoundManifest, Sample, SplitWindows
from academiceval.store.publisher import publishing
from academiceval.store.tasks import Family, TaskSpec

TEMPLATES = Path(__file__).parent / "templates"
FIELDS = ("context", "options")
SPEC = TaskSpec(name="toy_mc", title="Toy MC", prompt_kind="choice", input_fields=FIELDS, max_new_tokens=16,
                default_metrics=("accuracy",), choice_form="letters")


def choice_item(sample):
    """The multiple-choice port: the sample's context, the question, its options A-D."""
    options = json.loads(sample.fields["options"])
    return ChoiceItem(item_id=sample.sample_id, template="toy_mc.j2", template_dir=str(TEMPLATES),
                      context=sample.fields["context"], question="Which sentence comes next?",
                      options=[ChoiceOption(key=k, text=v) for k, v in options.items()], gold=[sample.label])


app = typer.Typer()


@app.command("import")
def import_(rows: Path, round_name: Annotated[str, typer.Option("--round")], home: Annotated[Path, typer.Option()],
            force: bool = False) -> None:
    out = Layout.of(home).round_dir(round_name)
    info = ConfigInfo(task="toy_mc", setting="next", setting_name="toy_mc-next")
    samples = []
    for row in json.loads(rows.read_text()):
        s = Sample(sample_id=f"toy_mc/next/{row['id']}", round=round_name, task="toy_mc", setting="next",
                   split="test", arxiv_id="", paper_id=row["paper"], published="2022-12-01",
                   fields={"context": row["context"], "options": json.dumps(row["options"])}, label=row["answer"])
        samples.append(s.model_copy(update={"prompt_sha256": prompt_sha256(render_prompt(s))}))
    info.counts = {"test": len(samples)}
    manifest = RoundManifest(round=round_name, created_at="2026-01-01T00:00:00+00:00", package_version="toy",
                             seed=0, windows=SplitWindows(), configs={info.setting_name: info},
                             counts={info.setting_name: dict(info.counts)})
    with publishing(out, force=force, home=home, protect=[rows]) as tmp:
        write_round_config(tmp, info, samples, FIELDS)
        write_manifest(tmp, manifest)


family = Family("toy", (SPEC,), ports={"choice_item": "toyfam:choice_item"}, command="toy", cli_app="toyfam:app")
'''
TEMPLATE = """Read the text, then choose the sentence that follows it.

{{ context }}

{{ question }}
{% for o in options %}{{ o.key }}. {{ o.text }}
{% endfor %}Answer with the letter inside <answer></answer>.
"""


@pytest.fixture()
def toy_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder, and its one registration line (an entry point of an installed distribution)."""
    pkg = tmp_path / "site" / "toyfam"
    (pkg / "templates").mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAMILY_INIT)
    (pkg / "templates" / "toy_mc.j2").write_text(TEMPLATE)
    dist = tmp_path / "site" / "toyfam-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyfam\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[academiceval.families]\ntoy = toyfam\n")  # the registration line
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    tasks.reset_families()
    yield pkg
    tasks.reset_families()
    sys.modules.pop("toyfam", None)
    from academiceval.cli.main import app

    app.registered_groups[:] = [g for g in app.registered_groups if g.name != "toy"]


def _rows(corpus: Path) -> list[dict]:
    """Questions from a real paper: a passage, then its next sentence among three later ones (gold spread A–D)."""
    d = json.loads((corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl").read_text().splitlines()[0])
    sents = [s.strip() for p in d["body_text"] for s in p["text"].split(". ") if len(s.split()) > 6]
    rows = []
    for i in range(12):
        at = 3 + 4 * i
        choices = [sents[at], sents[at + 7], sents[at + 13], sents[at + 19]]
        gold = i % 4
        choices[0], choices[gold] = choices[gold], choices[0]
        options = dict(zip("ABCD", choices, strict=True))
        rows.append({"id": i, "paper": d["paper_id"], "context": ". ".join(sents[at - 3 : at]), "options": options,
                     "answer": "ABCD"[gold]})  # fmt: skip
    return rows


def test_the_family_is_one_folder_and_one_line(toy_family: Path) -> None:
    files = sorted(p.relative_to(toy_family).as_posix() for p in toy_family.rglob("*") if p.is_file())
    assert files == ["__init__.py", "templates/toy_mc.j2"]
    assert tasks.task_spec("toy_mc").family == "toy" and tasks.family_for("toy_mc").command == "toy"
    assert tasks.task_names()[-1] == "toy_mc"  # listed after the built-in tasks
    # a built-in family is registered by one line of FAMILY_MODULES instead of an entry point
    assert tasks.FAMILY_MODULES[-1] == "academiceval.families.elaip"


def test_a_toy_family_runs_through_the_ordinary_commands(toy_family: Path, corpus: Path, tmp_path: Path) -> None:
    from academiceval.cli.main import command

    home = tmp_path / "ws"
    rows = _rows(corpus)
    (tmp_path / "rows.json").write_text(json.dumps(rows))

    def cli(*args: object) -> str:
        r = CliRunner().invoke(command(), [str(a) for a in args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.output

    cli("toy", "import", tmp_path / "rows.json", "--round", "toy-r", "--home", home)
    for model in ("baseline/first-choice", "baseline/lexical-choice", "baseline/random-choice"):
        cli("run", "toy-r", "--model", model, "--home", home)
    runs = sorted((home / "runs" / "toy-r").iterdir())
    cli("score", *runs, "--home", home)  # no --metrics: the task's own metric (accuracy)
    cli("report", "--round", "toy-r", "--home", home)

    results = json.loads((home / "reports" / "toy-r" / "results.json").read_text())
    acc = {r["model"]: r["metrics"]["accuracy"]["values"]["accuracy"]["mean"] for r in results["rows"]}
    assert acc["baseline/first-choice"] == pytest.approx(sum(r["answer"] == "A" for r in rows) / len(rows))
    assert 0.0 <= acc["baseline/random-choice"] <= 1.0
    md = (home / "reports" / "toy-r" / "leaderboard.md").read_text()
    assert "## Toy MC · next" in md and "accuracy" in md
    examples = (home / "reports" / "toy-r" / "examples.html").read_text()
    assert "Which sentence comes next?" in examples and "✓ [" in examples and "picked [A]" in examples
    first = json.loads((runs[0] / "toy_mc-next.jsonl").read_text().splitlines()[0])
    assert first["output"] == "<answer>A</answer>"  # first-choice answers with the first option's letter


def test_the_registry_refuses_what_it_cannot_mean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from academiceval.errors import ConfigError
    from academiceval.rounds.config import BuildConfig

    with pytest.raises(ConfigError, match=r"unknown task 'titel'.*title, abstract"):
        tasks.task_spec("titel")
    with pytest.raises(ConfigError, match="unknown writing task 'citation_cloze'"):
        BuildConfig(tasks=["title", "citation_cloze"])  # a build writes the writing tasks; cloze has its own
    with pytest.raises(ConfigError, match="already declared by family 'writing'"):
        tasks.register_family(tasks.Family("copy", (tasks.task_spec("title").model_copy(update={"family": ""}),)))
    # a broken third-party plugin is one clear error, not a traceback
    site = tmp_path / "site"
    (site / "brokenfam-0.1.dist-info").mkdir(parents=True)
    (site / "brokenfam-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenfam\nVersion: 0.1\n")
    (site / "brokenfam-0.1.dist-info" / "entry_points.txt").write_text("[academiceval.families]\nbroken = nosuchmod\n")
    monkeypatch.syspath_prepend(str(site))
    tasks.reset_families()
    try:
        with pytest.raises(ConfigError, match=r"plugin 'broken' .* failed to load"):
            tasks.task_names()
    finally:
        monkeypatch.undo()
        tasks.reset_families()
    assert "title" in tasks.task_names()
