"""`build_round`: workspace papers → a dated benchmark round on disk.

Stages: (1) catalogue every paper that has metadata and a parse (fetching and ingesting PDFs on demand through
the source), tokenising each once; (2) split by v1 date; (3) for every target, task and setting, select demos,
assemble the sample, check the leakage invariants and stage it; (4) name configs from measured mean input
lengths and export. Only small per-paper records are held; texts are re-read per target from the workspace.
"""

from __future__ import annotations

import random
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import date
from pathlib import Path

from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.papers.roles import assign_roles
from academiceval.rounds import citations as cit
from academiceval.rounds import ladder, quality
from academiceval.rounds.config import BuildConfig
from academiceval.rounds.export import StagingWriter
from academiceval.rounds.leakage import LeakageError, check_sample, check_windows, contains, leak_reason
from academiceval.rounds.prompts import render_parts, render_prompt
from academiceval.rounds.publish import Staged, publish
from academiceval.rounds.related_work import RelatedWorkLedger, paragraph_support
from academiceval.rounds.settings import DemoSelector, Entry, SettingSpec, parse_setting, text_version_counts
from academiceval.rounds.split import assign, split_report, windows_from_dates, windows_from_fractions
from academiceval.rounds.tasks import TaskViews, prepare_paper, task_views
from academiceval.rounds.tokens import count_tokens
from academiceval.rounds.versions import DemoText, earlier_texts, text_date
from academiceval.store.artifacts import check_name
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Demo, RoundManifest, Sample, Task
from academiceval.store.paper_models import DatePrecision, SectionRole
from academiceval.store.publisher import check_destination, publishing
from academiceval.store.tasks import task_names, task_spec
from academiceval.store.workspace import Workspace

Progress = Callable[[str, int, int | None], None]
EMPTY_HINT = "no paper gave a sample: see the skip reasons (`academiceval build` prints them), or widen the windows"


def derive_seed(round_seed: int, *parts: str) -> int:
    """A per-sample seed from the round seed (no global RNG anywhere)."""
    h = sha256_hex(":".join([str(round_seed), *parts]))
    return int(h[:12], 16)


class _Views:
    """Small LRU of task texts per paper (texts are re-derived from the workspace, never all held)."""

    def __init__(
        self, ws: Workspace, tasks: tuple[Task, ...], size: int = 96, gate: quality.QualityGate | None = None
    ) -> None:
        self.ws, self.tasks, self.size, self.gate = ws, tasks, size, gate
        self._lru: OrderedDict[tuple[str, str | None], TaskViews] = OrderedDict()

    def get(self, arxiv_id: str, paper_id: str | None = None) -> TaskViews:
        """The task texts of a paper's primary text, or of its text `paper_id` (an earlier version's)."""
        key = (arxiv_id, paper_id)
        v = self._lru.get(key)
        if v is not None:
            self._lru.move_to_end(key)
            return v
        meta = self.ws.get_meta(arxiv_id)
        paper = self.ws.get_paper(paper_id) if paper_id else self.ws.get_paper_by_arxiv(arxiv_id)
        assert meta is not None and paper is not None
        v = task_views(meta, paper, tasks=self.tasks, counts=False, gate=self.gate)
        self._lru[key] = v
        if len(self._lru) > self.size:
            self._lru.popitem(last=False)
        return v


def _fetch_and_ingest(ws: Workspace, source: object, arxiv_id: str):  # -> Paper | str
    from academiceval.papers.ingest import ingest_file  # PyMuPDF: imported only when a PDF is fetched

    try:
        path = source.fetch_pdf(arxiv_id, ws.pdf_dir)
    except AcademicEvalError as exc:
        return f"PDF fetch failed ({exc.code})"
    try:
        paper = ingest_file(ws, path)
    except AcademicEvalError as exc:
        return f"ingest failed ({exc.code})"
    if paper.arxiv_id is None:
        paper = paper.model_copy(update={"arxiv_id": arxiv_id})
        ws.put_paper(paper, str(path))
    return paper


def build_round(
    ws: Workspace,
    name: str,
    config: BuildConfig | None = None,
    *,
    source: object | None = None,
    out_dir: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> RoundManifest:
    """Build round `name` from the workspace as `config` says and export it to `rounds/NAME` (or `out_dir`).

    `source` (optional) fetches missing PDFs and citation metadata; `config` is stored verbatim in the manifest."""
    cfg = config or BuildConfig()
    check_name(name, "round name")
    final = Path(out_dir) if out_dir else ws.layout.round_dir(name)
    specs: list[SettingSpec] = list(dict.fromkeys(parse_setting(s) for s in cfg.settings))
    if cfg.context_tokens:
        specs.append(parse_setting(f"ctx:{int(cfg.context_tokens)}"))
    specs = list(dict.fromkeys([*specs, *ladder.rung_specs(cfg.ladder)]))  # context ladder rungs (rounds.ladder)
    if not specs:
        raise ConfigError("no settings given", hint="--setting zero-shot")
    tasks = tuple(t for t in task_names("writing") if t in cfg.tasks)
    previous = [ws.layout.find_round(cfg.previous)] if cfg.previous is not None else []
    check_destination(final, force=force, home=ws.home, protect=previous)  # refused before any work
    templates_dir = cfg.templates_dir
    if templates_dir is not None and not Path(templates_dir).is_dir():
        raise ConfigError(f"templates directory {templates_dir} does not exist")
    val_from, test_from, test_until, since = cfg.val_from, cfg.test_from, cfg.test_until, cfg.since
    seed = cfg.seed
    say = progress or (lambda stage, done, total: None)
    ws.ensure_schema(cit.CACHE_SCHEMA)
    gate = quality.default_gate().with_overrides(cfg.gate)
    min_resolved_fraction = cfg.min_resolved_fraction  # of the listed cited works, shown with an abstract
    validity: dict[str, object] = {"quality_gate": quality.describe(gate), "prepared": Counter()}
    text_versions: dict[str, dict[str, object]] = {}
    cites = next((t for t in tasks if task_spec(t).cites), None)  # the task the cited papers go with (Related Work)
    ledger = RelatedWorkLedger()  # per paper: its Related Work sample's split, or why it has none (rounds.related_work)

    skipped: dict[str, Counter[str]] = {}
    notes: dict[str, Counter[str]] = {}

    def skip(key: str, reason: str) -> None:
        skipped.setdefault(key, Counter())[reason] += 1

    def note(key: str, reason: str) -> None:
        notes.setdefault(key, Counter())[reason] += 1

    # ---- 1. catalogue -------------------------------------------------------------------------------
    ids = ws.meta_ids(since=since)
    entries: dict[str, Entry] = {}
    names_by_key: dict[str, str] = {}  # author key -> display name (for the demos' shared_authors)
    own_tokens: dict[tuple[str, Task], tuple[int, int]] = {}
    fetched = 0
    token_cache = cit.WorkspaceTokenCache(ws)
    for n, aid in enumerate(ids):
        say("catalogue", n, len(ids))
        meta = ws.get_meta(aid)
        paper = ws.get_paper_by_arxiv(aid)
        if meta is None:
            continue
        if paper is None:
            if source is None or not cfg.fetch:
                skip("papers", "metadata without a parsed paper (no source to fetch from)")
                continue
            if cfg.max_fetch is not None and fetched >= cfg.max_fetch:
                skip("papers", "metadata without a parsed paper (--max-fetch reached)")
                continue
            fetched += 1
            got = _fetch_and_ingest(ws, source, aid)
            if isinstance(got, str):
                skip("papers", got)
                continue
            paper = got
        paper, prep_notes = prepare_paper(paper)
        validity["prepared"].update(prep_notes)
        if cites:
            has = paper.has_role(SectionRole.related_work)
            ledger.paper(aid, has_section=has, cited=len(cit.cited_in_related_work(paper)) if has else 0)
        why = quality.paper_reason(paper, gate)
        if why is not None:
            skip("papers", why)
            ledger.exclude(aid, why)
            continue
        dated = text_date(meta, paper)  # a later version's text: its date, for demo eligibility (rounds.versions)
        earlier = earlier_texts(ws, meta, paper, tasks, gate, token_cache)
        if dated.version and dated.version > 1:
            text_versions[aid] = {**dated.record(), "paper_id": paper.paper_id}
            if earlier:
                text_versions[aid]["earlier"] = [{**t.date.record(), "paper_id": t.paper_id} for t in earlier]
        views = task_views(meta, paper, tasks=tasks, cache=token_cache, gate=gate, prepare=False)
        for t, reason in views.skipped.items():
            skip(t, reason)
            if t == cites:
                ledger.exclude(aid, reason)
        for t, inst in views.instances.items():
            for nt in inst.notes:
                note(t, nt)
        if not views.instances:
            continue
        cost = {t: sum(i.field_tokens.values()) + i.label_tokens for t, i in views.instances.items()}
        for t, i in views.instances.items():
            own_tokens[(aid, t)] = (sum(i.field_tokens.values()), i.label_tokens)
        entries[aid] = Entry(
            arxiv_id=aid,
            paper_id=paper.paper_id,
            published=meta.published,
            category=meta.primary_category,
            split="train",
            title_norm=cit.norm_title(meta.title),
            authors=tuple(a.key or a.name for a in meta.authors),
            cost=cost,
            date_precision=meta.date_precision,
            texts=(DemoText(paper.paper_id, dated, cost), *earlier),
        )
        for a in meta.authors:
            names_by_key.setdefault(a.key or a.name, a.name)
    say("catalogue", len(ids), len(ids))
    orphans = ws.count_papers_without_meta()
    if orphans:
        skipped.setdefault("papers", Counter())["parsed paper without metadata (no v1 date)"] += int(orphans)

    # ---- 2. split -----------------------------------------------------------------------------------
    dates = [e.published for e in entries.values()]
    if val_from is not None or test_from is not None:
        windows = windows_from_dates(dates, val_from=val_from, test_from=test_from, test_until=test_until)
    else:
        if test_until is not None:
            dates = [d for d in dates if d <= test_until]
        windows = windows_from_fractions(dates, cfg.fractions)
    check_windows(windows)
    # the coarsest precision of each date: a "2024" paper makes 2024-01-01 stand for the year
    precision_of: dict[date, DatePrecision] = {}
    for e in entries.values():
        if e.date_precision != "day" or e.published not in precision_of:
            precision_of[e.published] = e.date_precision
    validity["splits"] = split_report(
        dates,
        windows,
        None if (val_from is not None or test_from is not None) else cfg.fractions,
        [precision_of.get(d, "day") for d in dates],
    )
    for warning in validity["splits"]["warnings"]:
        note("splits", f"warning: {warning}")
    for aid in list(entries):
        sp = assign(entries[aid].published, windows, entries[aid].date_precision)
        if sp is None:
            imprecise = entries[aid].date_precision != "day" and assign(entries[aid].published, windows) is not None
            why = "date (known to the year/month) straddles a window start" if imprecise else "after the test window"
            skip("papers", why)
            ledger.exclude(aid, why)
            del entries[aid]
        else:
            entries[aid].split = sp
            ledger.split(aid, sp)

    # ---- 3. samples (into the publisher's staging directory: checked, fsynced and renamed into place) ---------
    with publishing(final, force=force, home=ws.home, protect=previous, empty_hint=EMPTY_HINT) as tmp:
        staging = StagingWriter(tmp / ".staging")
        views = _Views(ws, tasks, gate=gate)
        resolver = cit.CitationResolver(ws, source)
        selectors = {
            t: DemoSelector(ws, t, entries, category_level=cfg.category_level, coauthor_cap=cfg.coauthor_cap)
            for t in tasks
        }
        skel_cache: dict[tuple[Task, int, int], int] = {}  # (task, demos, citations) -> template tokens
        token_sums: dict[tuple[Task, str], list[int]] = {}
        split_counts: dict[tuple[Task, str], Counter[str]] = {}
        cite_stats = Counter()
        train_debris: dict[str, Counter[str]] = {t: Counter() for t in tasks}  # train labels with debris, by kind
        order = sorted(entries.values(), key=lambda e: (e.published, e.arxiv_id))
        try:
            for n, target in enumerate(order):
                say("samples", n, len(order))
                tv = views.get(target.arxiv_id)
                for task in tasks:
                    inst = tv.instances.get(task)
                    if inst is None:
                        continue
                    why = quality.debris_reason(inst.debris, target.split)  # val/test labels: no debris left
                    if why is not None:
                        skip(task, why)
                        if task == cites:
                            ledger.exclude(target.arxiv_id, why)
                        continue
                    if inst.debris:
                        train_debris[task].update({k: 1 for k in inst.debris})
                    corpus, corpus_tokens = [], 0
                    if task_spec(task).cites:  # the cited papers go with the sample (Related Work)
                        got = _citation_corpus(ws, resolver, target, cfg, cite_stats, ledger)
                        if isinstance(got, str):
                            skip(task, got)
                            ledger.exclude(target.arxiv_id, got)
                            continue
                        corpus = got
                        texts = [t for c in corpus for t in (c.title, c.abstract)]
                        why = leak_reason(inst.label, {"citation list": "\n".join(texts)})
                        if why is not None:
                            skip(task, why)
                            ledger.exclude(target.arxiv_id, why)
                            continue
                        corpus_tokens = citation_tokens(corpus, task, templates_dir)
                    full_tok, label_tok = own_tokens[(target.arxiv_id, task)]

                    def template_tokens(k: int, task: Task = task, n_cites: int = len(corpus), f=inst.fields) -> int:
                        if (task, k, n_cites) not in skel_cache:
                            skel_cache[(task, k, n_cites)] = ladder.template_tokens(task, f, k, n_cites, templates_dir)
                        return skel_cache[(task, k, n_cites)]

                    for spec in specs:
                        key = f"{task}/{spec.spec}"
                        s_seed = derive_seed(seed, task, spec.spec, target.arxiv_id)
                        rng = random.Random(s_seed)
                        fields, body_tok = inst.fields, full_tok
                        if ladder.is_rung(spec, cfg.ladder):  # one candidate order for every rung of this target
                            room = spec.tokens - template_tokens(0) - corpus_tokens  # a rung's inputs fit the rung
                            fit = ladder.fit_target(inst.fields, full_tok, room)
                            if isinstance(fit, str):
                                skip(key, fit)
                                continue
                            fields, body_tok = fit
                            if body_tok < full_tok:
                                note(key, "body cut at the end to fit the rung (no demos)")
                            lseed = derive_seed(seed, task, "ladder", target.arxiv_id)
                            picked = ladder.select(
                                selectors[task], spec, target, lseed, body_tok + corpus_tokens, template_tokens
                            )
                        else:
                            picked = selectors[task].select(spec, target, rng, budget=body_tok + corpus_tokens)
                        if isinstance(picked, str):
                            skip(key, picked)
                            continue
                        demos = []
                        for e, origin in picked:
                            text = selectors[task].text_for(target, e)  # dated no later than the target
                            if text is None:  # an invariant like check_sample's: the build aborts, nothing written
                                raise LeakageError(
                                    f"{key}/{target.arxiv_id}: demo {e.arxiv_id} has no text dated by the target"
                                )
                            earlier = text.paper_id != e.paper_id  # the primary text is newer than the target
                            if earlier:
                                note(key, "demo shown with an earlier version's text (the newer is after the target)")
                            dinst = views.get(e.arxiv_id, text.paper_id if earlier else None).instances[task]
                            demos.append(
                                Demo(
                                    arxiv_id=e.arxiv_id,
                                    published=e.published,
                                    fields=dict(dinst.fields),
                                    label=dinst.label,
                                    origin=origin,
                                    paper_id=text.paper_id,
                                    date_precision=e.date_precision,
                                    shared_authors=_shared_authors(target, e, names_by_key),
                                )
                            )
                        if any(contains(t, inst.label) for d in demos for t in (*d.fields.values(), d.label)):
                            skip(key, "label text appears in a demonstration")
                            continue
                        demo_texts = {
                            f"demonstration {k}": t for d in demos for k, t in (*d.fields.items(), ("label", d.label))
                        }
                        why = leak_reason(inst.label, demo_texts) if demos else None
                        if why is not None:
                            skip(key, why)
                            continue
                        sample = Sample(
                            sample_id=f"{task}/{spec.spec}/{target.arxiv_id}",
                            round=name,
                            task=task,
                            setting=spec.spec,
                            split=target.split,
                            arxiv_id=target.arxiv_id,
                            paper_id=target.paper_id,
                            published=target.published,
                            date_precision=target.date_precision,
                            primary_category=target.category,
                            fields=dict(fields),
                            citations=corpus,
                            demos=demos,
                            label=inst.label,
                            seed=s_seed,
                            label_tokens=label_tok,
                        )
                        check_sample(
                            sample,
                            windows,
                            target_title=target.title_norm,
                            demo_info={e.arxiv_id: (e.paper_id, e.title_norm, e.split) for e, _ in picked},
                        )
                        sample.input_tokens = (
                            template_tokens(len(demos))
                            + body_tok
                            + corpus_tokens
                            + sum(selectors[task].cost(target, e) for e, _ in picked)
                        )
                        sample.prompt_sha256 = sha256_hex(render_prompt(sample, templates_dir=templates_dir))
                        staging.write(key, sample)
                        if task == cites:
                            ledger.sample(target.arxiv_id, target.split)
                        selectors[task].record_use(spec, target, picked)
                        token_sums.setdefault((task, spec.spec), []).append(sample.input_tokens)
                        split_counts.setdefault((task, spec.spec), Counter())[sample.split] += 1
            say("samples", len(order), len(order))
            staging.close()

            # ---- 4. export --------------------------------------------------------------------------------
            staged = Staged(tmp, staging, specs, tasks, windows, token_sums, split_counts, skipped, notes)
            observed = {
                "settings": [s.spec for s in specs],
                "tasks": list(tasks),
                "coauthor_source": selectors[tasks[0]].coauthor_source if tasks else None,
                "source": type(source).__name__ if source is not None else None,
                "citations": {k: v for k, v in sorted(cite_stats.items()) if not k.startswith("sample:")},
                "papers_catalogued": len(entries),
                "validity": {
                    **validity,
                    "prepared": dict(sorted(validity["prepared"].items())),
                    "min_resolved_fraction": min_resolved_fraction,
                    "citation_resolution": {
                        k[len("sample:") :]: v for k, v in sorted(cite_stats.items()) if k.startswith("sample:")
                    },
                    "text_versions": text_versions,
                    "related_work": ledger.as_dict(),
                    "demo_text_versions": text_version_counts(selectors, entries),
                    "train_label_debris": {t: dict(sorted(c.items())) for t, c in train_debris.items() if c},
                },
            }
            manifest = publish(
                ws,
                name,
                staged,
                cfg,
                observed=observed,
                say=say,
            )
        finally:
            staging.close()
    return manifest


def citation_tokens(corpus, task: str, templates_dir) -> int:
    """WordPiece tokens of the rendered citation block (titles, bylines, abstracts or their "no abstract" note):
    what the list adds to the skeleton (`rounds.prompts.skeleton` renders none)."""
    if not corpus:
        return 0
    probe = Sample(
        sample_id="citations", round="", task=task, setting="", split="train", arxiv_id="",
        paper_id="", published="2000-01-01", fields={}, label="", citations=corpus,
    )  # fmt: skip
    return count_tokens([render_parts(probe, templates_dir=templates_dir)["citations"]])[0]


def _citation_corpus(ws, resolver, target: Entry, cfg: BuildConfig, stats: Counter, ledger: RelatedWorkLedger):
    """The citation list of one Related Work target, or why it has none. Every work the related-work section cites
    is listed — resolved with its record, unresolved with its reference's title, authors and year
    (`CitationResolver.listed`); the resolved-fraction rule counts the works shown with an abstract; the list is
    padded with distractors to `cfg.citation_list_size` entries (or by `cfg.distractors`, whichever adds more)."""
    raw = ws.get_paper_by_arxiv(target.arxiv_id)
    roles, _ = assign_roles(raw)  # the roles the label was cut by (same sections, in the same order)
    mentions = cit.mentions_in_related_work(roles)
    refs = cit.cited_in_related_work(roles)
    if not refs:
        return "no citation inside the related-work section"
    got = resolver.listed(refs, exclude=target.arxiv_id, paper_id=raw.paper_id, mentions=mentions)
    st = got.stats
    stats["cited"] += st.cited
    for how, k in st.resolved.items():
        stats[f"resolved: {how}"] += k
    for why, k in st.unresolved.items():
        stats[f"unresolved: {why}"] += k
    stats["listed"] += st.listed
    stats["listed: with abstract"] += st.with_abstract
    stats["listed: title only"] += st.title_only
    stats["not shown: no title"] += st.not_shown
    stats[f"sample:{target.arxiv_id}"] = [sum(1 for c in got.items if c.resolved), st.cited]
    n_pad = max(cfg.distractors, cfg.citation_list_size - st.listed) if st.listed else 0
    ledger.corpus(target.arxiv_id, st, distractors=n_pad, paragraphs=paragraph_support(raw, roles, got.by_ref))
    if st.listed < cfg.min_citations:
        return f"fewer than {cfg.min_citations} cited works to list"
    if st.listed and st.abstract_fraction < cfg.min_resolved_fraction:
        return f"under {cfg.min_resolved_fraction:.0%} of the cited works with an abstract"
    rng = random.Random(derive_seed(cfg.seed, "citations", target.arxiv_id))
    pool = cit.distractor_pool(
        ws,
        category=target.category,
        before=target.published,
        exclude={target.arxiv_id, *(c.arxiv_id for c in got.items if c.arxiv_id)},
        exclude_titles={cit.title_key(c.title) for c in got.items},
        n=n_pad,
        rng=rng,
    )
    for _, tier in pool:
        stats[f"distractors: {tier}"] += 1
    extra = cit.distractor_items(pool, abstract_share=st.abstract_fraction, rng=rng)
    stats["distractors: abstract withheld"] += sum(c.abstract_withheld for c in extra)
    if len(pool) < n_pad:
        stats["distractors: pool too small"] += 1
    return cit.build_corpus(got.items, extra, rng)


def _shared_authors(target: Entry, demo: Entry, names: dict[str, str]) -> list[str]:
    """The author names linking a demo to its target: the authors they share (the co-author graph's evidence,
    written down so anyone can check a co-author demo)."""
    own = set(target.authors)
    return [names.get(k, k) for k in demo.authors if k in own]
