"""L-Eval and ElaipBench through the project's own chain on real data: `leval import` / `elaip import` →
`academiceval run` (the lead / first-choice baselines and the fake OpenAI-compatible server) → `academiceval
score` (the `leval` metric, `accuracy`) → `academiceval report`; and, on L-Eval's published predictions, the
`leval` metric's per-task mean equals `score-predictions` (`families.leval.scoring.score_file`) on the same answers."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.families.leval.scoring import score_file, score_rows
from academiceval.scores.leval_text import gold_choice
from academiceval.store.artifacts import Layout, load_round, load_run, read_scores

TASKS = ("tpo", "gsm100", "news_summ", "coursera", "topic_retrieval_longchat", "financial_qa")
RUN = ("tpo", "gsm100", "news_summ")
LIMIT = 10


def cli(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == code, res.output
    return res.output


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("leval-e2e") / "ws"
    cli(
        "leval",
        "import",
        str(corpus / "leval" / "LEval-data"),
        "--round",
        "lv",
        "--home",
        str(h),
        "--tasks",
        ",".join(TASKS),
    )
    return h


def _records(run_dir: Path) -> dict[str, list]:
    by: dict[str, list] = defaultdict(list)
    for rec in load_run(run_dir).records.values():
        by[rec.setting].append(rec)
    return by


def _means(run_dir: Path, metric: str) -> dict[tuple[str, str], float]:
    """(setting, value key) → mean over the run's score records of `metric` (errors excluded)."""
    vals: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in read_scores(run_dir):
        if s.metric == metric and not s.error:
            for k, v in s.values.items():
                vals[(s.setting, k)].append(v)
    return {k: sum(v) / len(v) for k, v in vals.items()}


def test_round_holds_ordinary_samples(home: Path) -> None:
    loaded = load_round(Layout.of(home).round_dir("lv"))
    assert sorted(loaded.configs()) == sorted(f"leval-{t}" for t in TASKS)
    tpo = list(loaded.samples("leval-tpo"))
    assert len(tpo) == 269 and {s.task for s in tpo} == {"leval"} and {s.setting for s in tpo} == {"tpo"}
    item = json.loads(tpo[0].fields["item"])
    assert item["evaluation"] == "exam" and (item["doc_index"], item["question_index"]) == (0, 0)
    assert tpo[0].fields["instruction"] and len(tpo[0].fields["document"].split()) > 500
    news = list(loaded.samples("leval-news_summ"))
    assert all(json.loads(s.fields["item"])["length_words"] == len(s.label.split()) for s in news)


def test_lead_baseline_and_fake_server_run_score_report(home: Path) -> None:
    from academiceval.testing.fake_server import start_in_thread

    sel = [a for t in RUN for a in ("--setting", t)]
    out = cli("run", "lv", "--model", "baseline/leval-lead", "--home", str(home), "--limit", str(LIMIT), *sel)
    lead = home / "runs" / "lv" / "baseline__leval-lead+lie"  # L-Eval's LIE is on by default
    assert lead.is_dir(), out
    recs = _records(lead)
    assert {k: len(v) for k, v in recs.items()} == dict.fromkeys(RUN, LIMIT)
    assert all(not r.error for rs in recs.values() for r in rs)
    assert {r.output_raw for r in recs["tpo"]} == {"A"}
    lie = [r for r in recs["news_summ"] if r.prompt_info.get("length_words")]
    assert lie and all(len(r.output_raw.split()) == r.prompt_info["length_words"] for r in lie)
    with start_in_thread() as server:
        cli(
            "run",
            "lv",
            "--model",
            "openai/fake-model",
            "--base-url",
            server.url,
            "--home",
            str(home),
            "--limit",
            "3",
            *sel,
        )
    fake = home / "runs" / "lv" / "openai__fake-model+lie"
    assert {k: len(v) for k, v in _records(fake).items()} == dict.fromkeys(RUN, 3)

    cli("score", str(lead), str(fake), "--home", str(home))  # default metric of an L-Eval run: leval
    means = _means(lead, "leval")
    samples = {s.sample_id: s for s in load_round(Layout.of(home).round_dir("lv")).samples()}
    tpo_golds = [gold_choice(samples[r.sample_id].label) for r in recs["tpo"]]
    assert 0 < tpo_golds.count("A") < LIMIT  # the data makes the check informative
    assert means[("tpo", "exact_match")] == pytest.approx(100 * tpo_golds.count("A") / LIMIT)
    # ROUGE in percent, equal to score-predictions' numbers on the same answers
    rows = [
        {"query": samples[r.sample_id].fields["instruction"], "gt": samples[r.sample_id].label}
        | {"lead_pred": r.output_raw, "evaluation": json.loads(samples[r.sample_id].fields["item"])["evaluation"]}
        for r in sorted(recs["news_summ"], key=lambda r: r.sample_id)
    ]
    file_metrics = score_rows(rows, "news_summ").metrics
    for k in ("rouge1", "rouge2", "rougeL"):
        assert 1 < means[("news_summ", k)] < 100
        assert round(means[("news_summ", k)], 4) == file_metrics[f"rouge/{k}"]
    llm = [s for s in read_scores(lead) if s.setting == "news_summ" and s.error]
    assert len(llm) == LIMIT - file_metrics["num_predicted"] and all("not scored" in s.error for s in llm)
    assert ("gsm100", "exact_match") in means and ("gsm100", "exact_match") in _means(fake, "leval")

    cli("report", "--home", str(home), "--round", "lv")
    md = (home / "reports" / "lv" / "leaderboard.md").read_text()
    for t in RUN:
        assert f"## L-Eval · {t}" in md
    assert "leval (exact_match)" in md and "leval (rougeL)" in md
    tpo_table = md.split("## L-Eval · tpo", 1)[1].split("##", 1)[0]
    assert "baseline/leval-lead" in tpo_table and f"{100 * tpo_golds.count('A') / LIMIT:.3f}" in tpo_table
    assert "L-Eval" in (home / "reports" / "lv" / "index.html").read_text()
    results = json.loads((home / "reports" / "lv" / "results.json").read_text())
    lead_rows = [
        r for r in results["rows"] if Path(r["run_dir"]).name == lead.name
    ]  # other tests add runs to this round
    assert {(r["task"], r["setting"]) for r in lead_rows} == {("leval", t) for t in RUN}
    assert all(r["metrics"]["leval"]["config_hash"] for r in lead_rows)


def test_length_instruction_off_and_leval_truncation(home: Path) -> None:
    from academiceval.models.prepare import prepare_prompt

    out = cli(
        "run", "lv", "-m", "baseline/leval-lead", "--home", str(home), "--setting", "news_summ", "--limit", "2",
        "--no-length-instruction",
    )  # fmt: skip
    recs = _records(home / "runs" / "lv" / "baseline__leval-lead")["news_summ"]
    assert len(recs) == 2 and all(len(r.output_raw.split()) == 60 for r in recs), out
    sample = next(load_round(Layout.of(home).round_dir("lv")).samples("leval-news_summ"))
    full = prepare_prompt(sample, context_length=None, max_output_tokens=512, length_instruction=True)
    cut = prepare_prompt(sample, context_length=1500, max_output_tokens=512, length_instruction=True)
    assert cut.input_tokens <= 1500 - 512 < full.input_tokens and cut.policy == "document-cut-leval"
    assert cut.words_cut > 0 and cut.prompt.endswith("Output:") and "Aim for about" in cut.prompt
    assert sample.fields["instruction"] in cut.prompt  # only the document was cut


PARITY = [
    ("exam_eval/gpt4-32k/coursera", "exact_match"),
    ("exam_eval/gpt4-32k/gsm100", "exact_match"),
    ("exam_eval/Claude-100k/tpo", "exact_match"),
    ("exam_eval/Claude-100k/topic_retrieval_longchat", "average_1st_2nd_3rd/exact_match"),
    ("ngram_eval/turbo-16k-0613/news_summ", "rouge/rougeL"),
    ("ngram_eval/turbo-16k-0613/financial_qa", "f1"),
]


@pytest.mark.parametrize(("pred", "headline"), PARITY)
def test_metric_mean_equals_score_predictions(
    home: Path, corpus: Path, tmp_path: Path, pred: str, headline: str
) -> None:
    """A published prediction file turned into run records of the imported round (rows matched by query+gt,
    L-Eval's key), scored by `academiceval score --metrics leval`: the per-item mean is the file's number."""
    from academiceval.store.artifacts import RecordWriter, new_record, write_run_spec
    from academiceval.store.models import RunSpec

    path = corpus / "leval" / "Predictions" / f"{pred}.pred.jsonl"
    task = path.name.removesuffix(".pred.jsonl")
    loaded = load_round(Layout.of(home).round_dir("lv"))
    by_key: dict[tuple[str, str], list] = defaultdict(list)
    for s in loaded.samples(f"leval-{task}"):
        by_key[(s.fields["instruction"], s.label)].append(s)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    key = next(k for k in rows[0] if "_pred" in k)
    run_dir = Layout.of(home).run_dir("lv", f"published-{pred.replace('/', '_')}")
    write_run_spec(run_dir, RunSpec(round="lv", round_manifest_sha256=loaded.manifest_sha256, model="published/x",
                                    backend="published", package_version="0", created_at="now"))  # fmt: skip
    writer = RecordWriter(run_dir)
    for row in rows:
        s = by_key[(row["query"], row["gt"])].pop(0)  # every published row is an item of the round
        text = str(row[key] or "")
        writer.append(
            new_record(
                sample_id=s.sample_id, task=s.task, setting=s.setting, split=s.split, arxiv_id="",
                published=s.published, prompt_sha256=s.prompt_sha256, output_raw=text, output=text.strip(),
            )
        )  # fmt: skip
    writer.close()
    cli("score", str(run_dir), "--metrics", "leval", "--home", str(home))
    means = _means(run_dir, "leval")
    expected = score_file(path)
    if headline.startswith("average"):  # the mean of three rounded parts: equal up to that rounding
        assert means[(task, "exact_match")] == pytest.approx(expected.metrics[headline], abs=2e-4)
    else:
        value = headline.removeprefix("rouge/")
        assert round(means[(task, value)], 4) == expected.metrics[headline]
    scored = [s for s in read_scores(run_dir) if not s.error]
    assert len(scored) == expected.scored and all(s.details["protocol"] == "leval-compatible" for s in scored)


def test_bad_inputs_are_one_line_errors(home: Path, corpus: Path, tmp_path: Path) -> None:
    data = corpus / "leval" / "LEval-data"
    out = cli("leval", "import", str(data), "--round", "x", "--home", str(home), "--tasks", "tpo,nope", code=2)
    assert "unknown L-Eval task id 'nope'" in out and "Traceback" not in out
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "tpo_rerun.jsonl").write_text((data / "Closed-ended-tasks" / "tpo.jsonl").read_text().splitlines()[0] + "\n")
    out = cli("leval", "import", str(odd), "--round", "odd", "--home", str(home), code=2)
    assert "unknown L-Eval task id 'tpo_rerun'" in out and not (home / "rounds" / "odd" / "manifest.json").exists()
    out = cli("run", "no-such-round", "-m", "baseline/leval-lead", "--home", str(home), code=2)
    assert "round 'no-such-round' not found" in out and "Traceback" not in out
    # a round written by hand with an unknown task id: refused before any request
    from academiceval.store.artifacts import write_manifest, write_round_config

    rdir = Layout.of(home).round_dir("handmade")
    loaded = load_round(Layout.of(home).round_dir("lv"))
    s = next(loaded.samples("leval-tpo")).model_copy(update={"setting": "tpo2", "round": "handmade"})
    info = loaded.manifest.configs["leval-tpo"].model_copy(update={"setting": "tpo2", "files": []})
    write_round_config(rdir, info, [s], ("document", "instruction", "item"))
    write_manifest(
        rdir, loaded.manifest.model_copy(update={"round": "handmade", "configs": {"leval-tpo": info}, "files": {}})
    )
    out = cli("run", "handmade", "-m", "baseline/leval-lead", "--home", str(home), code=2)
    assert "unknown L-Eval task id 'tpo2'" in out and "Traceback" not in out


def test_retrieval_over_the_document_only_as_levals_baselines(home: Path) -> None:
    """`run --rag bm25` on L-Eval items (L-Eval's retrieval rows: 4 chunks of 1,024 tokens, no overlap, a 4k
    model): the chunks come from the item's document alone, ranked for its instruction, and replace the document
    in L-Eval's prompt; the run records which chunks each prompt got. Formerly every item was skipped."""
    from academiceval.models.prepare import prepare_prompt
    from academiceval.models.rag import RagConfig
    from academiceval.models.tokenize import load_tokenizer

    rag = RagConfig.from_spec("bm25", top_k=4, chunk_size=1024, chunk_overlap=0)
    tok = load_tokenizer(None)
    sample = next(load_round(Layout.of(home).round_dir("lv")).samples("leval-financial_qa"))
    doc, question = sample.fields["document"], sample.fields["instruction"]
    out = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512, rag=rag)
    assert not out.skipped and out.variant == "rag" and len(out.retrieved) == 4
    assert [r["rank"] for r in out.retrieved] == [0, 1, 2, 3] and all(r["source"] == "document" for r in out.retrieved)
    assert [r["score"] for r in out.retrieved] == sorted((r["score"] for r in out.retrieved), reverse=True)
    assert all(t in doc and tok.count(t) <= 1024 for t in out.retrieved_texts)  # verbatim windows of the document
    chunks = "\n\n".join(out.retrieved_texts)  # in rank order, as L-Eval's "stuff" chain joins them
    plain = prepare_prompt(sample, tokenizer=tok, context_length=None, max_output_tokens=512)
    assert tok.count(doc) > 4 * 1024 and plain.prompt.replace(doc, chunks) == out.prompt  # only the document differs
    # a 4k model: the chunks are cut L-Eval's way (words from the right: the lowest-ranked chunk loses its tail)
    fit = prepare_prompt(sample, tokenizer=tok, context_length=4096, max_output_tokens=512, rag=rag)
    assert fit.retrieved == out.retrieved and fit.input_tokens <= 4096 - 512 and fit.policy == "document-cut-leval"
    assert out.retrieved_texts[0] in fit.prompt and question in fit.prompt and fit.words_cut > 0
    cli(
        "run", "lv", "-m", "baseline/leval-lead", "--home", str(home), "--setting", "financial_qa", "--limit", "3",
        "--rag", "bm25", "--top-k", "4", "--chunk-size", "1024", "--chunk-overlap", "0", "--context-length", "4096",
        "--run-name", "lead-rag",
    )  # fmt: skip
    recs = _records(home / "runs" / "lv" / "lead-rag")["financial_qa"]
    assert len(recs) == 3 and all(not r.error and r.output_raw for r in recs)
    assert all(len(r.prompt_info["retrieved"]) == 4 and r.input_tokens <= 3584 for r in recs)
