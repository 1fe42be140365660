"""The candidates a question paper's references can show: each linked reference's stored paper, prepared once
per build and shared by every question paper that cites it.

A `CandidateSource` is a stored paper as a candidate (title, abstract, the sections a candidate shows, token
counts cached per section). With `clean=True` (the filtered construction) every section goes through the
project's one cleaner (`papers.clean.clean_text`, the rules of the paper's source: PDF layout debris, unarXive
placeholders, ar5iv markup, captions), so a candidate reads like the question paper does; the SCALAR
construction shows the text as stored (already cleaned of ar5iv markup when read).
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import date

from academiceval.families.cloze.generate import CandidateSource, heading_line
from academiceval.papers.clean import clean_text, vocabulary
from academiceval.papers.links import links_of
from academiceval.store.paper_models import NON_BODY_ROLES, Paper
from academiceval.store.workspace import Workspace


class PaperCache:
    """Stored papers by id, the last `size` kept (question papers cite the same works again and again)."""

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


class CandidateLibrary:
    """Every linked stored paper as a candidate, built once per build: texts (cleaned or not), token counts,
    rendered forms and v1 dates are shared by all the question papers that cite it."""

    def __init__(self, ws: Workspace, *, clean: bool = False) -> None:
        self.ws = ws
        self.clean = clean
        self.papers = PaperCache(ws)
        self.tokens: dict[str, int] = {}
        self.rendered: dict[str, dict[str, tuple[str, int]]] = {}
        self.section_tokens: dict[str, list[int]] = {}
        self._sections: dict[str, list[tuple[str, str]]] = {}
        self._dates: dict[str, date | None] = {}

    def sections_of(self, target: Paper) -> list[tuple[str, str]]:
        hit = self._sections.get(target.paper_id)
        if hit is not None:
            return hit
        kept = [s for s in target.sections if s.role not in NON_BODY_ROLES and s.text.strip()]
        if self.clean:
            vocab = vocabulary([s.text for s in kept])
            out = [(heading_line(s), clean_text(s.text, vocab, source=target.source).text) for s in kept]
            out = [(h, t) for h, t in out if t.strip()]
        else:
            out = [(heading_line(s), s.text) for s in kept]
        self._sections[target.paper_id] = out
        return out

    def date_of(self, arxiv_id: str | None) -> date | None:
        if not arxiv_id:
            return None
        if arxiv_id not in self._dates:
            meta = self.ws.get_meta(arxiv_id)
            self._dates[arxiv_id] = meta.published if meta else None
        return self._dates[arxiv_id]

    def sources(self, paper: Paper) -> dict[int, CandidateSource]:
        """Reference index → its linked stored paper as a candidate, for every linked reference of `paper`."""
        out: dict[int, CandidateSource] = {}
        refs = {r.index: r for r in paper.references}
        for ri, link in links_of(self.ws, paper.paper_id).items():
            target = self.papers.get(link.target_paper_id)
            if target is None or ri not in refs:
                continue
            ref = refs[ri]
            out[ri] = CandidateSource(
                ref_index=ri,
                ref_id=ref.label or str(ri),
                paper_id=target.paper_id,
                arxiv_id=target.arxiv_id,
                title=target.title or (ref.title or ""),
                abstract=target.abstract,
                sections=self.sections_of(target),
                link_method=link.method,
                content_tokens=self.tokens.get(target.paper_id),
                published=self.date_of(target.arxiv_id),
                rendered=self.rendered.setdefault(target.paper_id, {}),
                section_tokens=self.section_tokens.setdefault(target.paper_id, []),
                ref_title=ref.title,
            )
        return out

    def remember(self, sources: dict[int, CandidateSource]) -> None:
        """Keep the content token counts the generator computed (they are per stored paper)."""
        for s in sources.values():
            if s.content_tokens is not None:
                self.tokens[s.paper_id] = s.content_tokens
