"""L-Eval import → round → run (baseline and an OpenAI-compatible server) → score, end to end on real task files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from academiceval.errors import AcademicEvalError
from academiceval.families.leval.items import LIE_WORDING, fit_document, read_task_dir, read_task_file, render
from academiceval.families.leval.round import load_round, write_round
from academiceval.families.leval.scoring import score_file
from academiceval.runs.config import RunConfig


@pytest.fixture(scope="module")
def data_dir(corpus: Path) -> Path:
    return corpus / "leval" / "LEval-data"


def test_one_item_per_pair_with_tag_and_task_id(data_dir: Path) -> None:
    items = read_task_file(data_dir / "Open-ended-tasks" / "paper_assistant.jsonl")
    docs = [json.loads(x) for x in (data_dir / "Open-ended-tasks" / "paper_assistant.jsonl").read_text().splitlines()]
    assert len(items) == sum(len(d["instructions"]) for d in docs) == 69
    assert {it.task for it in items} == {"paper_assistant"}
    assert {it.evaluation for it in items} == {"rouge", "LLM", "human"}
    first = items[0]
    assert first.sample_id == "leval/paper_assistant/0-0" and first.label == docs[0]["outputs"][0]
    assert first.length_words == len(docs[0]["outputs"][0].split())
    all_items = read_task_dir(data_dir)
    assert len({it.task for it in all_items}) == 18 and len({it.sample_id for it in all_items}) == len(all_items)


def test_length_instruction_and_prompt_conventions(data_dir: Path) -> None:
    item = read_task_file(data_dir / "Open-ended-tasks" / "news_summ.jsonl")[0]
    system, user, meta = render(item)
    assert user.endswith(f"{LIE_WORDING.format(n=item.length_words)}\nOutput:")
    assert meta["length_instruction"] and meta["length_words"] == item.length_words
    _, user_off, meta_off = render(item, length_instruction=False)
    assert "Aim for about" not in user_off and not meta_off["length_instruction"]
    q = read_task_file(data_dir / "Closed-ended-tasks" / "quality.jsonl")[0]
    system, user, meta = render(q)
    assert "Exactly one option" in system and not meta["length_instruction"] and user.endswith("Answer:")
    g = read_task_file(data_dir / "Closed-ended-tasks" / "gsm100.jsonl")[0]
    assert "The answer is N." in render(g)[0]


def test_fit_document_cuts_words_like_leval() -> None:
    doc = " ".join(f"w{i}" for i in range(2000))
    text, cut = fit_document(doc, 1000, lambda t: len(t.split()))
    assert text.split()[0] == "w0" and len(text.split()) == 1000 and cut == 1000
    text, cut = fit_document(doc, 1000, lambda t: 2 * len(t.split()), keep="tail")  # 2 tokens per word
    assert text.split()[-1] == "w1999" and 2 * len(text.split()) <= 1000 and cut == 2000 - len(text.split())
    assert fit_document("short text", 1000, len) == ("short text", 0)


def test_import_run_score_end_to_end(data_dir: Path, tmp_path: Path) -> None:
    items = [it for t in ("news_summ", "quality") for it in read_task_file(next(data_dir.glob(f"*/{t}.jsonl")))]
    round_dir = write_round(items, tmp_path / "rounds" / "leval-2024", source=str(data_dir))
    loaded = load_round(round_dir)
    from academiceval.store.artifacts import load_round as load_any_round

    manifest = load_any_round(round_dir).manifest  # the project's reader accepts and verifies it too
    quality = manifest.configs["leval-quality"]
    assert quality.task == "leval" and quality.setting == "quality" and quality.counts == {"test": 202}
    assert sorted(i.sample_id for i in loaded) == sorted(i.sample_id for i in items)
    assert loaded[0] == next(i for i in items if i.sample_id == loaded[0].sample_id)
    (round_dir / "jsonl" / "leval-quality" / "test.jsonl").write_text("tampered\n")
    with pytest.raises(AcademicEvalError, match="sha256"):
        load_round(round_dir)
    write_round(items, round_dir, source=str(data_dir), force=True)  # the same items again: the same files
    out = run_and_export(tmp_path, round_dir, RunConfig(model="baseline/leval-lead", tasks=["leval"], splits=None))
    assert set(out) == {"news_summ", "quality"}
    rows = [json.loads(x) for x in out["news_summ"].read_text().splitlines()]
    assert all(r["length_instruction"] for r in rows if r["evaluation"] == "rouge")
    assert all(len(r["leval-lead_pred"].split()) == r["length_words"] for r in rows if r["evaluation"] == "rouge")
    news = score_file(out["news_summ"])
    quality = score_file(out["quality"])
    assert news.scored == 11 and 0 < news.metrics["rouge/rougeL"] < 100  # the 'LLM'-tagged document is skipped
    gold_a = sum(it.label.strip().startswith("(A)") for it in items if it.task == "quality")
    assert quality.metrics["exact_match"] == round(100 * gold_a / 202, 4)


def run_and_export(tmp_path: Path, round_dir: Path, config: RunConfig) -> dict[str, Path]:
    """`academiceval run` + `academiceval export --format leval` (what `leval run` is)."""
    from academiceval.runs.export import export_run
    from academiceval.runs.runner import run_round

    summary = run_round(tmp_path / "ws", round_dir, config)
    assert summary.incomplete() is None
    written = export_run(summary.run_dir, "leval", tmp_path / "preds", round_dir=round_dir)
    return {name.removesuffix(".pred.jsonl"): path for name, path in written.files.items()}


def test_runs_with_an_openai_compatible_backend(data_dir: Path, tmp_path: Path) -> None:
    from academiceval.runs.prepare import sha256_text
    from academiceval.store.artifacts import read_run_records
    from academiceval.testing.fake_server import start_in_thread

    items = read_task_file(data_dir / "Open-ended-tasks" / "tv_show_summ.jsonl")
    round_dir = write_round(items, tmp_path / "rounds" / "tv", source=str(data_dir))
    with start_in_thread() as server:
        config = RunConfig(
            model="openai/fake-model",
            base_url=server.url,
            tasks=["leval"],
            splits=None,
            context_length=2000 + 512,  # `leval run --budget-tokens 2000`
            tokenizer="bert-base-uncased",
            max_connections=2,
        )
        out = run_and_export(tmp_path, round_dir, config)
    rows = [json.loads(x) for x in out["tv_show_summ"].read_text().splitlines()]
    assert len(rows) == 14 and all(r["error"] is None and r["fake-model_pred"] for r in rows)
    assert any(r["words_cut"] > 0 for r in rows)  # L-Eval's document cut, to the budget in the model's tokens
    (run_dir,) = [p.parent for p in (tmp_path / "ws" / "runs").rglob("run.json")]
    assert run_dir.name == "openai__fake-model+ctx2512+lie"
    recs = read_run_records(run_dir)
    assert all(sha256_text(r["prompt"]) == recs[r["sample_id"]].prompt_sha256 for r in rows)  # the prompt sent
    assert all(r["fake-model_pred"] == recs[r["sample_id"]].output_raw for r in rows)
    assert score_file(out["tv_show_summ"]).metrics["rouge/rouge1"] > 0


def test_cli_import_run_score(data_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app

    runner = CliRunner()
    rnd, preds = tmp_path / "rounds" / "leval-x", tmp_path / "preds"
    res = runner.invoke(app, ["leval", "import", str(data_dir), "--out", str(rnd), "--tasks", "news_summ,tpo"])
    assert res.exit_code == 0, res.output
    ws = ["--home", str(tmp_path / "ws")]
    res = runner.invoke(app, ["leval", "run", str(rnd), "--model", "baseline/leval-lead", "--out", str(preds), *ws])
    assert res.exit_code == 0, res.output
    files = sorted(str(p) for p in preds.glob("*.pred.jsonl"))
    res = runner.invoke(app, ["score-predictions", "--format", "leval", "--json", *files])
    out = json.loads(res.stdout)
    assert out[files[1]]["task"] == "tpo" and out[files[1]]["scored"] == 269
    assert out[files[0]]["rouge/rougeL"] > 5
    res = runner.invoke(
        app, ["leval", "run", str(tmp_path / "nope"), "--model", "baseline/leval-lead", "--out", "x", *ws]
    )
    assert res.exit_code == 2 and not Path("x").exists()
    home = tmp_path / "ws"
    res = runner.invoke(
        app, ["leval", "import", str(data_dir), "--round", "leval-2024", "--home", str(home), "--tasks", "news_summ"]
    )
    assert res.exit_code == 0 and (home / "rounds" / "leval-2024" / "manifest.json").is_file()
    res = runner.invoke(app, ["leval", "import", str(data_dir), "--round", "../escape", "--home", str(home)])
    assert res.exit_code == 2 and not (tmp_path / "escape").exists()  # names go through check_name
