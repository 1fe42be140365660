"""The writing tasks (Title, Abstract, Introduction, Related Work) as a task family: their specs.

Their machinery is the rounds stage itself — catalogue, split, demos, templates, leakage checks, quality gate
(`rounds.build`, `rounds.tasks`) — driven by these specs: what the label is (the title, the metadata abstract,
a section), which section the body loses, the fields a sample carries, the label-length bounds of the quality
gate, the output length, how prompts and the judge name the output, and the text baselines' target length.
"""

from __future__ import annotations

from academiceval.store.tasks import Family, TaskSpec

_SECTION = r"(?:\d+\.?\s*)?"  # an optional section number before a heading ("1. Introduction")

SPECS = (
    TaskSpec(
        name="title",
        title="Title",
        prompt_kind="writing",
        order=0,
        input_fields=("body", "abstract"),
        max_new_tokens=32,
        output_name="title",
        judge_name="title",
        removes=None,
        label_source="title",
        label_words=(2, 40),
        target_words=10,
        refine="title",
    ),
    TaskSpec(
        name="abstract",
        title="Abstract",
        prompt_kind="writing",
        order=1,
        input_fields=("body", "title"),
        max_new_tokens=512,
        output_name="abstract",
        judge_name="abstract",
        removes="conclusion",
        label_source="metadata_abstract",
        label_words=(25, 350),
        target_words=200,
        answer_heading=r"abstract",
    ),
    TaskSpec(
        name="introduction",
        title="Introduction",
        prompt_kind="writing",
        order=2,
        input_fields=("body", "title", "abstract"),
        max_new_tokens=1536,
        output_name="introduction",
        judge_name="introduction section",
        removes="introduction",
        label_source="section",
        label_section="introduction",
        label_words=(150, 3000),
        target_words=1200,
        answer_heading=_SECTION + r"introduction",
    ),
    TaskSpec(
        name="related_work",
        title="Related Work",
        prompt_kind="writing",
        order=3,
        input_fields=("body", "title", "abstract"),
        max_new_tokens=1024,
        output_name="related-work section",
        judge_name="related work section",
        removes="related_work",
        label_source="section",
        label_section="related_work",
        label_words=(100, 3000),
        target_words=700,
        cites=True,
        answer_heading=_SECTION + r"(?:related\s+work|related\s+works|background(?:\s+and\s+related\s+work)?)",
    ),
)

family = Family("writing", SPECS)
