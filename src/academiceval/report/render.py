"""`academiceval report`: saved runs → results.json, leaderboard.md, index.html, examples.html and plots/.

The page is static and self-contained (inline CSS, figures as files beside it, no external URLs) so it can
be opened from disk, attached to an issue or served by any static host. Every model output is untrusted text
and is HTML-escaped by jinja2's autoescaping; nothing from a record is ever marked safe.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path

from academiceval.papers.clean import readable
from academiceval.report import by_date, contamination, ladder, paired, plots
from academiceval.report import leaderboard as lb
from academiceval.report.choice import choice_view, pick_text, question_text
from academiceval.report.results import BootstrapConfig, Results, build_results
from academiceval.report.rounddata import round_samples
from academiceval.rounds.tokens import count_tokens
from academiceval.scores.windows import in_window
from academiceval.store.artifacts import RESULTS, RunData, find_run_dirs, load_run
from academiceval.store.tasks import task_specs

MAX_EXAMPLE_CHARS = 6000  # longer texts are cut on the examples page (the full text is in the run records)


@dataclass
class ReportPaths:
    out_dir: Path
    results_json: Path
    leaderboard_md: Path
    index_html: Path
    examples_html: Path
    figures: list[Path] = field(default_factory=list)
    results: Results | None = None


@dataclass
class Example:
    sample_id: str
    arxiv_id: str
    published: date
    reference: str | None
    outputs: list[tuple[str, str, str]]  # (label, output or error, score text)


def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("academiceval.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["est"] = lb.fmt
    env.filters["est_html"] = _est_html
    env.filters["verdict"] = paired.verdict_text
    env.tests["low_n"] = lb.low_n
    env.globals["min_n_for_ci"] = lb.MIN_N_FOR_CI
    return env


def _est_html(est, digits: int = 3):
    """An estimate as page HTML: the mean, then its interval in small type or, below the low-n rule, "n=K, low n"
    (the same rule and words as the Markdown tables)."""
    from markupsafe import Markup, escape  # jinja2's own dependency, loaded with it in _env

    if est is None or est.mean is None:
        return Markup("—")
    mean = f"{est.mean:.{digits}f}"
    if lb.low_n(est):
        tip = f"fewer than {lb.MIN_N_FOR_CI} samples: no interval shown"
        return Markup('{} <span class="ci warn" title="{}">n={}, low n</span>').format(mean, tip, est.n)
    if est.ci_low is None or est.ci_high is None:
        return escape(mean)
    ci = f"[{est.ci_low:.{digits}f}, {est.ci_high:.{digits}f}]"
    return Markup('{} <span class="ci">{}</span>').format(mean, ci)


def _write_atomic(path: Path, text: str) -> None:
    """Temp file, then rename: a report killed mid-write leaves the previous page whole, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _css() -> str:
    return resources.files("academiceval.report").joinpath("templates", "report.css").read_text(encoding="utf-8")


def _clip(text: str) -> str:
    """The text as the examples page shows it: LaTeX left outside math read as words (`papers.clean.readable`:
    an author's `\\ourmethod`, `\\url{…}`), cut after MAX_EXAMPLE_CHARS. The run records keep the exact text."""
    text = readable(text)
    if len(text) <= MAX_EXAMPLE_CHARS:
        return text
    return text[:MAX_EXAMPLE_CHARS] + f"\n… [{len(text) - MAX_EXAMPLE_CHARS} more characters]"


def examples(
    results: Results,
    runs: Sequence[RunData],
    metric: str | None,
    *,
    per_task: int = 3,
    rounds_dir: str | Path | None = None,
) -> dict[tuple[str, str, str], list[Example]]:
    """(round, task, setting) -> a few samples with the reference and every run's output beside it.

    Samples are those answered by the most runs (then by id), so the comparison is as complete as possible
    and the choice is the same on every re-render.
    """
    out: dict[tuple[str, str, str], list[Example]] = {}
    after, split = results.window.after, results.split
    by_round: dict[str, list[RunData]] = defaultdict(list)
    for r in runs:
        by_round[r.spec.round].append(r)
    for rnd, rruns in sorted(by_round.items()):
        refs = round_samples(rnd, rounds_dir=rounds_dir, run_dir=rruns[0].path) or {}
        for task in results.tasks():
            settings = results.settings(task)
            if not settings:
                continue
            setting = settings[0]
            have: dict[str, int] = defaultdict(int)
            for run in rruns:
                for rec in run.records.values():
                    same = rec.task == task and rec.setting == setting and (not split or rec.split == split)
                    if same and in_window(rec.published, after, rec.date_precision):
                        have[rec.sample_id] += 1
            chosen = sorted(have, key=lambda s: (-have[s], s))[:per_task]
            exs = []
            for sid in chosen:
                first = next(run.records[sid] for run in rruns if sid in run.records)
                ref = refs.get(sid)
                item = choice_view(ref) if ref is not None else None
                outs = []
                for run in sorted(rruns, key=lambda r: r.label):
                    rec = run.records.get(sid)
                    if rec is None:
                        continue
                    text = f"[error] {rec.error}" if rec.error else _clip(rec.output)
                    if item is not None and not rec.error:
                        text = f"{pick_text(item, rec.output)}\n\n{text}"
                    score = ""
                    if metric:
                        for (s2, m, _h), sr in run.scores.items():
                            if s2 == sid and (m == metric or metric.startswith(m + "@")) and sr.values:
                                key = "f" if "f" in sr.values else sorted(sr.values)[0]
                                score = f"{m} {key} = {sr.values[key]:.3f}"
                    outs.append((run.label, text, score))
                shown = (question_text(item) if item is not None else _clip(ref.label)) if ref else None
                exs.append(Example(sid, first.arxiv_id, first.published, shown, outs))
            if exs:
                out[(rnd, task, setting)] = exs
    return out


def render(
    results: Results,
    runs: Sequence[RunData],
    out_dir: str | Path,
    *,
    prefer_metric: str | None = None,
    rounds_dir: str | Path | None = None,
    examples_per_task: int = 3,
) -> ReportPaths:
    """Write every report file for already computed `results` (and the runs they came from, for plots)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results.paired = paired.adjacent_pairs(results, runs, prefer_metric)
    results.contamination = contamination.contamination_gaps(results, runs, prefer_metric=prefer_metric)
    results.ladders = ladder.ladders(results, runs, prefer_metric)
    results.effective_length = ladder.effective_lengths(results.ladders)
    results.by_date = by_date.score_by_date(results, runs, prefer_metric)
    results_json = results.write(out / RESULTS)
    md = out / "leaderboard.md"
    sections = (paired, contamination, ladder, by_date)
    extra = "".join(section.markdown(results) for section in sections)
    _write_atomic(md, lb.to_markdown(results, prefer_metric) + extra)

    metric = results.primary_metric(None, prefer_metric)
    figures: list[plots.Figure] = []
    if metric:
        value_key = next((r.metrics[metric].primary for r in results.rows if metric in r.metrics), "f")
        lengths = fallback_lengths(runs, rounds_dir)
        points = plots.sample_points(
            runs, metric, value_key, after=results.window.after, split=results.split, lengths=lengths
        )
        effects = plots.fewshot_effects(results, points, seed=results.bootstrap.seed)
        for fig in (
            plots.plot_length(
                results,
                points,
                metric,
                value_key,
                out,
                x_label="input tokens"
                + (" (BERT WordPiece of the round's prompt where the run has none)" if lengths else ""),
            ),
            plots.plot_settings(results, metric, out),
            plots.plot_fewshot(results, effects, metric, out),
            ladder.plot(results, out),
        ):
            if fig is not None:
                figures.append(fig)

    env = _env()
    common = {
        "results": results,
        "css": _css(),
        "window": lb.window_text(results),
        "rounds": sorted({(r.round, r.round_manifest_sha256) for r in results.rows}),
    }
    index = out / "index.html"
    _write_atomic(
        index,
        env.get_template("index.html.j2").render(
            **common,
            tables=lb.tables(results, prefer_metric),
            figures=figures,
            task_titles={s.name: s.title for s in task_specs()},
            overview=_overview(results, prefer_metric),
            empty_window=lb.empty_window_text(results),
            low_n_line=lb.low_n_summary(results),
        ),
    )
    ex = out / "examples.html"
    _write_atomic(
        ex,
        env.get_template("examples.html.j2").render(
            **common,
            metric=metric,
            groups=examples(results, runs, metric, per_task=examples_per_task, rounds_dir=rounds_dir),
            task_titles={s.name: s.title for s in task_specs()},
        ),
    )
    return ReportPaths(
        out_dir=out,
        results_json=results_json,
        leaderboard_md=md,
        index_html=index,
        examples_html=ex,
        figures=[out / f.png for f in figures] + [out / f.svg for f in figures],
        results=results,
    )


def fallback_lengths(runs: Sequence[RunData], rounds_dir: str | Path | None) -> dict[tuple[str, str], int]:
    """(round, sample_id) -> WordPiece tokens of the sample's default prompt (as the round build measured it;
    counted here from fields + demos only for rounds that lack it), for records whose backend did not count
    input tokens. Empty when every record has a count or the round cannot be read."""
    need: dict[str, set[str]] = defaultdict(set)
    first_dir: dict[str, Path] = {}
    for run in runs:
        for sid, rec in run.records.items():
            if not rec.input_tokens and not rec.error:
                need[run.spec.round].add(sid)
                first_dir.setdefault(run.spec.round, run.path)
    out: dict[tuple[str, str], int] = {}
    if not need:
        return out

    for rnd, sids in need.items():
        samples = round_samples(rnd, rounds_dir=rounds_dir, run_dir=first_dir[rnd]) or {}
        ids = sorted(sid for sid in sids if sid in samples)
        # The same body appears in many samples (every setting, and as other targets' demos): count each
        # distinct text once. WordPiece counts add up over whitespace-joined parts, so the sums are exact.
        parts_of: dict[str, list[str]] = {}
        for sid in ids:
            s = samples[sid]
            measured = getattr(s, "input_tokens", None)  # counted by the round build on the default prompt
            if measured:
                out[(rnd, sid)] = int(measured)
                continue
            parts = list(s.fields.values()) + [v for d in s.demos for v in (*d.fields.values(), d.label)]
            parts += [f"{c.title} {c.abstract}" for c in s.citations]
            parts_of[sid] = parts
        unique = sorted({p for parts in parts_of.values() for p in parts})
        counted = dict(zip(unique, count_tokens(unique), strict=True)) if unique else {}
        for sid, parts in parts_of.items():
            out[(rnd, sid)] = sum(counted[p] for p in parts)
    return out


def _overview(results: Results, prefer_metric: str | None) -> dict:
    """Label × (task, setting) matrix of the ranking metric, for the top of the page: drawn as one small table per
    task (side by side, wrapping), each cell the mean with its interval or the low-n marker."""
    cols = [(t, s, results.primary_metric(t, prefer_metric)) for t in results.tasks() for s in results.settings(t)]
    cells = {}
    for r in results.rows:
        for t, s, m in cols:
            if r.task == t and r.setting == s and m in r.metrics:
                cells[(r.round, r.label, t, s)] = r.metrics[m].main
    best: set[tuple[str, str, str, str]] = set()  # (round, label, task, setting) of each column's top mean
    for rnd in {r.round for r in results.rows}:
        for t, st, _ in cols:
            col = {
                k: e.mean for k, e in cells.items() if k[0] == rnd and k[2] == t and k[3] == st and e.mean is not None
            }
            if len(col) > 1:
                top = max(col.values())
                best |= {k for k, v in col.items() if v == top}
    groups: dict[str, list[tuple[str, str | None]]] = {}  # task -> its (setting, metric) columns, in page order
    for t, s, m in cols:
        groups.setdefault(t, []).append((s, m))
    return {
        "columns": cols,
        "groups": list(groups.items()),  # one small table per task: the overview wraps to the page's width
        "rows": sorted({(r.round, r.label) for r in results.rows}),
        "cells": cells,
        "best": best,
    }


def make_report(
    runs: str | Path | Iterable[str | Path],
    out_dir: str | Path,
    *,
    round_name: str | None = None,
    after: date | None = None,
    after_reason: str | None = None,
    split: str | None = None,
    prefer_metric: str | None = None,
    rounds_dir: str | Path | None = None,
    bootstrap: BootstrapConfig | None = None,
    examples_per_task: int = 3,
) -> ReportPaths:
    """Load saved runs, summarize them (window applied to saved records) and write the report."""
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    loaded = [load_run(d) for d in find_run_dirs(paths)]
    if round_name:
        loaded = [r for r in loaded if r.spec.round == round_name]
    results = build_results(
        loaded,
        after=after,
        after_reason=after_reason,
        split=split,
        rounds_dir=rounds_dir,
        bootstrap=bootstrap,
    )
    return render(
        results,
        loaded,
        out_dir,
        prefer_metric=prefer_metric,
        rounds_dir=rounds_dir,
        examples_per_task=examples_per_task,
    )
