"""`academiceval release` (issue 23 item 1, issue 28 item 2): a publishable dataset folder that `datasets` loads,
withholding the newest window *by paper* (no sample of a withheld paper in any config), with a leak check over
every file it writes that refuses the release when a withheld answer is recoverable; a private key in the creator's
workspace scores submissions on the withheld papers, and every score record says what it was scored against."""

from __future__ import annotations

import itertools
import json
import shutil
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.rounds.release_check import check_release
from academiceval.store.artifacts import Layout, load_round, load_run, read_scores
from academiceval.store.release import WITHHELD_COLUMNS, release_sample_id, verify_checksums
from academiceval.store.release_key import read_key
from academiceval.testing.sample_round import write_round, write_sample_round

ROUND = "2022-12-rel"


def cli(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(app, [str(a) for a in args])
    return r.exit_code, r.output


def split_round(corpus: Path, home: Path, *, edit=None) -> Path:
    """A real round (unarXive sample: title and abstract tasks, whose inputs carry each other's labels) whose older
    half is train and newer half test; `edit(by_config)` may change samples before it is written."""
    tmp = write_sample_round(corpus, home.parent / f"{home.name}-tmp", name=ROUND, max_papers=8, body_chars=2000)
    by_config: dict = {}
    for config in load_round(tmp).configs():
        rows = list(load_round(tmp).samples(config))
        cut = sorted(r.published for r in rows)[len(rows) // 2]
        by_config[config] = [r.model_copy(update={"split": "train" if r.published < cut else "test"}) for r in rows]
    build_options = edit(by_config) if edit else None
    shutil.rmtree(tmp)
    return write_round(Layout.of(home).round_dir(ROUND), ROUND, by_config, build_options=build_options)


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("release-ws") / "ws"
    split_round(corpus, h)
    return h


def withheld_of(round_dir: Path) -> list:
    return [(release_sample_id(s), s) for s in load_round(round_dir).distinct_samples() if s.split == "test"]


def data_rows(out: Path) -> list[dict]:
    return [row for p in sorted((out / "data").rglob("*.parquet")) for row in pq.read_table(p).to_pylist()]


def test_release_withholds_by_paper_and_loads_with_datasets(home: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    full = Layout.of(home).round_dir(ROUND)
    withheld = withheld_of(full)
    test_papers = {s.arxiv_id for _, s in withheld}
    assert withheld and test_papers

    out = tmp_path / "rel"
    code, text = cli("release", ROUND, out, "--home", home, "--json", tmp_path / "rel.json")
    assert code == 0, text
    assert f"0 of {len(withheld)}" in text  # the leak check's own verdict, printed
    for name in ("README.md", "LICENSES.md", "SHA256SUMS", "manifest.json", "withheld/test.parquet"):
        assert (out / name).is_file(), name
    assert verify_checksums(out) == []
    load_round(out)  # a release is a round: every sha256 holds

    # no sample of a withheld paper in any config: not as target, not in an input, not as a demonstration
    rows = data_rows(out)
    assert rows and {r["split"] for r in rows} == {"train"}
    assert not test_papers & {r["arxiv_id"] for r in rows}
    assert not test_papers & {d["arxiv_id"] for r in rows for d in r["demos"]}
    texts = json.dumps(rows, default=str)
    for _, s in withheld:
        assert s.label not in texts, s.sample_id  # the title is not in an abstract input, nor the abstract anywhere

    # the listing: what a maintainer verifies a submission with, nothing else
    listing = pq.read_table(out / "withheld" / "test.parquet")
    assert tuple(listing.column_names) == WITHHELD_COLUMNS
    assert sorted(listing["sample_id"].to_pylist()) == sorted(rid for rid, _ in withheld)
    assert set(listing["prompt_sha256"].to_pylist()) == {s.prompt_sha256 for _, s in withheld}

    report = json.loads((tmp_path / "rel.json").read_text())["leak_check"]
    manifest = json.loads((out / "manifest.json").read_text())["release"]
    assert report["recoverable"] == manifest["leak_check"]["recoverable"] == 0
    assert manifest["leak_check"]["files_checked"] == len(list(p for p in out.rglob("*") if p.is_file()))
    card = (out / "README.md").read_text()
    assert "Withheld: the test papers" in card and "Leak check" in card and "license: other" in card

    # the key stays in the creator's workspace, readable by its owner only, and holds the full samples
    [key_path] = Layout.of(home).release_keys(ROUND)
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600 and out not in key_path.parents
    key = read_key(key_path)
    assert {e.release_id: e.sample.label for e in key.entries} == {rid: s.label for rid, s in withheld}

    ds = datasets.load_dataset(str(out), "title-zero-shot", cache_dir=str(tmp_path / "hf1"))
    assert set(ds) == {"train"} and all(ds["train"]["label"])
    listed = datasets.load_dataset(str(out), "withheld", cache_dir=str(tmp_path / "hf1"))
    assert len(listed["test"]) == len(withheld) and "label" not in listed["test"].column_names

    # the check is not vacuous: on the full round (every sample there) every withheld sample is recoverable,
    # each named by the file, the row and the field it is found in
    full_report = check_release(full, withheld)
    assert full_report.recoverable == len(withheld)
    f = next(f for f in full_report.findings if f.kind == "label text")
    row, field = f.where.split(" · ")
    assert f.file.startswith("data/") and row in load_round(full).samples_by_id() and field

    # --with-labels publishes the test papers; a non-empty OUT is refused without --force
    code, text = cli("release", ROUND, out, "--home", home, "--with-labels")
    assert code != 0 and "already holds files" in text
    code, text = cli("release", ROUND, out, "--home", home, "--with-labels", "--force")
    assert code == 0, text
    ds = datasets.load_dataset(str(out), "title-zero-shot", cache_dir=str(tmp_path / "hf2"))
    assert set(ds) == {"train", "test"} and all(ds["test"]["label"])
    assert not (out / "withheld").exists() and len(Layout.of(home).release_keys(ROUND)) == 1


def test_release_refuses_naming_the_file_and_sample(corpus: Path, tmp_path: Path) -> None:
    """A withheld abstract that would be published anywhere (here: copied into the round's build notes, which the
    release manifest carries) stops the release: nothing is written, no key, no staging left."""
    leaked: dict = {}

    def note(by_config: dict) -> dict:
        s = next(s for s in by_config["abstract-zero-shot"] if s.split == "test")
        leaked["id"] = s.arxiv_id  # its label is also abstract/random:1/<id>'s: the check names one of the two
        return {"source": "unarXive sample", "example": s.label}

    h = tmp_path / "ws"
    split_round(corpus, h, edit=note)
    out = tmp_path / "rel"
    code, text = cli("release", ROUND, out, "--home", h)
    assert code == 1, text
    flat = " ".join(text.split())
    assert "manifest.json" in flat and leaked["id"] in flat and "recoverable" in flat
    assert not out.exists() and not list(tmp_path.glob(".rel.*"))
    assert Layout.of(h).release_keys(ROUND) == []


def test_a_published_sample_carrying_withheld_text_is_left_out(corpus: Path, tmp_path: Path) -> None:
    """A train sample whose body quotes a test paper's abstract (found by the leak check), and one with a test
    paper as its demonstration (found by paper id), stay out of the release; the card counts them."""
    picked: dict = {}

    def carry(by_config: dict) -> None:
        rows = by_config["title-zero-shot"]
        test = next(s for s in by_config["abstract-zero-shot"] if s.split == "test")
        i = next(i for i, s in enumerate(rows) if s.split == "train")
        body = rows[i].fields["body"] + "\n\n" + test.label
        rows[i] = rows[i].model_copy(update={"fields": {**rows[i].fields, "body": body}})
        picked["text"] = rows[i].sample_id
        demo_rows = by_config["title-random1"]
        j = next(j for j, s in enumerate(demo_rows) if s.split == "train" and s.demos)
        demo = demo_rows[j].demos[0].model_copy(update={"arxiv_id": test.arxiv_id})
        demo_rows[j] = demo_rows[j].model_copy(update={"demos": [demo]})
        picked["demo"] = demo_rows[j].sample_id

    h = tmp_path / "ws"
    split_round(corpus, h, edit=carry)
    out = tmp_path / "rel"
    code, text = cli("release", ROUND, out, "--home", h)
    assert code == 0, text
    ids = {r["sample_id"] for r in data_rows(out)}
    assert picked["text"] not in ids and picked["demo"] not in ids
    reasons = json.loads((out / "manifest.json").read_text())["release"]["dropped_reasons"]
    assert reasons == {
        "carries a withheld paper (demonstration, cited or candidate paper)": 1,
        "carries the text of a withheld label (label text)": 1,
    }
    assert "Left out of the published splits: 2 samples" in (out / "README.md").read_text()


def test_release_run_scores_against_its_release_and_says_so(home: Path, corpus: Path, tmp_path: Path) -> None:
    """Issue 28.2: a run of the release in the creator's workspace is scored against the release (found by its
    manifest through the key), not silently against the full round; elsewhere, against the release given."""
    out = tmp_path / "rel"
    assert cli("release", ROUND, out, "--home", home)[0] == 0
    run = ("--model", "baseline/lead", "--task", "title", "--split", "train", "--no-cache")  # test is withheld
    code, text = cli("run", out, *run, "--home", home)
    assert code == 0, text
    run_dir = Layout.of(home).run_dir(ROUND, "baseline__lead+release")
    try:
        code, text = cli("score", run_dir, "--metrics", "rouge-l", "--home", home)
        assert code == 0, text
        scores = read_scores(run_dir)
        assert scores and all(s.error is None for s in scores)
        assert all(str(s.details["scored_against"]).startswith("release 2022-12-rel") for s in scores)
        assert "scored against release 2022-12-rel" in " ".join(text.split())
    finally:
        shutil.rmtree(run_dir)

    user = tmp_path / "user-ws"  # a user who has only the release
    assert cli("run", out, *run, "--home", user)[0] == 0
    [urun] = [p for p in (user / "runs" / ROUND).iterdir() if p.is_dir()]
    assert urun.name == "baseline__lead+release"
    code, text = cli("score", urun, "--metrics", "rouge-l", "--home", user)
    assert code == 2 and "--round-dir" in text  # no round of that name here: said, not guessed
    split_round(corpus, user)  # a same-named round of the user's own
    code, text = cli("score", urun, "--metrics", "rouge-l", "--home", user)
    assert code == 2 and "was made on a release" in " ".join(text.split())  # never silently another round
    code, text = cli("score", urun, "--metrics", "rouge-l", "--round-dir", out)
    assert code == 0, text
    assert all(s.error is None and "release" in str(s.details["scored_against"]) for s in read_scores(urun))


def test_withheld_samples_score_with_the_key_and_only_there(home: Path, tmp_path: Path) -> None:
    """A submission on the withheld papers (a run on a rebuilt round: here a copy, which a deterministic rebuild
    gives) scores as "label withheld" against the release, and with the private key in the creator's workspace —
    saying so in every score record — even after the creator's round was replaced."""
    out = tmp_path / "rel"
    assert cli("release", ROUND, out, "--home", home)[0] == 0
    user = tmp_path / "user-ws"
    shutil.copytree(Layout.of(home).round_dir(ROUND), Layout.of(user).round_dir(ROUND))  # the rebuilt round
    run = ("--model", "baseline/lead", "--task", "abstract", "--split", "train", "--split", "test", "--no-cache")
    assert cli("run", ROUND, *run, "--home", user)[0] == 0
    run_dir = Layout.of(user).run_dir(ROUND, "baseline__lead")
    records = load_run(run_dir).records
    test_ids = {sid for sid, r in records.items() if r.split == "test"}
    assert test_ids and len(test_ids) < len(records)

    code, text = cli("score", run_dir, "--metrics", "rouge-l", "--round-dir", out)
    assert code == 0, text
    by_id = {s.sample_id: s for s in read_scores(run_dir)}
    assert all(by_id[i].error and by_id[i].error.startswith("label withheld") for i in test_ids)
    assert all(by_id[i].error is None for i in set(records) - test_ids)

    submitted = shutil.copytree(run_dir, tmp_path / "submission" / run_dir.name)  # what the maintainer receives
    creator_round = Layout.of(home).round_dir(ROUND)
    aside = tmp_path / "aside"
    shutil.move(creator_round, aside)  # the creator has since replaced the round: the key still scores
    try:
        code, text = cli("score", submitted, "--metrics", "rouge-l", "--home", home)
    finally:
        shutil.move(aside, creator_round)
    assert code == 0, text
    latest = {s.sample_id: s for s in read_scores(submitted)}  # the last record per sample
    for i in test_ids:
        assert latest[i].error is None and latest[i].values["f"] > 0
        assert str(latest[i].details["scored_against"]).startswith("private key of release 2022-12-rel")
    assert "scored against private key" in " ".join(text.split())


def test_cloze_release_lists_opaque_items_and_the_key_scores_them(scalar_round, tmp_path: Path) -> None:
    """Multiple choice: a withheld item is listed under an id that names no option, with no answer and no seed;
    the key maps it back; a run naming items by their own ids is matched through the prompt hash."""
    ws, built = scalar_round
    full = load_round(built.path)
    withheld = withheld_of(built.path)
    assert withheld and all(s.task == "citation_cloze" for _, s in withheld)
    out = tmp_path / "rel"
    code, text = cli("release", built.path, out, "--home", ws.home)
    assert code == 0, text
    listing = pq.read_table(out / "withheld" / "test.parquet").to_pylist()
    assert len(listing) == len(withheld) and tuple(listing[0]) == WITHHELD_COLUMNS
    for row in listing:
        assert row["sample_id"].startswith(f"citation_cloze/{row['setting']}/{row['arxiv_id']}/w")
    real = {s.sample_id for _, s in withheld}
    blob = "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix != ".parquet")
    blob += json.dumps(listing, default=str)
    assert not any(i in blob for i in real)  # no id that names the gold reference
    assert not any(str(s.seed) in blob for _, s in withheld if s.seed)
    assert check_release(out, withheld).recoverable == 0
    first, last = min(s.published for _, s in withheld), max(s.published for _, s in withheld)
    assert f"papers dated {first} … {last};" in (out / "README.md").read_text()  # the listed dates, not "None"
    assert check_release(built.path, withheld).by_kind["answer id"] == len({r for r, _ in withheld})

    user = tmp_path / "user-ws"
    shutil.copytree(built.path, Layout.of(user).round_dir(full.name))
    code, text = cli("run", full.name, "--model", "baseline/lexical-choice", "--limit", "6", "--home", user)
    assert code == 0, text
    run_dir = Layout.of(user).run_dir(full.name, "baseline__lexical-choice")
    assert cli("score", run_dir, "--round-dir", out)[0] == 0
    assert all(s.error and s.error.startswith("label withheld") for s in read_scores(run_dir))

    aside = tmp_path / "aside"
    shutil.move(built.path, aside)
    try:
        code, text = cli("score", run_dir, "--home", ws.home)
    finally:
        shutil.move(aside, built.path)
    assert code == 0, text
    latest = {s.sample_id: s for s in read_scores(run_dir)}
    assert latest and all(s.error is None and s.metric == "accuracy" for s in latest.values())
    assert all("private key" in str(s.details["scored_against"]) for s in latest.values())


def test_the_checks_many_labels_measure_is_the_builds_overlap(corpus: Path) -> None:
    """`TextGrams` (one text hashed once, many labels tested) gives exactly `rounds.leakage.overlap`."""
    from academiceval.rounds.leakage import TextGrams, label_grams, overlap, overlap_of_hits
    from academiceval.testing.sample_round import load_unarxive_papers

    papers = load_unarxive_papers(corpus, max_papers=6, body_chars=6000)
    texts = [p["body"] + " " + q["abstract"][: 40 * (i + 1)] for i, (p, q) in enumerate(itertools.pairwise(papers))]
    labels = [p["abstract"] for p in papers] + [p["title"] for p in papers] + [texts[0][100:900]]
    seen = set()
    for text in texts:
        tg = TextGrams(text)
        for label in labels:
            g = label_grams(label)
            got = overlap_of_hits(tg.hits(g), g[0])
            assert got == overlap(label, text)
            seen.add(got.coverage > 0)
    assert seen == {True, False}  # both found and not found were compared


def test_the_check_finds_each_way_a_withheld_answer_can_be_planted(home: Path, tmp_path: Path) -> None:
    """Adversarial: into a clean release (0 recoverable) plant, one at a time, each way a withheld answer could
    travel — its abstract re-cased, unpunctuated and nested in an item's JSON field of a new parquet; a title in
    lower case inside the card; an abstract cut into two pieces each under the limits, in two different files;
    a seed as digits in a template; a withheld paper as a demonstration; an answer column in the listing — and
    check that each is found, naming the planted sample, and that nothing else is."""
    import pyarrow as pa

    out = tmp_path / "rel"
    assert cli("release", ROUND, out, "--home", home)[0] == 0
    withheld = withheld_of(Layout.of(home).round_dir(ROUND))
    assert check_release(out, withheld).recoverable == 0
    by_task = {s.task: (rid, s) for rid, s in withheld}
    abstracts = [(rid, s) for rid, s in withheld if s.task == "abstract"]
    abstract_id, abstract = max(abstracts, key=lambda x: len(x[1].label))
    title_id, title = by_task["title"]
    words = abstract.label.split()
    assert len(words) >= 90, len(words)  # room for two pieces under the limits whose union is over them
    seeded_id, seeded = next((rid, s) for rid, s in withheld if len(str(s.seed)) >= 6)
    abstract_ids = {rid for rid, s in withheld if s.label == abstract.label}  # one label, several settings
    title_ids = {rid for rid, s in withheld if s.label == title.label}
    assert abstract_id in abstract_ids and title_id in title_ids

    def planted(name: str, plant) -> dict[str, set[str]]:
        copy = shutil.copytree(out, tmp_path / name)
        plant(copy)
        report = check_release(copy, withheld)
        kinds: dict[str, set[str]] = {}
        for f in report.findings:
            kinds.setdefault(f.kind, set()).add(f.sample)
        assert report.recoverable == len({f.sample for f in report.findings}), name
        return kinds

    def write_parquet(path: Path, rows: list[dict]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), path)

    def in_item_json(d: Path) -> None:
        disguised = "".join(c for c in abstract.label.upper() if c.isalnum() or c.isspace())
        item = json.dumps({"question": "…", "options": ["A", "B"], "explanation": disguised})
        write_parquet(d / "data" / "extra" / "train.parquet", [{"sample_id": "x/y/1", "fields": {"item": item}}])

    def title_in_card(d: Path) -> None:
        card = d / "README.md"
        card.write_text(card.read_text() + f"\nSee also: {title.label.lower()}.\n")

    def spread(d: Path) -> None:
        (d / "README.md").write_text((d / "README.md").read_text() + "\n" + " ".join(words[0:35]) + "\n")
        (d / "LICENSES.md").write_text((d / "LICENSES.md").read_text() + "\n" + " ".join(words[45:80]) + "\n")

    def seed_in_template(d: Path) -> None:
        (d / "templates").mkdir(exist_ok=True)
        (d / "templates" / "extra.j2").write_text(f"{{# rng {seeded.seed} #}}\n{{{{ body }}}}\n")

    def demo_of_withheld_paper(d: Path) -> None:
        row = {"sample_id": "title/random:1/0000.00001", "arxiv_id": "0000.00001",
               "demos": [{"arxiv_id": f"{title.arxiv_id}v2", "label": "an older paper's title"}]}
        write_parquet(d / "data" / "extra" / "train.parquet", [row])

    def answer_column(d: Path) -> None:
        listing = d / "withheld" / "test.parquet"
        table = pq.read_table(listing)
        pq.write_table(table.append_column("label", pa.array(["x"] * table.num_rows)), listing)

    assert planted("json", in_item_json) == {"label text": abstract_ids}
    assert planted("card", title_in_card)["label text"] == title_ids
    assert planted("spread", spread) == {"label text": abstract_ids}
    spread_report = check_release(tmp_path / "spread", withheld)
    assert {f.file for f in spread_report.findings} == {"(several files)"}  # no single text was over the limits
    assert planted("seed", seed_in_template)["seed"] >= {seeded_id}
    same_paper = {rid for rid, s in withheld if s.arxiv_id == title.arxiv_id}
    assert planted("demo", demo_of_withheld_paper)["paper"] == same_paper
    assert planted("listing", answer_column)["listing field"] == {rid for rid, _ in withheld}
