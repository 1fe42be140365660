"""Real Related Work samples from the unarXive sample and SCALAR's paper objects, for the citation metrics' tests
and benchmark.

The demo round has no Related Work samples (the sample papers' citations do not resolve to workspace papers), so
this builds them the way the round builder does, straight from pre-parsed papers (`sources.mirror.unarxive` and
`sources.mirror.scalar_papers`, whose ICLR papers carry every inline citation span): the
label is the paper's related-work section(s); the citation list is the references its in-text citations inside
that section link to (title from the parsed reference, else the raw entry; its authors and year; no abstract, as an
unresolved work; how often the section cites it), padded with as many distractors (references the paper cites
elsewhere only), shuffled with the sample's seed — numbered in the prompt in this
order. Every sample is written as a real round (`testing.sample_round.write_round`).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from academiceval.sources.mirror.records import MirrorRecord
from academiceval.sources.mirror.scalar_papers import is_scalar_paper_object, paper_object_to_records
from academiceval.sources.mirror.unarxive import unarxive_to_paper
from academiceval.store.hashing import stable_int
from academiceval.store.models import CitedPaper, Sample
from academiceval.store.paper_models import NON_BODY_ROLES, SectionRole
from academiceval.testing.sample_round import UNARXIVE, write_round

ROUND = "2022-12-relwork"
SCALAR_PAPERS = ("samples/scalar_paper_obj_anno", "samples/scalar_paper_obj_more")


def _question_papers(corpus: Path) -> list[MirrorRecord]:
    """Every pre-parsed question paper: the unarXive sample's papers, then SCALAR's (its first record per file)."""
    out: list[MirrorRecord] = []
    with (corpus / UNARXIVE).open(encoding="utf-8") as f:
        out.extend(unarxive_to_paper(json.loads(line)) for line in f)
    for folder in SCALAR_PAPERS:
        for path in sorted((corpus / folder).glob("*.json")):
            data = json.loads(path.read_bytes())
            if is_scalar_paper_object(data):
                first = next(paper_object_to_records(data, path=str(path)), None)
                if isinstance(first, MirrorRecord):
                    out.append(first)
    return out


def _ref_title(ref) -> str:
    return " ".join((ref.title or ref.raw).split())[:300]


def _entry(ref, *, distractor: bool = False, mentions: int = 0) -> CitedPaper:
    """A reference as a list entry: its own title, authors and year, no abstract (it was not resolved)."""
    return CitedPaper(
        title=_ref_title(ref),
        arxiv_id=ref.arxiv_id,
        authors=list(ref.authors),
        year=ref.year,
        resolved=False,
        distractor=distractor,
        mentions=mentions,
    )


def related_work_samples(corpus: Path, *, round_name: str = ROUND, body_chars: int = 20_000) -> list[Sample]:
    """One zero-shot Related Work sample per pre-parsed paper whose related-work section cites references."""
    out: list[Sample] = []
    for rec in _question_papers(corpus):
        p = rec.paper
        if p is None:
            continue
        rw = {i for i, s in enumerate(p.sections) if s.role == SectionRole.related_work}
        cited = sorted({j for c in p.citations if c.section_index in rw for j in c.reference_indices})
        if not rw or not cited:
            continue
        elsewhere = sorted(
            {j for c in p.citations if c.section_index not in rw for j in c.reference_indices} - set(cited)
        )
        seed = stable_int(p.arxiv_id)
        rng = random.Random(seed)
        distractors = rng.sample(elsewhere, min(len(cited), len(elsewhere)))
        mentions = Counter(j for c in p.citations if c.section_index in rw for j in dict.fromkeys(c.reference_indices))
        corpus_list = [_entry(p.references[j], mentions=mentions[j]) for j in cited]
        corpus_list += [_entry(p.references[j], distractor=True) for j in distractors]
        rng.shuffle(corpus_list)
        body = "\n\n".join(
            s.text for i, s in enumerate(p.sections) if i not in rw and s.role not in NON_BODY_ROLES and s.text
        )[:body_chars]
        label = "\n\n".join(p.sections[i].text for i in sorted(rw) if p.sections[i].text)
        out.append(
            Sample(
                sample_id=f"related_work/zero-shot/{p.arxiv_id}",
                round=round_name,
                task="related_work",
                setting="zero-shot",
                split="test",
                arxiv_id=p.arxiv_id,
                paper_id=p.paper_id,
                published=rec.meta.published,
                primary_category=rec.meta.primary_category,
                fields={"body": body, "title": p.title, "abstract": p.abstract},
                citations=corpus_list,
                label=label,
                seed=seed,
            )
        )
    return out


def write_related_work_round(corpus: Path, out_dir: Path, *, round_name: str = ROUND) -> Path:
    samples = related_work_samples(corpus, round_name=round_name)
    return write_round(
        out_dir, round_name, {"related_work-zero-shot": samples}, build_options={"source": "unarXive related work"}
    )
