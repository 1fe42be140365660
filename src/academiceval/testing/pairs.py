"""Real text pairs for metric parity checks and speed benchmarks, read from a corpus directory.

Why: the ROUGE and BERTScore re-implementations must agree with their reference packages on real scientific
text (LaTeX placeholders, unicode, long sections), not only on toy strings. Tests and benchmarks share this
one deterministic builder so "the same ≥1,000 pairs" means the same pairs everywhere. Nothing here is copied
into the project: the texts are read at run time from the corpus (`../shared/corpus`).

Pairs (reference, candidate), in a fixed order:
  * unarXive papers: abstract vs each paragraph, consecutive paragraphs, abstract vs the next paper's abstract;
  * L-Eval paper_assistant: each reference output vs the same instruction's output of the next paper;
  * SCALAR paper objects: abstract vs each section (long, multi-sentence).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z{])")


def _words_prefix(text: str, max_words: int | None) -> str:
    """The first `max_words` whitespace words of `text`, keeping the original characters (None: all)."""
    if max_words is None:
        return text
    parts = re.split(r"(\s+)", text)
    out: list[str] = []
    n = 0
    for p in parts:
        if p and not p.isspace():
            n += 1
            if n > max_words:
                break
        out.append(p)
    return "".join(out).rstrip()


def one_sentence_per_line(text: str) -> str:
    """Split on sentence ends and join with newlines (what rougeLsum expects as its input format)."""
    sents = [s.strip() for s in _SENT_END.split(" ".join(text.split()))]
    return "\n".join(s for s in sents if s)


def _unarxive_docs(corpus: Path) -> Iterator[dict]:
    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


def _unarxive(corpus: Path) -> Iterator[tuple[str, list[str]]]:
    for d in _unarxive_docs(corpus):
        abstract = (d.get("abstract") or {}).get("text", "").strip()
        paras = [p["text"].strip() for p in d.get("body_text", []) if len(p.get("text", "").split()) >= 8]
        if abstract and paras:
            yield abstract, paras


def real_text_pairs(
    corpus: str | Path, *, max_words: int | None = 220, long_pairs: bool = True
) -> list[tuple[str, str]]:
    """All pairs in a fixed order (≈1,500 with the sample corpus). `max_words` caps each text's length so the
    pure-Python reference implementations stay tractable in tests; `long_pairs` adds uncapped SCALAR
    section pairs (hundreds to thousands of words)."""
    corpus = Path(corpus)
    pairs: list[tuple[str, str]] = []
    papers = list(_unarxive(corpus))
    for k, (abstract, paras) in enumerate(papers):
        for i, para in enumerate(paras[:14]):
            pairs.append((abstract, para))
            if i + 1 < len(paras):
                pairs.append((para, paras[i + 1]))
        pairs.append((abstract, papers[(k + 1) % len(papers)][0]))
    leval_path = corpus / "samples" / "leval_paper_assistant.jsonl"
    docs = [json.loads(line) for line in leval_path.open(encoding="utf-8")]
    for k, doc in enumerate(docs):
        nxt = docs[(k + 1) % len(docs)]
        for a, b in zip(doc.get("outputs", []), nxt.get("outputs", []), strict=False):
            pairs.append((a, b))
    pairs = [(_words_prefix(a, max_words), _words_prefix(b, max_words)) for a, b in pairs]
    if long_pairs:
        for path in sorted((corpus / "samples" / "scalar_paper_obj_anno").glob("*.json")):
            obj = json.loads(path.read_text(encoding="utf-8"))
            abstract = str(obj.get("abstract", ""))
            sections = obj.get("sections") or {}
            for name in sorted(sections)[:4]:
                text = sections[name]
                text = text.get("content", "") if isinstance(text, dict) else text
                if not isinstance(text, str):
                    continue
                pairs.append((abstract, text))
    return [(a, b) for a, b in pairs if a.strip() and b.strip()]


def real_section_pairs(corpus: str | Path, *, max_words: int | None = 900) -> list[tuple[str, str]]:
    """Section-length pairs (what Introduction / Related Work outputs look like): per unarXive paper, the
    abstract and each section, consecutive sections; SCALAR abstracts vs sections; L-Eval outputs uncapped."""
    corpus = Path(corpus)
    pairs: list[tuple[str, str]] = []
    for d in _unarxive_docs(corpus):
        abstract = (d.get("abstract") or {}).get("text", "").strip()
        sections: dict[str, list[str]] = {}
        for p in d.get("body_text", []):
            sections.setdefault(p.get("section") or "", []).append(p.get("text", "").strip())
        texts = ["\n".join(v) for v in sections.values() if len(" ".join(v).split()) >= 40]
        for i, text in enumerate(texts):
            if abstract:
                pairs.append((abstract, text))
            if i + 1 < len(texts):
                pairs.append((text, texts[i + 1]))
    for path in sorted((corpus / "samples" / "scalar_paper_obj_anno").glob("*.json")):
        obj = json.loads(path.read_text(encoding="utf-8"))
        secs = [
            v.get("content", "") if isinstance(v, dict) else v for _, v in sorted((obj.get("sections") or {}).items())
        ]
        secs = [t for t in secs if isinstance(t, str) and t.strip()]
        for i, text in enumerate(secs):
            pairs.append((str(obj.get("abstract", "")), text))
            if i + 1 < len(secs):
                pairs.append((text, secs[i + 1]))
    leval_path = corpus / "samples" / "leval_paper_assistant.jsonl"
    docs = [json.loads(line) for line in leval_path.open(encoding="utf-8")]
    for k, doc in enumerate(docs):
        for a, b in zip(doc.get("outputs", []), docs[(k + 1) % len(docs)].get("outputs", []), strict=False):
            pairs.append((a, b))
    pairs = [(_words_prefix(a, max_words), _words_prefix(b, max_words)) for a, b in pairs]
    return [(a, b) for a, b in pairs if a.strip() and b.strip()]
