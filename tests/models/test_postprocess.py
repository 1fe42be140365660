"""Title refinement and answer clean-up on the wrappers chat models really produce."""

from __future__ import annotations

import pytest

from academiceval.models.postprocess import postprocess, refine_title, strip_reasoning
from conftest import load_papers

T = "Attention Is All You Need"

WRAPPED = [
    T,
    f"{T}.",
    f"  {T}  \n",
    f'"{T}"',
    f"'{T}'",
    f"“{T}”",
    f"‘{T}’",
    f"«{T}»",
    f"`{T}`",
    f"**{T}**",
    f"*{T}*",
    f"__{T}__",
    f"# {T}",
    f"### {T}",
    f"> {T}",
    f"- {T}",
    f"1. {T}",
    f"Title: {T}",
    f"title: {T}",
    f"TITLE: {T}",
    f"Title - {T}",
    f"Title — {T}",
    f"**Title:** {T}",
    f"**Title**: {T}",
    f"**Title: {T}**",
    f"Title:\n{T}",
    f"Title: **{T}**",
    f'Title: "{T}"',
    f'Title: "{T}."',
    f"Suggested title: {T}",
    f"Proposed Title: {T}",
    f"Paper title: {T}",
    f"Here is a title: {T}",
    f"Here's a title for the paper: {T}",
    f"Here is a possible title for the paper:\n\n{T}",
    f'Here is a concise title that captures the main theme:\n\n"{T}"',
    f"Sure! Here's a concise title:\n\n**{T}**",
    f'Sure, here is the title: "{T}".',
    f"Sure.\n\n{T}",
    f'Certainly! Here is a possible title for the paper:\n\n"{T}."',
    f"Of course! Here's my suggestion:\n\nTitle: {T}",
    f"Okay, here is a title:\n{T}",
    f"I would suggest the following title: {T}",
    f"I suggest the title: {T}",
    f"A possible title: *{T}*",
    f"The title is: {T}",
    f"The title could be: {T}",
    f"{T}\n\nThis title captures the main contribution of the paper.",
    f'Title: "{T}"\n\nExplanation: the paper introduces the Transformer.',
    f"1. {T}\n2. Transformers for Sequence Transduction",
    f"<think>The paper proposes a model built only on attention.</think>\n{T}",
    f"<think>\nLet me think.\n</think>\n\nTitle: **{T}**",
    f"<title>{T}</title>",
    f"---\n{T}\n---",
    f"Here is a title for the paper:\n\n# {T}\n\nI chose this because...",
]


@pytest.mark.parametrize("text", WRAPPED)
def test_refine_title_strips_wrappers(text):
    assert refine_title(text) == T
    assert postprocess("title", text) == T


KEPT = [
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    "What Is Wrong With Topic Modeling? (and How to Fix It Using Search-based SE)",
    "Great Expectations: A Study of Reward Hacking",
    "A Concise Survey: Methods for Long-Context Evaluation",
    "Here Comes the Sun: Solar Forecasting with Transformers",
    "Sure-Footed Robots: Learning to Walk on Ice",
    "Scaling Laws for Neural Language Models",
    "Why Do Deep Nets Generalize?",
    "Learning to Rank, etc.",
    "GPT-4 Technical Report",
    "S-Graphs+: Real-time Localization and Mapping leveraging Hierarchical Representations",
]


@pytest.mark.parametrize("title", KEPT)
def test_refine_title_leaves_real_titles_alone(title):
    assert refine_title(title) == title
    assert refine_title(f"Title: {title}") == title


def test_every_real_title_of_the_corpus_survives_wrapping(corpus):
    titles = [p["title"] for p in load_papers(corpus).values()]
    assert len(titles) == 49
    for title in titles:
        expected = title[:-1] if title.endswith(".") else title
        assert refine_title(title) == expected
        assert (
            refine_title(f'Sure! Here is a title for the paper:\n\n**"{title}"**\n\nIt summarises the paper.')
            == expected
        )


def test_empty_and_refused_answers():
    assert refine_title("") == ""
    assert refine_title("   \n  ") == ""
    assert refine_title("<think>unfinished reasoning that never ends") == ""
    assert refine_title("Title:") == ""
    assert postprocess("abstract", "") == ""


def test_strip_reasoning():
    assert strip_reasoning("<think>a</think>answer") == "answer"
    assert strip_reasoning("<reasoning>x\ny</reasoning>\n\nfinal") == "final"


def test_long_outputs_lose_only_their_wrappers():
    body = "We study attention-only models.\n\nThey train faster than recurrent ones."
    assert postprocess("abstract", f"Sure, here is the abstract:\n\n{body}") == body
    assert postprocess("abstract", f"**Abstract:** {body}") == body
    assert postprocess("abstract", f"Abstract: {body}") == body
    assert postprocess("abstract", f"## Abstract\n\n{body}") == body
    assert postprocess("introduction", f"# 1 Introduction\n\n{body}") == body
    assert postprocess("introduction", f"**Introduction**\n{body}") == body
    assert postprocess("related_work", f"## Related Work\n\n{body}") == body
    assert postprocess("related_work", f"<think>plan</think>\nHere is the related work section:\n\n{body}") == body
    # content that merely starts with a similar word is kept
    text = "Abstractions in programming languages help.\nMore text."
    assert postprocess("abstract", text) == text
    assert postprocess("introduction", body) == body


# (task, answer, cleaned) as the clean-up gave them before its fast paths (a line is scanned for heading marks only
# when it starts with '#'/'*' or ends with ':'/'*'; the reasoning patterns only when the text has a '<')
FAST_PATH_CASES = [
    ("abstract", "**Abstract:** We study zeros.", "We study zeros."),
    ("abstract", "# Abstract\nWe study zeros.", "We study zeros."),
    ("abstract", "Abstract:\n\nWe study zeros.", "We study zeros."),
    ("abstract", "We study zeros of random polynomials:", "We study zeros of random polynomials:"),
    ("abstract", "We study zeros **", "We study zeros **"),
    ("abstract", "**We study zeros**", "**We study zeros**"),
    ("abstract", "Abstract — We study zeros.", "We study zeros."),
    ("introduction", "## Introduction\nText <b>bold</b>.", "Text <b>bold</b>."),
    ("abstract", "<think>plan</think>Abstract: We study.", "We study."),
    ("related_work", "Related Work*", ""),
    ("abstract", "*Abstract*: We study.", "*Abstract*: We study."),
    ("abstract", "  \n Sure! Here is the abstract:\nAbstract: We study.", "We study."),
]


@pytest.mark.parametrize(("task", "answer", "cleaned"), FAST_PATH_CASES)
def test_fast_paths_clean_as_before(task, answer, cleaned):
    assert postprocess(task, answer) == cleaned
