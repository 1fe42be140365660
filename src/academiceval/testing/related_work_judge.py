"""A scripted Related Work judge for the local fake server (`testing.fake_server`, `responder=`): it answers the
prompts of `scores.related_work_judge` (organisation, nuggets, nugget coverage, claim support) by fixed lexical
rules, so the real code path — prompt, quoting, server, response cache, VERDICT parsing, repair, score records,
report — runs offline end to end. It is a stand-in for an LLM judge, not one: its grades measure word overlap and
paragraph structure, and every figure made with it says so (notes/scores.md).

Rules (content words: 4+ letters, not in a small stop list, citation marks removed):
- organisation: 1 for a text under 40 words; else 2, +1 with at least two paragraphs that cite something, +1 when
  paragraphs hold two or more sentences on average, +1 when the text relates the works to the paper ("we",
  "our", "this paper", "in contrast", "unlike", …), −1 when most sentences open with the same three words (a list
  of one work after another); clipped to 1–5.
- nuggets: the reference section's sentences that carry a citation, without their marks, first `max` of them.
- nugget coverage: "yes" when ≥ 50 % of a nugget's content words are in the section, "partial" at ≥ 25 %.
- claim support: "yes" when ≥ 30 % of the sentence's content words occur in the works shown, "partial" at ≥ 10 %.

Like `testing.judges.quoting_judge`, it echoes the judged text (unquoted) in its reasoning before its own final
VERDICT line — the worst case for a parser that would read a verdict from anywhere in the reply.
"""

from __future__ import annotations

import json
import re

from academiceval.testing.judges import quoting_judge

_STOP_TEXT = """this that with from have been were their which these those such also into than then them they
    there where
    while when what will would could should about after before other more most many some each both only very over
    under between through using used based show shows shown paper work works approach approaches method methods
    model models propose proposed results result recent prior"""
STOP = frozenset(_STOP_TEXT.split())
RELATION = re.compile(r"\b(?:we|our|this (?:paper|work|study)|in contrast|unlike|differs?|complement\w*)\b", re.I)
_MARKS = re.compile(r"\[[^\]]{0,80}\]|\([^()]{0,120}\d{4}[a-z]?\)")


def _block(prompt: str, tag: str) -> str | None:
    m = re.search(rf"\n<{tag}>\n(.*?)\n</{tag}>\n", prompt, re.S)
    if m is None:
        return None
    lines = [line[2:] if line.startswith("| ") else line for line in m.group(1).split("\n")]
    return "\n".join(lines).replace("[ [", "[[").replace("] ]", "]]")


def content_words(text: str) -> set[str]:
    text = _MARKS.sub(" ", text)
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in STOP}


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[(])", " ".join(text.split())) if s.strip()]


def _cites(text: str) -> bool:
    return bool(re.search(r"\[\s*\d|\b(?:19|20)\d{2}[a-z]?\)|et al\.?,? \(?(?:19|20)\d{2}", text))


def organisation(text: str) -> int:
    if len(text.split()) < 40:
        return 1
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    sents = _sentences(text)
    score = 2
    score += sum(_cites(p) for p in paras) >= 2
    score += len(sents) / max(1, len(paras)) >= 2
    score += bool(RELATION.search(text))
    openings = [" ".join(s.lower().split()[:3]) for s in sents]
    if openings and max(openings.count(o) for o in set(openings)) > len(openings) / 2:
        score -= 1
    return max(1, min(5, score))


def nuggets(section: str, most: int) -> list[str]:
    out = []
    for s in _sentences(section):
        if _cites(s):
            plain = " ".join(_MARKS.sub(" ", s).split()[:30])
            if content_words(plain):
                out.append(plain)
    return out[:most] or [" ".join(section.split()[:30])]


def share(words: set[str], pool: set[str]) -> float:
    return len(words & pool) / len(words) if words else 0.0


def related_work_judge(prompt: str) -> str:
    """The scripted judge's reply to one prompt of `scores.related_work_judge` (else `quoting_judge`'s)."""
    if prompt.startswith("You are an experienced reviewer grading how well a related-work section is organised"):
        text = _block(prompt, "section") or ""
        own = json.dumps({"score": organisation(text), "reason": "structure and relation words"})
        return f'The section reads: "{text}"\nVERDICT: {own}'
    if prompt.startswith("Below is the related-work section that the authors"):
        text = _block(prompt, "section") or ""
        most = int(m.group(1)) if (m := re.search(r"Give at most (\d+)", prompt)) else 15
        return f"Nuggets follow.\nVERDICT: {json.dumps({'nuggets': nuggets(text, most)})}"
    if prompt.startswith("Below are numbered nuggets"):
        listing, text = _block(prompt, "nuggets") or "", _block(prompt, "section") or ""
        pool = content_words(text)
        labels = {}
        for line in listing.split("\n"):
            if m := re.match(r"(\d+)\. (.*)", line):
                s = share(content_words(m.group(2)), pool)
                labels[m.group(1)] = "yes" if s >= 0.5 else "partial" if s >= 0.25 else "no"
        return f'The section reads: "{text}"\nVERDICT: {json.dumps(labels)}'
    if prompt.startswith("A sentence of a generated related-work section cites"):
        works, sentence = _block(prompt, "works") or "", _block(prompt, "sentence") or ""
        s = share(content_words(sentence), content_words(works))
        verdict = "yes" if s >= 0.3 else "partial" if s >= 0.1 else "no"
        own = json.dumps({"support": verdict, "reason": f"{s:.2f} of its words are in the works"})
        return f'The sentence says: "{sentence}"\nVERDICT: {own}'
    return quoting_judge(prompt)
