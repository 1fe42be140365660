"""`build_cloze_round`: the citation-cloze family built live from the paper store.

Question papers are every stored paper with references and in-text citations whose v1 date is after the
round's cutoff (the live guard, `cutoff`; papers without a known date are skipped and counted). References are
linked to stored papers first (`papers.links`), then each level's questions are generated — by the filtered
construction (`filtered`, the default: cleaned texts, defect-free items, distractors balanced against the blind
guessers, then the level check of `balance`) or by SCALAR's exact one (`generate`, `construction="scalar"`) —
and written in the round format (`export`) with the blind guessers' accuracy per level and the item defects
(`stats.json`). Everything skipped is counted with its reason per level in the manifest.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.families.cloze.balance import cap_per_paper, level_check, select_level
from academiceval.families.cloze.classify import JudgeClassifier
from academiceval.families.cloze.cutoff import resolve_cutoff
from academiceval.families.cloze.defects import round_defects
from academiceval.families.cloze.export import config_name, write_round
from academiceval.families.cloze.filtered import Context, Pending, generate_filtered
from academiceval.families.cloze.generate import PaperResult, cap_items, generate_for_paper
from academiceval.families.cloze.guess import CHANCE, Known, as_json, flagged, guesser_accuracy, level_of, views_of
from academiceval.families.cloze.library import CandidateLibrary
from academiceval.families.cloze.models import (
    CONSTRUCTIONS,
    PRESETS,
    ClozeBuildConfig,
    ClozeItem,
    ClozeOptions,
    TypeDecision,
    preset_name,
)
from academiceval.families.cloze.prompt import render_item
from academiceval.families.cloze.stats import cloze_stats
from academiceval.families.cloze.tokens import TokenCounter, get_counter
from academiceval.models.choice_guessers import guess
from academiceval.papers.links import link_all
from academiceval.rounds.publish import _created_at
from academiceval.store.artifacts import check_name
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import RoundManifest, SplitWindows
from academiceval.store.paper_models import Paper
from academiceval.store.publisher import check_destination
from academiceval.store.workspace import Workspace

Progress = Callable[[str, int, int], None]


@dataclass
class ClozeBuildReport:
    manifest: RoundManifest
    path: Path
    items: dict[str, list[ClozeItem]]
    skips: dict[str, Counter[str]]
    types: list[TypeDecision] = field(default_factory=list)
    seconds: float = 0.0
    question_papers: int = 0
    links: dict[str, int] = field(default_factory=dict)
    cutoff: date | None = None
    cutoff_source: str = ""
    guessers: dict[str, Any] = field(default_factory=dict)  # guesser → level → accuracy, CI (stats.json)
    defects: dict[str, Any] = field(default_factory=dict)  # level → defects by kind
    notes: dict[str, Counter[str]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)  # "guesser level accuracy" above chance + the flag margin


def prompt_tokens(item: ClozeItem, counter: TokenCounter, templates_dir: str | Path | None) -> int:
    """Tokens of the rendered prompt without re-tokenising it: WordPiece counts add up over text joined at
    whitespace, so prompt = skeleton (template with empty texts) + paper + candidates (exact for WordPiece;
    other tokenizers count the whole prompt)."""
    if not counter.name.endswith("wordpiece"):
        return counter.count(render_item(item, templates_dir=templates_dir))
    skeleton = render_item(item, templates_dir=templates_dir, paper="", candidate_texts=["" for _ in item.candidates])
    paper = item.paper_tokens if item.paper_tokens is not None else counter.count(item.paper)
    return counter.count(skeleton) + paper + sum(c.tokens or 0 for c in item.candidates)


def level_label(level: str, o: ClozeOptions) -> str:
    """The preset an item records: the level's name while its defining knobs equal it, else "custom"."""
    if level in PRESETS:
        return level if preset_name(o) == level else "custom"
    return level


def all_types(paper: Paper) -> list[TypeDecision]:
    """Heuristic type next to the source's stored type for every citation that has one (agreement figures)."""
    from academiceval.families.cloze.classify import SCALAR_TYPES, heuristic_type

    out = []
    for c in paper.citations:
        src = c.source_labels.get("scalar_citation_type")
        if src in SCALAR_TYPES and 0 <= c.section_index < len(paper.sections):
            h, rule = heuristic_type(paper.sections[c.section_index].text, c.start, c.end)
            out.append(TypeDecision(heuristic=h, heuristic_rule=rule, source=SCALAR_TYPES[src]))
    return out


def capacity(pending: list[Pending], cap: int | None) -> Counter[str]:
    """How many questions the store allows at a level before the surface filter (every item rule passed): the
    upper bound on the level's items, stated in the manifest so a short level can be told from a strict filter."""
    per_paper = Counter(q.paper.paper_id for q in pending)
    return Counter(
        {
            "capacity: questions passing every item rule (before the surface filter)": len(pending),
            f"capacity: the same, at most {cap} per paper": sum(min(n, cap or n) for n in per_paper.values()),
            "capacity: question papers holding such a question": len(per_paper),
        }
    )


def level_floor(n: int, min_items: int) -> int:
    """The fewest items the level check may leave: `min_items`, or for a level that already holds no more than
    that (a live round from a small store), half of it — a small level still loses the items blind guessers
    solve rather than keep a guesser far above chance."""
    return min_items if n > min_items else (n + 1) // 2


def question_papers(ws: Workspace) -> list[str]:
    """Stored papers that have both references and in-text citations, by arXiv id then paper id."""
    rows = [(p.arxiv_id or "", p.paper_id) for p in ws.iter_papers() if p.citations and p.references]
    return [pid for _, pid in sorted(rows)]


def level_options(cfg: ClozeBuildConfig, judge: JudgeClassifier | None) -> dict[str, ClozeOptions]:
    """Each level's options: its construction's preset (or `cfg.options`), with `cfg.overrides` applied."""
    table = CONSTRUCTIONS[cfg.construction]
    opts: dict[str, ClozeOptions] = {}
    for lv in cfg.levels:
        base = cfg.options.get(lv) or table.get(lv)
        if base is None:
            raise ConfigError(f"unknown cloze level {lv!r}", hint=f"a preset ({', '.join(table)}) or pass options")
        try:
            o = ClozeOptions.model_validate({**base.model_dump(), **cfg.overrides})
        except ValidationError as exc:
            raise ConfigError(f"invalid cloze option for level {lv}: {exc.errors()[0]['loc']}") from None
        if o.type_decider == "judge" and judge is None:
            raise ConfigError(f"level {lv} lets the judge decide citation types but no judge model was given")
        opts[lv] = o
    return opts


def build_cloze_round(
    ws: Workspace,
    name: str,
    config: ClozeBuildConfig | None = None,
    *,
    judge: JudgeClassifier | None = None,
    tokenizer: TokenCounter | None = None,
    out_dir: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
    **options: Any,
) -> ClozeBuildReport:
    """Build levels (preset names, or keys of `config.options` for custom ones) into `rounds/<name>`.

    `config` (or the same fields as keywords: construction, levels, options, overrides, cutoff, seed, tokenizer,
    templates_dir, relink, mask, guesser_limit, min_level_items) is validated and stored verbatim. `overrides`
    change knobs of every level (e.g. `{"max_candidate_tokens": 20000}`); `cutoff` is the live guard ("auto":
    the writing round's test window, `cutoff.resolve_cutoff`); `judge` adds the judge-model role (required when
    a level's `type_decider` is "judge"); `tokenizer` may also be a counter object. An existing round `name` is
    refused unless `force` (`store.publisher`); a build that yields no question is an error."""
    t0 = time.perf_counter()
    check_name(name, "round")
    final = (Path(out_dir) if out_dir is not None else ws.rounds_dir) / name
    check_destination(final, force=force, home=ws.home)  # refused before any work
    try:
        cfg = config if config is not None else ClozeBuildConfig.model_validate(options)
    except ValidationError as exc:
        raise ConfigError(f"invalid cloze build option: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
    counter = tokenizer if tokenizer is not None else get_counter(cfg.tokenizer)
    seed, templates_dir, mask = cfg.seed, cfg.templates_dir, cfg.mask
    opts = level_options(cfg, judge)
    cutoff, cutoff_source = resolve_cutoff(ws, cfg.cutoff)
    links_report = link_all(ws) if cfg.relink else None
    ids = question_papers(ws)
    matched = {lv: o for lv, o in opts.items() if o.distractors == "matched"}  # the filtered construction's levels
    library = CandidateLibrary(ws, clean=any(o.clean for o in opts.values()))
    additive = counter.name.endswith("wordpiece")
    ctx = Context(seed, name, counter.name, counter.count_many, additive, judge, mask)
    items: dict[str, list[ClozeItem]] = {lv: [] for lv in opts}
    skips: dict[str, Counter[str]] = {lv: Counter() for lv in opts}
    notes: dict[str, Counter[str]] = {lv: Counter() for lv in opts}
    types: list[TypeDecision] = []
    pending: list[Pending] = []
    n_question = 0
    for n, pid in enumerate(ids, 1):
        paper = ws.get_paper(pid)
        if progress:
            progress("questions", n, len(ids))
        if paper is None or not paper.references:
            continue
        meta = ws.get_meta(paper.arxiv_id) if paper.arxiv_id else None
        published = meta.published if meta else None
        if published is None:
            for c in skips.values():
                c["paper: no v1 date (not in the metadata store)"] += 1
            continue
        if cutoff is not None and published <= cutoff:
            for c in skips.values():
                c["paper: not after the live cutoff"] += 1
            continue
        sources = library.sources(paper)
        n_question += 1
        results: dict[str, PaperResult] = {}
        if matched:
            results, questions = generate_filtered(paper, published, sources, matched, ctx)
            pending.extend(questions)
        results |= {
            lv: generate_for_paper(
                paper,
                published,
                sources,
                o,
                seed=seed,
                preset=level_label(lv, o),
                round_name=name,
                tokenizer=counter.name,
                count_tokens=counter.count_many,
                additive=additive,
                judge=judge,
                mask=mask,
            )
            for lv, o in opts.items()
            if lv not in matched
        }
        for lv, res in results.items():
            items[lv].extend(res.items)
            skips[lv].update(res.skips)
            notes[lv].update(res.notes)
        types.extend(all_types(paper))
        library.remember(sources)
    for lv, o in opts.items():  # the filtered construction: distractors once every question is known
        level_pending = [q for q in pending if q.level == lv]
        if lv in matched:
            notes[lv].update(capacity(level_pending, o.max_per_paper))
        chosen, why, done = select_level(level_pending, ctx)
        items[lv].extend(chosen)
        skips[lv].update(why)
        notes[lv].update(done)
        items[lv], over = cap_per_paper(items[lv], o.max_per_paper, seed, lv)
        if over:
            skips[lv][f"question: over the cap of {o.max_per_paper} per paper"] += over
    final_items: dict[str, list[ClozeItem]] = {}
    lexical: dict[str, float] = {}  # each checked level's lexical accuracy (a harder level may not exceed it)
    known: Known = {}  # the level check's guesser picks on each level's final items (not fitted again)
    for lv, o in opts.items():
        kept = cap_items(items[lv], o.max_questions, seed, lv)
        if len(items[lv]) > len(kept):
            skips[lv][f"question: over the level cap of {o.max_questions}"] += len(items[lv]) - len(kept)
        if lv in matched and cfg.guesser_limit is not None and kept:
            views = views_of(kept)
            easier = cfg.harder_than.get(lv)
            keep, removed, table = level_check(
                views,
                [it.gold for it in kept],
                [it.paper_id for it in kept],
                limit=cfg.guesser_limit,
                min_items=level_floor(len(kept), cfg.min_level_items),
                seed=seed,
                limits={"lexical": lexical[easier]} if easier in lexical else None,
            )
            skips[lv].update(removed)
            kept = [kept[i] for i in sorted(keep)]
            if table is not None and kept and len({level_of(it) for it in kept}) == 1:
                known[level_of(kept[0])] = (tuple(it.sample_id for it in kept), table)
            lexical[lv] = sum(
                guess("lexical", views[i], seed=seed) == kept_item.gold
                for i, kept_item in zip(sorted(keep), kept, strict=True)
            ) / max(1, len(kept))
        for it in kept:
            prompt = render_item(it, templates_dir=templates_dir)
            it.prompt_sha256 = sha256_hex(prompt)
            it.input_tokens = prompt_tokens(it, counter, templates_dir)
        final_items[config_name(lv)] = kept
    every = [it for v in final_items.values() for it in v]
    stats = cloze_stats(every, types=types)
    stats["skipped"] = {lv: dict(sorted(c.items())) for lv, c in skips.items()}
    stats["notes"] = {lv: dict(sorted(c.items())) for lv, c in notes.items() if c}
    table = guesser_accuracy(every, seed=seed, known=known) if every else {}
    guessers = as_json(table)
    defects = round_defects(every)
    stats["guessers"] = guessers
    stats["defects"] = defects
    flags = flagged(table, CHANCE + cfg.flag_margin)
    stats["flags"] = flags
    if flags and cfg.refuse_flagged:
        raise ConfigError(
            f"round {name} refused: blind guessers above {CHANCE + cfg.flag_margin:.2f} ({'; '.join(flags)})",
            hint="build the filtered construction (the default), or lower the level caps; nothing was written",
        )
    for line in flags:
        notes.setdefault(line.split(" ")[1], Counter())[f"flag: blind guesser above chance + margin: {line}"] += 1
    if links_report is not None:
        stats["links"] = {
            "papers": links_report.papers,
            "references": links_report.references,
            "linked": dict(links_report.linked),
            "unlinked": dict(links_report.unlinked),
        }
    manifest = RoundManifest(
        round=name,
        created_at=_created_at(),
        package_version=__version__,
        seed=seed,
        windows=SplitWindows(test_from=cutoff + timedelta(days=1) if cutoff else None),
        skipped={config_name(lv): dict(sorted(c.items())) for lv, c in skips.items()},
        notes={config_name(lv): dict(sorted(c.items())) for lv, c in notes.items() if c},
        config=cfg.model_dump(mode="json"),
        build_options={
            "family": "citation_cloze",
            "construction": cfg.construction,
            "cutoff": cutoff.isoformat() if cutoff else None,
            "cutoff_source": cutoff_source,
            "tokenizer": counter.name,
            "judge": judge.model if judge else None,
            "mask": mask,
            "levels": {lv: o.model_dump() for lv, o in opts.items()},
            "config": cfg.model_dump(mode="json"),
        },
    )
    manifest = write_round(final, manifest, final_items, stats, templates_dir, force=force, home=ws.home)
    return ClozeBuildReport(
        manifest=manifest,
        path=final,
        items=final_items,
        skips=skips,
        types=types,
        seconds=time.perf_counter() - t0,
        question_papers=n_question,
        links=dict(links_report.linked) if links_report else {},
        cutoff=cutoff,
        cutoff_source=cutoff_source,
        guessers=guessers,
        defects=defects,
        notes=notes,
        flags=flags,
    )
