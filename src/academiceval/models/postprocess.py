"""Cleaning model answers before scoring; the runner keeps the raw answer beside the cleaned one.

Chat models wrap short answers: "Sure! Here is a title for the paper:", "**Title:** ...", quotes, a final
period, an explanation after a blank line. Scoring a 10-word title with ROUGE-L, such wrappers cost more than
the title's content differs between models, so titles are refined. Longer outputs only lose a leading
preamble line, a heading naming the section, and reasoning blocks; their content is left untouched.
"""

from __future__ import annotations

import functools
import re

from academiceval.store.tasks import find_spec

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_UNCLOSED_THINK = re.compile(r"^\s*<(think|thinking|reasoning)>.*", re.IGNORECASE | re.DOTALL)

# A chatty opener, possibly followed by the answer after a colon on the same line.
_PREAMBLE = re.compile(
    r"""^\s*(?:
        (?:sure|certainly|okay|ok|of\s+course|absolutely|great|alright)\s*[,!.][^:\n]*?(?::|$)
      | (?:here(?:'s|’s|\s+is|\s+are)|below\s+is)\b[^:\n]*?:
      | (?:i\s+(?:would|'d|’d)\s+(?:suggest|propose)|i\s+suggest|i\s+propose|my\s+(?:suggested|proposed)
         |a\s+(?:possible|suitable|concise|good|fitting)|one\s+possible|this\s+is)
        \b[^:\n]*?\b(?:title|abstract|introduction|section|following)\b[^:\n]*?:
      | the\s+(?:title|abstract|introduction|related\s+work)\s+(?:is|could\s+be|would\s+be)\b[^:\n]*?:
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?(?:(?:suggested|proposed|possible|new|final|paper|generated|refined|recommended|revised)\s+)*"
    r"title\s*(?:\d+\s*)?(?:\*\*|__)?\s*(?::|-|–|—)\s*",
    re.IGNORECASE,
)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]\s+|\d{1,2}[.)]\s+|#{1,6}\s*|>\s*)")
_EMPHASIS = re.compile(r"^(\*\*|__|\*|_|`+)(.+?)\1$", re.DOTALL)
_QUOTES = [('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("`", "`")]
_HTML_TITLE = re.compile(r"</?title>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """Drop <think>...</think> blocks (reasoning models); an unclosed one means no answer was given."""
    if "<" not in text:  # neither pattern can match (the common answer): skip two scans of the whole text
        return text.strip()
    text = _THINK.sub("", text)
    return _UNCLOSED_THINK.sub("", text).strip()


def _unwrap(line: str) -> str:
    """Peel markdown emphasis, quotes and list/heading markers until nothing changes."""
    prev = None
    while prev != line:
        prev = line
        line = line.strip()
        line = _LIST_MARK.sub("", line, count=1) if _LIST_MARK.match(line) and len(line) > 3 else line
        line = _LABEL.sub("", line, count=1)
        m = _EMPHASIS.match(line)
        if m:
            line = m.group(2)
        for left, right in _QUOTES:
            if len(line) >= 2 and line.startswith(left) and line.endswith(right):
                line = line[len(left) : -len(right)]
        # "**Title:** X" leaves a dangling "** X" after the label: strip stray emphasis at either end
        line = re.sub(r"^(?:\*\*|__)\s*", "", line)
        line = re.sub(r"\s*(?:\*\*|__)$", "", line)
    return line.strip()


def _content_lines(text: str) -> list[str]:
    lines = [ln.strip() for ln in text.splitlines()]
    return [ln for ln in lines if ln and not re.fullmatch(r"[-=*_#`]{3,}", ln)]


def refine_title(text: str) -> str:
    """The title inside a chatty answer: the first line that is not a preamble, without labels and wrappers."""
    text = _HTML_TITLE.sub("\n", strip_reasoning(text))
    for line in _content_lines(text):
        m = _PREAMBLE.match(line)
        if m:
            rest = line[m.end() :].strip()
            if not rest:
                continue  # a pure opener such as "Sure! Here is a title:" — the title follows
            line = rest
        bare = _unwrap(line)
        if not bare or re.fullmatch(r"(?:title|suggested title|proposed title)\s*:?", bare, re.IGNORECASE):
            continue
        bare = re.sub(r"\s+", " ", bare)
        if bare.endswith(".") and not bare.endswith("..") and not re.search(r"\b(?:al|etc|vs|e\.g|i\.e)\.$", bare):
            bare = bare[:-1].rstrip()
        return _unwrap(bare)
    return ""


def strip_preamble(task: str, text: str) -> str:
    """Long outputs: drop reasoning blocks, a leading chatty line ending in ':' and a heading naming the section."""
    text = strip_reasoning(text)
    lines = text.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines:
        first = lines[0].strip()
        m = _PREAMBLE.match(first)
        if m and not first[m.end() :].strip():
            lines.pop(0)
    while lines and not lines[0].strip():
        lines.pop(0)
    spec = find_spec(task)
    heading = spec.answer_heading if spec is not None else None  # a heading naming the output (e.g. "Abstract")
    if lines and heading:
        first = lines[0].strip()
        # the marks sit at the ends: a line that starts with neither '#' nor '*' and ends with neither ':' nor '*'
        # has none, and the substitution (which scans the whole line) is skipped
        marked = first[:1] in "#*" or first[-1:] in ":*"
        bare = (_HEADING_MARKS.sub("", first) if marked else first).strip().strip("*").strip()
        whole, inline = _heading_patterns(heading)
        if whole.fullmatch(bare):
            lines.pop(0)
        else:  # "Abstract: We study ..." on one line
            m = inline.match(first)
            if m and first[m.end() :].strip():
                lines[0] = first[m.end() :]
    return "\n".join(lines).strip()


_HEADING_MARKS = re.compile(r"^#{1,6}\s*|^\*\*|\*\*$|:$|\*\*:$|:\*\*$")


@functools.lru_cache(maxsize=32)
def _heading_patterns(heading: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A task's heading as a whole line, and as a label before the answer on the same line (compiled once per
    heading: every answer of a run is cleaned with the same two)."""
    inline = rf"^\s*(?:\*\*)?{heading}(?:\*\*)?\s*[:—–-]\s*(?:\*\*)?\s*"
    return re.compile(heading, re.IGNORECASE), re.compile(inline, re.IGNORECASE)


def postprocess(task: str, text: str) -> str:
    """The answer to score for `task` (a title is refined, as its spec says; other tasks lose only wrappers)."""
    if text is None:
        return ""
    spec = find_spec(task)
    if spec is not None and spec.refine == "title":
        return refine_title(text)
    return strip_preamble(task, text)
