"""The whole chain in one call: mirror index → collect → fetch + ingest PDFs → build a round → run → score → report.

`academiceval demo` is the README's first command, so it must work offline on a local mirror directory
(the repository's tests use `../shared/corpus`) and finish in minutes on a small machine. Every stage is the
owning package's public API; this module only chooses small, sensible arguments, reports progress and
summarizes each stage.

Re-running the demo into the same home resumes: the workspace is reused, an existing round is reused (a
rebuilt round would have a new manifest hash, which the runner rightly refuses to mix with old records), runs
resume from their records and scores are appended by metric configuration.

Runs a user added to the demo's rounds (`academiceval run demo --model …`) stay on the demo's leaderboard when it
is run again (issue 28 item 8): every run saved for the round on its current manifest is scored with the demo's
metrics (only what is missing) and reported beside the baselines; the stage table names them. A run made on an
earlier build of the round cannot be ranked with this one's samples: it is left out, by name, with how to rank it.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.families.cloze.build import build_cloze_round
from academiceval.graph.crawl import collect
from academiceval.graph.names import graph_from_list
from academiceval.models.registry import capabilities_of
from academiceval.papers.ingest import ingest_paths
from academiceval.report.render import make_report
from academiceval.rounds.build import build_round
from academiceval.rounds.config import BuildConfig
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.scores.citations import CITATION_METRICS
from academiceval.scores.config import ScoreConfig
from academiceval.scores.rescore import score_runs
from academiceval.sources import open_source
from academiceval.sources.mirror.disk import open_index
from academiceval.sources.mirror.workspace import first_authors_with_text, index_mirror, mirror_pdf_ids
from academiceval.sources.publist_import import import_publist
from academiceval.store.artifacts import MANIFEST, Layout, load_round, read_run_spec
from academiceval.store.models import RunSpec
from academiceval.store.publisher import EmptyOutputError
from academiceval.store.workspace import Workspace

BASELINES = ("baseline/lead", "baseline/extractive", "baseline/demo-copy")
CLOZE_BASELINES = ("baseline/random-choice", "baseline/lexical-choice")
SETTINGS = ("zero-shot", "random:1", "coauthor:1")
LADDER = ("32K", "64K")  # a small context ladder (rounds.ladder), so the report shows effective writing length
CITATION_LIST_SIZE = 100  # Related Work: cited works padded with older same-category distractors, as in AcademicEval
ROUND_NAME = "demo"
# a private round from one lab's own publication list (BibTeX + PDFs) in the corpus: co-author demos on real
# full texts; built in its own workspace (`<home>/lab`) so its co-author graph is the lab's
LAB_LIST = ("lab_publications", "comp-physics")
LAB_SETTINGS = ("zero-shot", "random:1", "coauthor:1", "mixed:1+1")
LAB_WINDOWS = (date(2024, 1, 1), date(2025, 1, 1))  # val from, test from (the list's dates are years)

# (stage, done, total or None, detail) — called often; must be cheap.
DemoProgress = Callable[[str, int, int | None, str], None]


class DemoError(AcademicEvalError):
    """A demo stage could not run (missing API, nothing to build from, ...)."""

    code = "demo"


@dataclass
class StageReport:
    name: str
    seconds: float = 0.0
    rows: list[tuple[str, object]] = field(default_factory=list)  # (what, value) for the summary table
    note: str = ""


@dataclass
class DemoSummary:
    home: Path
    round_name: str
    round_dir: Path | None = None
    run_dirs: list[Path] = field(default_factory=list)
    report_dir: Path | None = None
    index_html: Path | None = None
    leaderboard_md: Path | None = None
    results_json: Path | None = None
    lab_index_html: Path | None = None  # the lab publication-list round's leaderboard
    lab_results_json: Path | None = None  # its results, printed as tables like the main round's
    stages: list[StageReport] = field(default_factory=list)
    wall_s: float = 0.0
    user_runs: list[Path] = field(default_factory=list)  # runs the user added to the demo's rounds, kept
    stale_runs: list[Path] = field(default_factory=list)  # runs of an earlier build of a round: left out, named


@dataclass
class _Limits:
    """How much of the mirror the demo touches; `quick` keeps the test and CI run short."""

    max_authors: int
    seeds: int
    pdfs: int | None
    tasks: tuple[str, ...]
    per_config: int | None  # test samples run per task × setting (None: all)

    @classmethod
    def for_mode(cls, quick: bool) -> _Limits:
        if quick:
            return cls(max_authors=8, seeds=4, pdfs=4, tasks=("title", "abstract"), per_config=12)
        return cls(
            max_authors=40,
            seeds=12,
            pdfs=None,
            tasks=("title", "abstract", "introduction", "related_work"),
            per_config=None,
        )


def default_corpus() -> Path | None:
    """`../shared/corpus` next to the checkout or the working directory, when it exists."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        cand = base.parent / "shared" / "corpus"
        if cand.is_dir():
            return cand
    return None


def _timed(summary: DemoSummary, name: str) -> StageReport:
    st = StageReport(name)
    summary.stages.append(st)
    return st


def run_demo(
    corpus_dir: str | Path | None = None,
    *,
    home: str | Path,
    models: Sequence[str] = (),
    base_url: str | None = None,
    workers: int = 2,
    quick: bool = False,
    source: str = "mirror",
    seed_authors: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    round_name: str = ROUND_NAME,
    progress: DemoProgress | None = None,
    on_stage: Callable[[StageReport], None] | None = None,
    lab: bool | None = None,
) -> DemoSummary:
    """Run the whole chain into workspace `home` and return where everything went.

    `corpus_dir` is the local mirror (default: `../shared/corpus`); `source="arxiv"` uses the live API instead
    (then `seed_authors` are required and PDFs are fetched on demand while building the round). `models` are
    run after the three baselines; `base_url` is passed to OpenAI-compatible ones. `metrics` default to ROUGE-L
    plus BERTScore with the packaged MiniLM when torch is installed. `on_stage` is called with each stage's
    report as soon as the stage is finished (the CLI prints its table then). `lab` (default: on, except with
    `quick` or `--source arxiv`) also builds, runs, scores and reports a round from the lab publication list in the
    corpus (`lab_publications/comp-physics`): zero-shot / random / co-author / mixed on real journal full texts.
    """
    t_start = time.perf_counter()
    say = progress or (lambda stage, done, total, detail="": None)
    limits = _Limits.for_mode(quick)
    online = source == "arxiv"
    corpus = None if online else Path(corpus_dir) if corpus_dir else default_corpus()
    if not online and (corpus is None or not corpus.is_dir()):
        raise ConfigError(
            f"mirror directory not found: {corpus_dir or '../shared/corpus'}",
            hint="pass --corpus DIR (a folder of arXiv metadata and PDFs) or --source arxiv",
        )
    if online and not seed_authors:
        raise ConfigError("--source arxiv needs at least one --seed-author", hint="e.g. --seed-author 'Jane Doe'")
    ws = Workspace(home)
    summary = DemoSummary(home=ws.home, round_name=round_name)
    done = on_stage or (lambda st: None)
    try:
        src = _index_and_open(ws, corpus, online, summary, say)
        done(summary.stages[-1])
        _collect(ws, src, seed_authors, limits, summary, say)
        done(summary.stages[-1])
        if not online:
            _fetch_and_ingest(ws, src, limits, workers, summary, say)
            done(summary.stages[-1])
        _build(ws, src, online, round_name, limits, summary, say)
        done(summary.stages[-1])
        _run_models(ws, [*BASELINES, *models], base_url, limits.per_config, summary, say)
        done(summary.stages[-1])
        _score(ws, summary, metrics, say)
        done(summary.stages[-1])
        if not online:
            _cloze(ws, [*CLOZE_BASELINES, *models], base_url, limits, summary, say)
            done(summary.stages[-1])
        _report(ws, summary, say)
        done(summary.stages[-1])
        lab_dir = corpus.joinpath(*LAB_LIST) if corpus is not None else None
        if (lab if lab is not None else not (quick or online)) and lab_dir is not None and lab_dir.is_dir():
            _lab_round(ws.home / "lab", lab_dir, [*BASELINES, *models], base_url, limits, metrics, summary, say)
            done(summary.stages[-1])
    finally:
        summary.wall_s = time.perf_counter() - t_start
        ws.close()
    return summary


def _index_and_open(ws, corpus, online, summary, say):
    st = _timed(summary, "index")
    t0 = time.perf_counter()
    if online:
        st.note = "live arXiv API (no local index)"
        src = open_source("arxiv")
    else:
        # the mirror is read once, into an on-disk index in the workspace (the next run only reads what changed);
        # the workspace's tables and the query source are both filled from it
        disk = open_index(
            corpus, index_dir=ws.home / "mirror-index", progress=lambda name, n, total: say("index", n, total, name)
        )
        rep = index_mirror(ws, corpus, index=disk)
        # per format: files, records read, ... (the report's own row layout; shown as it comes)
        st.rows = [(f"{row[0]} (files, records, ...)", " / ".join(map(str, row[1:]))) for row in rep.rows()]
        st.rows += [
            ("papers (metadata)", rep.papers_stored),
            ("pre-parsed papers", rep.parsed_papers_stored),
            ("PDFs in the mirror", rep.pdfs_found),
        ]
        say("index", 1, 1, "opening the mirror as a query source")
        src = open_source(str(corpus), index=disk)
    st.seconds = time.perf_counter() - t0
    return src


def _collect(ws, src, seed_authors, limits, summary, say) -> None:
    st = _timed(summary, "collect")
    t0 = time.perf_counter()
    seeds = list(seed_authors) or first_authors_with_text(ws, limits.seeds)
    if not seeds:
        raise DemoError("no seed author found in the mirror's metadata", hint="pass --seed-author 'Jane Doe'")
    rep = collect(
        ws,
        src,
        seeds,
        max_authors=limits.max_authors,
        top_k=10,
        papers_per_author=50,
        progress=lambda done, cap, name: say("collect", done, cap, name),
    )
    st.rows = [
        ("seed authors", ", ".join(seeds[:4]) + (f" (+{len(seeds) - 4})" if len(seeds) > 4 else "")),
        ("authors visited", rep.visited_total),
        ("graph nodes / edges", f"{rep.nodes} / {rep.edges}"),
        ("papers in graph", rep.papers),
        ("source queries", rep.api_calls),
        ("failed authors", rep.failed),
    ]
    if rep.stopped_early:
        st.note = f"stopped early: {rep.stopped_early}"
    st.seconds = time.perf_counter() - t0


def _fetch_and_ingest(ws, src, limits, workers, summary, say) -> None:
    st = _timed(summary, "fetch + ingest")
    t0 = time.perf_counter()
    ids = mirror_pdf_ids(ws, limits.pdfs)
    paths, fetch_errors = [], 0
    for i, aid in enumerate(ids, 1):
        say("fetch", i, len(ids), aid)
        try:
            paths.append(src.fetch_pdf(aid, ws.pdf_dir))
        except AcademicEvalError:
            fetch_errors += 1
    done = [0]

    def on_file(r) -> None:
        done[0] += 1
        say("ingest", done[0], len(paths), Path(r.path).name)

    rep = ingest_paths(ws, paths, workers=max(1, workers), progress=on_file)
    st.rows = [
        ("PDFs fetched from the mirror", len(paths)),
        ("fetch errors", fetch_errors),
        ("parsed now / already stored", f"{len(rep.ok)} / {len(rep.skipped)}"),
        ("failed", len(rep.failed)),
        ("sections parsed", sum(r.sections for r in rep.ok + rep.skipped)),
    ]
    if rep.failed:
        st.note = "; ".join(f"{Path(r.path).name}: {r.code}" for r in rep.failed[:3])
    st.seconds = time.perf_counter() - t0


def _build(ws, src, online, round_name, limits, summary, say) -> None:
    st = _timed(summary, "build")
    t0 = time.perf_counter()
    round_dir = ws.layout.round_dir(round_name)
    if (round_dir / MANIFEST).is_file():
        manifest = load_round(round_dir, verify=True).manifest
        st.note = "reused the existing round (runs resume against the same manifest)"
    else:
        config = BuildConfig(
            settings=list(SETTINGS),
            tasks=list(limits.tasks),
            fetch=online,
            max_fetch=20 if online else None,
            ladder=list(LADDER),
            citation_list_size=CITATION_LIST_SIZE,
        )
        manifest = build_round(
            ws,
            round_name,
            config,
            source=src,
            progress=lambda stage, done, total: say("build", done, total, stage),
        )
    summary.round_dir = round_dir
    w = manifest.windows
    st.rows = [
        ("round", f"{manifest.round} ({round_dir})"),
        ("train ≤", w.train_until),
        ("val", f"{w.val_from} … {w.val_until}"),
        ("test", f"{w.test_from} … {w.test_until}"),
    ]
    configs = getattr(manifest, "configs", {}) or {}
    for config, counts in sorted(manifest.counts.items()):
        info = configs.get(config)
        what = f"{info.task}/{info.setting} ({config})" if info is not None else config
        st.rows.append((f"samples {what}", ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))))
    for key, reasons in sorted(manifest.skipped.items()):
        if key == "papers":  # metadata-only papers (most of a mirror) are counted, not worth a line each;
            gate = sorted((r, n) for r, n in reasons.items() if r.startswith("quality:"))  # the quality gate's are
            st.rows += [("excluded papers", f"{r.removeprefix('quality: ')} ×{n}") for r, n in gate]
            continue
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:1]
        st.rows += [(f"not built {key}", f"{reason} ×{n}") for reason, n in top]
    warnings = sorted((manifest.notes or {}).get("splits", {}))
    st.rows += [("split warning", w.removeprefix("warning: ")) for w in warnings]
    if not any(c.get("test") for c in manifest.counts.values()):
        raise DemoError(
            f"round {round_name} has no test samples",
            source=str(round_dir),
            hint="the mirror needs papers with both metadata and a parsed text; see the build summary",
        )
    st.seconds = time.perf_counter() - t0


def users_runs(layout: Layout, round_dir: Path, ours: Sequence[Path]) -> tuple[dict[Path, RunSpec], list[Path]]:
    """The runs saved for this round besides `ours` (the demo's own): (made on the round as it is now, with their
    specs — they join the leaderboard —, made on an earlier build of it — they cannot be ranked with it)."""
    current = load_round(round_dir, verify=False).manifest_sha256
    mine = {Path(p).resolve() for p in ours}
    kept: dict[Path, RunSpec] = {}
    stale: list[Path] = []
    for d in layout.round_runs(round_dir.name):
        spec = read_run_spec(d)
        if d.resolve() in mine or spec is None:
            continue
        if spec.round_manifest_sha256 == current:
            kept[d] = spec
        else:
            stale.append(d)
    return kept, stale


def _keep_users_runs(layout: Layout, round_dir: Path, ours: list[Path], st: StageReport, summary: DemoSummary) -> None:
    """Add the user's runs of this round to `ours` (scored and reported with the demo's), and say which."""
    kept, stale = users_runs(layout, round_dir, ours)
    for d, spec in kept.items():
        st.rows.append((spec.label, f"your run, kept on the leaderboard ({round_dir.name}/{d.name})"))
    ours.extend(kept)
    summary.user_runs.extend(kept)
    summary.stale_runs.extend(stale)
    if stale:
        names = ", ".join(f"{round_dir.name}/{d.name}" for d in stale)
        st.note = (
            f"left out {len(stale)} run(s) made on an earlier build (or a release) of round {round_dir.name}, whose "
            f"samples are not this build's: {names}; to rank a model here, run it again with --run-name NEW (its old "
            "records stay)"
        )


def _run_models(ws, specs, base_url, per_config, summary, say) -> None:
    st = _timed(summary, "run")
    t0 = time.perf_counter()
    for spec in specs:
        t1 = time.perf_counter()
        config = RunConfig(
            model=spec,
            splits=["test"],
            limit=per_config,
            base_url=base_url if capabilities_of(spec).base_url else None,
        )
        res = run_round(
            ws, summary.round_dir, config, progress=lambda done, total, spec=spec: say("run", done, total, spec)
        )
        summary.run_dirs.append(Path(res.run_dir))
        st.rows.append(
            (
                spec,
                f"{res.total('done')} done, {res.total('already_done')} resumed, {res.total('errors')} errors, "
                f"{res.total('truncated')} truncated ({time.perf_counter() - t1:.1f}s)",
            )
        )
    _keep_users_runs(ws.layout, summary.round_dir, summary.run_dirs, st, summary)
    st.seconds = time.perf_counter() - t0


def default_metrics() -> list[str]:
    """ROUGE-L always; BERTScore (packaged MiniLM) when torch is installed; citation faithfulness (precision,
    recall, unlisted, reference coverage), which scores only the Related Work records."""
    metrics = ["rouge-l"]
    if importlib.util.find_spec("torch") is not None:
        metrics.append("bertscore")
    return [*metrics, *CITATION_METRICS]


def _score(ws, summary, metrics, say) -> None:
    st = _timed(summary, "score")
    t0 = time.perf_counter()
    chosen = list(metrics) if metrics else default_metrics()
    results = score_runs(
        summary.run_dirs,
        ScoreConfig(metrics=chosen),
        home=ws.home,
        progress=lambda desc, done, total: say("score", done, total, desc),
    )
    st.rows = [("metrics", ", ".join(chosen))]
    for res in results:
        per_metric = ", ".join(
            f"{m}: {n} new" + (f" ({res.errors.get(m, 0)} errors)" if res.errors.get(m) else "")
            for m, n in sorted(res.written.items())
        )
        st.rows.append((res.label, per_metric or "already scored"))
    st.seconds = time.perf_counter() - t0


DEMO_MARKER = ".written-by-demo"  # lists the files the demo's report holds


def _listing(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != DEMO_MARKER)


def keep_earlier_report(out: Path) -> Path | None:
    """A report directory already holding files that the demo did not write (a user's `report --round demo`, or
    files added to it) is moved aside to `NAME.before-<UTC time>` rather than overwritten; returns where it went.
    The demo's own earlier report (its marker file, nothing else touched) is simply replaced."""
    if not out.is_dir() or not any(out.iterdir()):
        return None
    marker = out / DEMO_MARKER
    if marker.is_file() and marker.read_text(encoding="utf-8").split() == _listing(out):
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    dest = out.with_name(f"{out.name}.before-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = out.with_name(f"{out.name}.before-{stamp}-{n}")
    out.rename(dest)
    return dest


def _cloze(ws, specs, base_url, limits, summary, say) -> None:
    """Citation cloze (SCALAR presets) from the same store: build, run the choice baselines (and the user's
    models), score accuracy; the runs join the report. Skipped, with a note, when the store yields no question."""
    st = _timed(summary, "cloze")
    t0 = time.perf_counter()
    name = f"{summary.round_name}-cloze"
    rdir = ws.rounds_dir / name
    if (rdir / MANIFEST).is_file():
        st.rows.append(("round", f"{name} (existing, reused)"))
    else:
        cap = 20 if limits.per_config else 100
        try:
            rep = build_cloze_round(
                ws, name, overrides={"max_questions": cap}, progress=lambda s, d, t: say("cloze", d, t, s)
            )
        except EmptyOutputError:  # nothing is written for a round without questions
            st.note = "no citation-cloze question could be built from this store"
            st.seconds = time.perf_counter() - t0
            return
        st.rows.append(("round", f"{name}: " + ", ".join(f"{k} {len(v)}" for k, v in rep.items.items())))
    runs = []
    for spec in specs:
        config = RunConfig(
            model=spec,
            splits=["test"],
            limit=limits.per_config,
            base_url=base_url if capabilities_of(spec).base_url else None,
        )
        res = run_round(ws, rdir, config, progress=lambda done, total, spec=spec: say("cloze", done, total, spec))
        runs.append(Path(res.run_dir))
    _keep_users_runs(ws.layout, rdir, runs, st, summary)
    results = score_runs(
        runs,
        ScoreConfig(metrics=["accuracy"]),
        home=ws.home,
        progress=lambda desc, done, total: say("cloze", done, total, desc),
    )
    for res in results:
        if res.summary is None:
            continue
        accs = [f"{m.setting} {m.values['accuracy'].mean:.2f}" for m in res.summary if m.metric == "accuracy"]
        st.rows.append((res.label, "accuracy " + ", ".join(accs)))
    summary.run_dirs.extend(runs)
    st.seconds = time.perf_counter() - t0


def _report(ws, summary, say) -> None:
    st = _timed(summary, "report")
    t0 = time.perf_counter()
    say("report", 0, 1, "rendering")
    out = ws.layout.report_dir(summary.round_name)
    kept = keep_earlier_report(out)
    paths = make_report(summary.run_dirs, out, rounds_dir=ws.rounds_dir)
    (out / DEMO_MARKER).write_text("\n".join(_listing(out)) + "\n", encoding="utf-8")
    say("report", 1, 1, "done")
    summary.report_dir = paths.out_dir
    summary.index_html = paths.index_html
    summary.leaderboard_md = paths.leaderboard_md
    summary.results_json = paths.results_json
    res = paths.results
    st.rows = [("rows (model × task × setting)", len(res.rows) if res else 0)]
    if res:
        st.rows += [("problems", len(res.problems))]
    st.rows.append(("HTML", paths.index_html))
    if kept is not None:
        st.note = f"an earlier report in {out} was moved to {kept} (nothing is overwritten)"
        st.rows.append(("earlier report moved to", kept))
    st.seconds = time.perf_counter() - t0


def _lab_round(home, lab_dir, specs, base_url, limits, metrics, summary, say) -> None:
    """Import the lab list (PDFs checked against their entries, names merged on evidence, co-author graph), build
    a round with co-author and mixed settings, run the baselines (and models), score and report it."""
    st = _timed(summary, "lab round")
    t0 = time.perf_counter()
    lws = Workspace(home)
    try:
        rep = import_publist(lws, lab_dir, progress=lambda stage, done, total: say("lab", done, total, stage))
        g = graph_from_list(lws, list(lws.iter_meta("source='publist'")))
        name = "lab"
        round_dir = lws.layout.round_dir(name)
        if (round_dir / MANIFEST).is_file():
            manifest = load_round(round_dir, verify=True).manifest
        else:
            config = BuildConfig(
                settings=list(LAB_SETTINGS),
                tasks=list(limits.tasks),
                val_from=LAB_WINDOWS[0],
                test_from=LAB_WINDOWS[1],
                fetch=False,
                citation_list_size=CITATION_LIST_SIZE,
            )
            manifest = build_round(
                lws, name, config, progress=lambda stage, done, total: say("lab", done, total, stage)
            )
        run_dirs = []
        for spec in specs:
            config = RunConfig(
                model=spec,
                splits=["test"],
                limit=limits.per_config,
                base_url=base_url if capabilities_of(spec).base_url else None,
            )
            run_dirs.append(Path(run_round(lws, round_dir, config).run_dir))
        _keep_users_runs(lws.layout, round_dir, run_dirs, st, summary)
        chosen = list(metrics) if metrics else default_metrics()
        score_runs(run_dirs, ScoreConfig(metrics=chosen), home=lws.home)
        lab_out = lws.reports_dir / name
        lab_kept = keep_earlier_report(lab_out)  # a user's reports/lab is moved aside, never overwritten
        paths = make_report(run_dirs, lab_out, rounds_dir=lws.rounds_dir)
        (lab_out / DEMO_MARKER).write_text("\n".join(_listing(lab_out)) + "\n", encoding="utf-8")
        if lab_kept is not None:
            st.note = f"an earlier report in {lab_out} was moved to {lab_kept}"
        summary.lab_index_html = paths.index_html
        summary.lab_results_json = paths.results_json
        co = {c: n for c, n in manifest.counts.items() if "-coauthor" in c or "-mixed" in c}
        st.rows[:0] = [  # before the user's runs kept (`_keep_users_runs`)
            (
                "publication list",
                f"{rep.entries} entries, {len(rep.attached)} PDFs attached, {len(rep.issues)} problems reported",
            ),
            (
                "co-author graph",
                f"{g.nodes} people ({sum(len(m.keys) - 1 for m in rep.merges)} name variants merged on evidence), "
                f"{g.edges} pairs, {g.components} component(s)",
            ),
            ("round", f"{manifest.round} ({round_dir})"),
            *[(f"samples {c}", ", ".join(f"{k} {v}" for k, v in sorted(n.items()))) for c, n in sorted(co.items())],
            ("leaderboard", paths.index_html),
        ]
    finally:
        lws.close()
    st.seconds = time.perf_counter() - t0
