"""The writing tasks: which inputs a model sees and which real text is the label, as each task's spec says
(`TaskSpec.input_fields`, `removes`, `label_source` / `label_section`; the specs are declared in
`families/writing`).

Labels are never annotated: they are the paper's own title, its arXiv abstract, or one of its sections. A paper
that lacks what a task needs is skipped with a counted reason, never filled with a guess. Token counts are taken
per section and summed (WordPiece is additive at whitespace), so a paper is tokenised once for all tasks.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from academiceval.papers.clean import clean_text, debris_counts, source_family, strip_leading_fragments, vocabulary
from academiceval.papers.roles import assign_roles
from academiceval.rounds.leakage import contains, leak_reason
from academiceval.rounds.quality import QualityGate, default_gate, label_reason
from academiceval.rounds.tokens import count_tokens
from academiceval.store.models import Task
from academiceval.store.paper_models import NON_BODY_ROLES, Paper, PaperMeta, Section, SectionRole
from academiceval.store.tasks import task_names, task_spec

MIN_BODY_WORDS = 200
MIN_SECTION_WORDS = 50


def squash(text: str) -> str:
    """Whitespace-collapsed text, as stored in samples."""
    return " ".join(text.split())


def _phrase(phrase: str) -> re.Pattern[str] | None:
    words = phrase.split()
    return re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE) if words else None


_TITLE_LINE_TAIL = re.compile(r"^[\s.:\d]*$")


def title_occurrences(text: str, title: str) -> tuple[list[tuple[int, int]], int]:
    """Where the title stands as a title in `text` — a line (or paragraph) of its own, possibly with a page
    number or a trailing period, as a running head or a repeated title block — and how many further times its
    words are used inside a sentence. Returns (spans standing as a title, number of in-sentence uses)."""
    pat = _phrase(title)
    if pat is None:
        return [], 0
    alone, inside = [], 0
    for m in pat.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        before, after = text[line_start : m.start()], text[m.end() : line_end]
        if _TITLE_LINE_TAIL.match(before) and _TITLE_LINE_TAIL.match(after):
            alone.append((m.start(), m.end()))
        else:
            inside += 1
    return alone, inside


def remove_title(text: str, title: str) -> tuple[str, int, int]:
    """Remove the title only where it stands as a title; returns (text, removed, in-sentence uses kept)."""
    spans, inside = title_occurrences(text, title)
    for a, b in reversed(spans):
        text = text[:a] + text[b:]
    return text, len(spans), inside


@dataclass
class TaskInstance:
    task: Task
    fields: dict[str, str]
    label: str
    field_tokens: dict[str, int] = field(default_factory=dict)
    label_tokens: int = 0
    notes: list[str] = field(default_factory=list)
    debris: dict[str, int] = field(default_factory=dict)  # debris left in the label after cleaning, by kind


@dataclass
class TaskViews:
    """Every task of one paper: the instances that exist and, for the others, why they were skipped."""

    instances: dict[Task, TaskInstance] = field(default_factory=dict)
    skipped: dict[Task, str] = field(default_factory=dict)
    prepared: Counter[str] = field(default_factory=Counter)  # what `prepare_paper` changed


def prepare_paper(paper: Paper) -> tuple[Paper, Counter[str]]:
    """The paper as the tasks read it: roles by inheritance and evidence (`papers.roles.assign_roles`) and every
    section's text cleaned for its source (`papers.clean.clean_text`: PDF layout debris, unarXive placeholders,
    ar5iv markup and trails; the word check against the paper's own vocabulary).
    Section order and count are unchanged, so citation section indices stay valid."""
    paper, notes = assign_roles(paper)
    vocab = vocabulary([s.text for s in paper.sections])
    sections = []
    for s in paper.sections:
        if s.role in NON_BODY_ROLES or not s.text:
            sections.append(s)
            continue
        c = clean_text(s.text, vocab, source=paper.source)
        notes.update(c.changes)
        sections.append(s.model_copy(update={"text": c.text}) if c.text != s.text else s)
    return paper.model_copy(update={"sections": sections}), notes


def _heading_line(s: Section) -> str:
    return f"{s.number} {s.heading}".strip() if s.number else s.heading


class TokenCache(Protocol):
    def get(self, key: str) -> list[int] | None: ...
    def put(self, key: str, counts: list[int]) -> None: ...


def cached_counts(texts: list[str], cache: TokenCache | None) -> list[int]:
    """count_tokens, memoised by the sha256 of the texts (a rebuild does not re-tokenise unchanged papers)."""
    if cache is None:
        return count_tokens(texts)
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    key = h.hexdigest()
    got = cache.get(key)
    if got is not None and len(got) == len(texts):
        return got
    c = count_tokens(texts)
    cache.put(key, c)
    return c


def _section_tokens(paper: Paper, counts: bool, cache: TokenCache | None) -> list[tuple[int, int]]:
    if not counts:
        return [(0, 0)] * len(paper.sections)
    texts: list[str] = []
    for s in paper.sections:
        texts += [_heading_line(s), s.text]
    c = cached_counts(texts, cache)
    return [(c[2 * i], c[2 * i + 1]) for i in range(len(paper.sections))]


def task_views(
    meta: PaperMeta,
    paper: Paper,
    *,
    tasks: tuple[Task, ...] | None = None,
    counts: bool = True,
    cache: TokenCache | None = None,
    gate: QualityGate | None = None,
    prepare: bool = True,
) -> TaskViews:
    """Build the task instances of one paper (metadata gives title, abstract and date; the parse gives text).

    The paper is first prepared (`prepare_paper`: roles by inheritance and evidence, debris cleaned); each label
    must pass the quality gate's length range and the near-copy guard (`rounds.leakage.leak_reason`)."""
    gate = gate or default_gate()
    views = TaskViews()
    paper, prep_notes = prepare_paper(paper) if prepare else (paper, Counter())
    views.prepared = prep_notes
    title = squash(meta.title or paper.title)
    abstract = squash(meta.abstract or paper.abstract)
    if paper.source == "pdf" and (meta.source == "pdf-stamp" or not meta.abstract):
        # no metadata record beyond the PDF itself: title and abstract were read from the page, with its debris
        raw = paper.abstract if paper.abstract and squash(paper.abstract) == abstract else abstract
        vocab = vocabulary([s.text for s in paper.sections] + [raw])
        title = squash(clean_text(title, vocab, source="pdf").text)
        abstract = squash(clean_text(strip_leading_fragments(raw), vocab, source="pdf").text)
        views.prepared["title and abstract from the parse (no metadata record)"] += 1
        from_parse = True
    else:
        from_parse = False
        abstract = squash(clean_text(abstract, source="text").text)  # metadata: LaTeX formatting commands
    family = source_family(paper.source)
    label_vocab = vocabulary([s.text for s in paper.sections]) if family == "pdf" else None
    sec_tok = _section_tokens(paper, counts, cache)
    small = cached_counts([title, abstract], cache) if counts else [0, 0]
    tok = {"title": small[0], "abstract": small[1]}

    def body_of(without: SectionRole | None) -> tuple[str, int]:
        kept = [
            i
            for i, s in enumerate(paper.sections)
            if s.role not in NON_BODY_ROLES and (without is None or s.role != without)
        ]
        return paper.body(without=without), sum(sec_tok[i][0] + sec_tok[i][1] for i in kept)

    def section_of(role: SectionRole) -> tuple[str, int]:
        idx = [i for i, s in enumerate(paper.sections) if s.role == role]
        n = sum(sec_tok[i][1] for i in idx) + sum(sec_tok[i][0] for i in idx[1:])
        return paper.section_text(role), n

    abstract_in = abstract
    for task in tasks if tasks is not None else task_names("writing"):
        spec = task_spec(task)
        without = SectionRole(spec.removes) if spec.removes else None
        body, body_tok = body_of(without)
        notes: list[str] = []
        if spec.label_source == "title":
            label, label_tok = title, tok["title"]
            body, n, inside_b = remove_title(body, title)
            if n:
                body_tok -= n * tok["title"]
                notes += ["title removed where it stands as a title (body)"] * n
            abstract_in, m, inside_a = remove_title(abstract, title)
            if m:
                notes += ["title removed where it stands as a title (abstract)"] * m
            if inside_b or inside_a:
                views.skipped[task] = "title used inside sentences of the input (kept there; sample would leak)"
                continue
        elif spec.label_source == "metadata_abstract":
            label, label_tok = (abstract, tok["abstract"]) if meta.abstract else ("", 0)
            if not paper.has_role(SectionRole.conclusion):
                notes.append("no conclusion section: body kept whole")
        else:
            role = SectionRole(spec.label_section)
            label, label_tok = section_of(role)
            if not label.strip():
                views.skipped[task] = f"no {role.value.replace('_', ' ')} section"
                continue
            if len(label.split()) < MIN_SECTION_WORDS:
                views.skipped[task] = f"{role.value.replace('_', ' ')} section under {MIN_SECTION_WORDS} words"
                continue
        if not label.strip():
            views.skipped[task] = "no metadata abstract" if spec.label_source == "metadata_abstract" else "no title"
            continue
        if len(body.split()) < MIN_BODY_WORDS:
            views.skipped[task] = f"body under {MIN_BODY_WORDS} words"
            continue
        fields = {"body": body, "title": title, "abstract": abstract_in if spec.label_source == "title" else abstract}
        fields = {k: fields[k] for k in spec.input_fields}
        if any(not fields[k].strip() for k in fields):
            missing = ", ".join(k for k in fields if not fields[k].strip())
            views.skipped[task] = f"missing input: {missing}"
            continue
        if any(contains(fields[k], label) for k in fields):
            views.skipped[task] = "label text found in the input (parse problem)"
            continue
        why = label_reason(task, label, gate)
        if why is None:
            why = leak_reason(label, {k: fields[k] for k in fields})
        if why is not None:
            views.skipped[task] = why
            continue
        ftok = {"body": body_tok, **{k: tok[k] for k in ("title", "abstract") if k in fields}}
        if spec.label_source == "title" and abstract_in != abstract:
            ftok["abstract"] = count_tokens([abstract_in])[0] if counts else 0
        # joined words count as lost hyphens only in text read from a PDF (a metadata abstract is typed)
        vocab_here = label_vocab if task not in ("title", "abstract") or from_parse else None
        left = {k: v for k, v in debris_counts(label, vocab_here).items() if v}
        views.instances[task] = TaskInstance(task, fields, label, ftok, label_tok, notes, left)
    return views
