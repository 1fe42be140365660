"""`build_cloze_round`: the citation-cloze family built live from the paper store.

Question papers are every stored paper with references and in-text citations whose v1 date is after the
round's cutoff (the live guard; papers without a known date are skipped and counted). References are linked to
stored papers first (`papers.links`), then each preset's questions are generated (`generate`) and written in
the round format (`export`). Everything skipped is counted with its reason per level in the manifest.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.families.cloze.classify import JudgeClassifier
from academiceval.families.cloze.export import config_name, write_round
from academiceval.families.cloze.generate import CandidateSource, cap_items, generate_for_paper, heading_line
from academiceval.families.cloze.models import (
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
from academiceval.papers.links import link_all, links_of
from academiceval.papers.models import NON_BODY_ROLES, Paper
from academiceval.rounds.models import RoundManifest, SplitWindows
from academiceval.rounds.prompts import prompt_sha256
from academiceval.rounds.publish import _created_at
from academiceval.store.artifacts import check_name
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


class _PaperCache:
    def __init__(self, ws: Workspace, size: int = 256) -> None:
        self.ws = ws
        self.size = size
        self._d: OrderedDict[str, Paper | None] = OrderedDict()

    def get(self, pid: str) -> Paper | None:
        if pid in self._d:
            self._d.move_to_end(pid)
            return self._d[pid]
        p = self.ws.get_paper(pid)
        self._d[pid] = p
        if len(self._d) > self.size:
            self._d.popitem(last=False)
        return p


def candidate_sources(
    ws: Workspace,
    paper: Paper,
    cache: _PaperCache,
    tokens: dict[str, int],
    rendered: dict[str, dict[str, tuple[str, int]]],
    sections: dict[str, list[int]] | None = None,
) -> dict[int, CandidateSource]:
    out: dict[int, CandidateSource] = {}
    refs = {r.index: r for r in paper.references}
    for ri, link in links_of(ws, paper.paper_id).items():
        target = cache.get(link.target_paper_id)
        if target is None or ri not in refs:
            continue
        secs = [(heading_line(s), s.text) for s in target.sections if s.role not in NON_BODY_ROLES and s.text.strip()]
        ref = refs[ri]
        out[ri] = CandidateSource(
            ref_index=ri,
            ref_id=ref.label or str(ri),
            paper_id=target.paper_id,
            arxiv_id=target.arxiv_id,
            title=target.title or (ref.title or ""),
            abstract=target.abstract,
            sections=secs,
            link_method=link.method,
            content_tokens=tokens.get(target.paper_id),
            rendered=rendered.setdefault(target.paper_id, {}),
            section_tokens=(sections if sections is not None else {}).setdefault(target.paper_id, []),
        )
    return out


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


def question_papers(ws: Workspace) -> list[str]:
    """Stored papers that have both references and in-text citations, by arXiv id then paper id."""
    rows = [(p.arxiv_id or "", p.paper_id) for p in ws.iter_papers() if p.citations and p.references]
    return [pid for _, pid in sorted(rows)]


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

    `config` (or the same fields as keywords: levels, options, overrides, cutoff, seed, tokenizer, templates_dir,
    relink, mask) is validated and stored verbatim. `overrides` change knobs of every level (e.g.
    `{"max_candidate_tokens": 20000}`); `cutoff` is the live guard; `judge` adds the judge-model role
    (required when a level's `type_decider` is "judge"); `tokenizer` may also be a counter object. An existing
    round `name` is refused unless `force` (`store.publisher`); a build that yields no question is an error."""
    t0 = time.perf_counter()
    check_name(name, "round")
    final = (Path(out_dir) if out_dir is not None else ws.rounds_dir) / name
    check_destination(final, force=force, home=ws.home)  # refused before any work
    try:
        cfg = config if config is not None else ClozeBuildConfig.model_validate(options)
    except ValidationError as exc:
        raise ConfigError(f"invalid cloze build option: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
    counter = tokenizer if tokenizer is not None else get_counter(cfg.tokenizer)
    levels, cutoff, seed, templates_dir, mask = cfg.levels, cfg.cutoff, cfg.seed, cfg.templates_dir, cfg.mask
    opts: dict[str, ClozeOptions] = {}
    for lv in levels:
        base = cfg.options.get(lv) or PRESETS.get(lv)
        if base is None:
            raise ConfigError(f"unknown cloze level {lv!r}", hint=f"a preset ({', '.join(PRESETS)}) or pass options")
        try:
            o = ClozeOptions.model_validate({**base.model_dump(), **cfg.overrides})
        except ValidationError as exc:
            raise ConfigError(f"invalid cloze option for level {lv}: {exc.errors()[0]['loc']}") from None
        if o.type_decider == "judge" and judge is None:
            raise ConfigError(f"level {lv} lets the judge decide citation types but no judge model was given")
        opts[lv] = o
    links_report = link_all(ws) if cfg.relink else None
    ids = question_papers(ws)
    cache = _PaperCache(ws)
    token_cache: dict[str, int] = {}
    rendered_cache: dict[str, dict[str, tuple[str, int]]] = {}
    section_cache: dict[str, list[int]] = {}
    additive = counter.name.endswith("wordpiece")
    items: dict[str, list[ClozeItem]] = {lv: [] for lv in opts}
    skips: dict[str, Counter[str]] = {lv: Counter() for lv in opts}
    types: list[TypeDecision] = []
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
        sources = candidate_sources(ws, paper, cache, token_cache, rendered_cache, section_cache)
        n_question += 1
        for lv, o in opts.items():
            res = generate_for_paper(
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
            items[lv].extend(res.items)
            skips[lv].update(res.skips)
        types.extend(all_types(paper))
        for s in sources.values():
            if s.content_tokens is not None:
                token_cache[s.paper_id] = s.content_tokens
    final_items: dict[str, list[ClozeItem]] = {}
    for lv, o in opts.items():
        kept = cap_items(items[lv], o.max_questions, seed, lv)
        if len(items[lv]) > len(kept):
            skips[lv][f"question: over the level cap of {o.max_questions}"] += len(items[lv]) - len(kept)
        for it in kept:
            prompt = render_item(it, templates_dir=templates_dir)
            it.prompt_sha256 = prompt_sha256(prompt)
            it.input_tokens = prompt_tokens(it, counter, templates_dir)
        final_items[config_name(lv)] = kept
    stats = cloze_stats([it for v in final_items.values() for it in v], types=types)
    stats["skipped"] = {lv: dict(sorted(c.items())) for lv, c in skips.items()}
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
        windows=SplitWindows(test_from=cutoff),
        skipped={config_name(lv): dict(sorted(c.items())) for lv, c in skips.items()},
        config=cfg.model_dump(mode="json"),
        build_options={
            "family": "citation_cloze",
            "cutoff": cutoff.isoformat() if cutoff else None,
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
    )
