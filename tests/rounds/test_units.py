"""Unit checks of the round pieces: tokens, split windows, settings, tasks, prompts."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from academiceval.errors import ConfigError
from academiceval.rounds import prompts
from academiceval.rounds.settings import SettingSpec, parse_setting, setting_names, size_label
from academiceval.rounds.split import assign, windows_from_dates, windows_from_fractions
from academiceval.rounds.tasks import task_views
from academiceval.rounds.tokens import count, count_tokens, wordpiece
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import CitedPaper, Demo, Sample
from academiceval.store.paper_models import Paper, PaperMeta, Section, SectionRole


def test_wordpiece_is_bert_base_uncased_and_additive() -> None:
    tok = wordpiece()
    assert tok.get_vocab_size() == 30522
    assert tok.encode("Transformers", add_special_tokens=False).tokens == ["transformers"]
    a, b = "Attention is all you need.", "Long-context (LLM) evaluation: 70K+ tokens!"
    assert count(a + "\n\n" + b) == count(a) + count(b)
    assert count_tokens(["", "hello world"]) == [0, 2]


@given(st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=80))
@settings(max_examples=60, deadline=None)
def test_fraction_windows_never_split_a_day(offsets: list[int]) -> None:
    base = date(2024, 1, 1)
    dates = [base + timedelta(days=o) for o in offsets]
    w = windows_from_fractions(dates, (0.72, 0.19, 0.09))
    splits = {d: assign(d, w) for d in dates}
    order = {"train": 0, "val": 1, "test": 2}
    for d1 in dates:
        for d2 in dates:
            if d1 < d2:
                assert order[splits[d1]] <= order[splits[d2]]  # type: ignore[index]
    if w.test_from and w.val_until:
        assert w.val_until < w.test_from
    if len(set(dates)) >= 2:
        assert w.test_from is not None  # test kept non-empty whenever two days exist


def test_fraction_windows_close_to_72_19_9() -> None:
    dates = [date(2024, 1, 1) + timedelta(days=i) for i in range(100)]
    w = windows_from_fractions(dates, (0.72, 0.19, 0.09))
    counts = {s: sum(assign(d, w) == s for d in dates) for s in ("train", "val", "test")}
    assert counts == {"train": 72, "val": 19, "test": 9}


def test_explicit_dates_and_bad_dates() -> None:
    dates = [date(2024, 1, d) for d in range(1, 31)]
    w = windows_from_dates(dates, val_from=date(2024, 1, 20), test_from=date(2024, 1, 25), test_until=date(2024, 1, 28))
    assert assign(date(2024, 1, 19), w) == "train"
    assert assign(date(2024, 1, 24), w) == "val"
    assert assign(date(2024, 1, 25), w) == "test"
    assert assign(date(2024, 1, 29), w) is None
    with pytest.raises(ConfigError):
        windows_from_dates(dates, val_from=date(2024, 1, 25), test_from=date(2024, 1, 20), test_until=None)
    with pytest.raises(ConfigError):
        windows_from_dates(dates, val_from=date(2024, 1, 5), test_from=None, test_until=None)


def test_setting_specs_and_names() -> None:
    assert parse_setting("mixed:1+2") == SettingSpec("mixed", random=1, coauthor=2)
    assert parse_setting("coauthor:2").suffix == "G"
    for bad in ("random", "random:0", "few-shot", "mixed:1"):
        with pytest.raises(ConfigError):
            parse_setting(bad)
    specs = [parse_setting(x) for x in ("zero-shot", "coauthor:2", "mixed:1+1", "ctx:8000")]
    names = setting_names("abstract", specs)
    # task + setting, the same in every round (the measured size is metadata, not part of the name: issue 28)
    assert names == {
        "zero-shot": "abstract-zero-shot",
        "coauthor:2": "abstract-coauthor2",
        "mixed:1+1": "abstract-mixed1-1",
        "ctx:8000": "abstract-ctx8K",
    }
    clash = setting_names("title", [parse_setting("random:1"), parse_setting("zero-shot")])
    assert len(set(clash.values())) == 2
    assert size_label(13_834) == "14K" and size_label(940) == "0.9K"


def _paper() -> tuple[PaperMeta, Paper]:
    def words(tag: str) -> str:  # distinct text per section (identical sections would be near-copies)
        return " ".join(f"{tag}{i}" for i in range(300))

    meta = PaperMeta(
        arxiv_id="2401.00001",
        title="A Study of Things",
        abstract="We study things. " * 10,
        published=date(2024, 1, 2),
        primary_category="cs.CL",
    )
    paper = Paper(
        paper_id="p1",
        arxiv_id="2401.00001",
        sections=[
            Section(
                heading="Introduction",
                number="1",
                role=SectionRole.introduction,
                text="A Study of Things\n\nIn this paper we look at " + words("intro"),
            ),
            Section(heading="Method", number="2", role=SectionRole.method, text=words("method")),
            Section(heading="Conclusion", number="3", role=SectionRole.conclusion, text="We conclude " + words("c")),
            Section(heading="References", role=SectionRole.references, text="[1] Someone. 2020."),
        ],
    )
    return meta, paper


def test_task_views_cut_the_right_sections() -> None:
    meta, paper = _paper()
    v = task_views(meta, paper)
    assert set(v.instances) == {"title", "abstract", "introduction"}
    assert v.skipped["related_work"] == "no related work section"
    t = v.instances["title"]
    # the title is removed where it stands as a title (its own line), and the removal is recorded
    assert "A Study of Things" not in t.fields["body"] and "title removed where it stands as a title (body)" in t.notes
    assert "We conclude" not in v.instances["abstract"].fields["body"]
    intro = v.instances["introduction"]
    assert intro.label.startswith("A Study of Things\n\nIn this paper") and "In this paper" not in intro.fields["body"]
    assert "[1] Someone" not in t.fields["body"]
    for inst in v.instances.values():
        assert inst.field_tokens["body"] == count(inst.fields["body"])
        assert inst.label_tokens == count(inst.label)


def _sample(task: str = "related_work", demos: int = 1) -> Sample:
    d = [
        Demo(
            arxiv_id=f"23{i}",
            published=date(2023, 1, 1),
            fields={"body": f"demo body {i}", "title": "T", "abstract": "A"},
            label=f"demo label {i}",
            origin="random",
        )
        for i in range(demos)
    ]
    return Sample(
        sample_id="x",
        round="r",
        task=task,
        setting="random:1",
        split="test",
        arxiv_id="2401.1",
        paper_id="p",  # type: ignore[arg-type]
        published=date(2024, 1, 1),
        fields={"body": "THE BODY", "title": "THE TITLE", "abstract": "THE ABSTRACT"},
        citations=[CitedPaper(title="Cited One", abstract="cited abstract")],
        demos=d,
        label="L",
    )


def test_render_prompt_variants_overrides_and_hash() -> None:
    s = _sample()
    full = prompts.render_prompt(s)
    assert "demo body 0" in full and "Cited One" in full and "THE BODY" in full and "500 and 1000 words" in full
    plain = prompts.render_prompt(s, variant="plain")
    assert "demo body 0" not in plain and "Cited One" in plain
    cut = prompts.render_prompt(s, demos_override=[], fields_override={"body": "SHORT"})
    assert "demo body" not in cut and "SHORT" in cut and "THE BODY" not in cut
    rag = prompts.render_prompt(s, variant="rag", retrieved=["chunk alpha", "chunk beta"], length_words=700)
    assert "chunk beta" in rag and "700 words" in rag and "THE BODY" not in rag
    assert "THE TITLE" in prompts.retrieval_query(s)
    assert sha256_hex(full) == sha256_hex(prompts.render_prompt(s))
    parts = prompts.render_parts(s)
    assert "demo label 0" in parts["demos"] and "cited abstract" in parts["citations"] and "THE BODY" in parts["body"]
    with pytest.raises(ConfigError):
        prompts.render_prompt(s, variant="fancy")  # type: ignore[arg-type]


@pytest.mark.parametrize("task", ["title", "abstract", "introduction", "related_work"])
def test_every_task_template_states_its_requirement(task: str) -> None:
    need = {
        "title": "10 words",
        "abstract": "200 words",
        "introduction": "1000 and 1500 words",
        "related_work": "500 and 1000 words",
    }[task]
    s = _sample(task)
    for variant in ("plain", "demos", "rag"):
        assert need in prompts.render_prompt(s, variant=variant)  # type: ignore[arg-type]
    assert prompts.retrieval_query(s)


def test_templates_dir_overrides_one_file(tmp_path) -> None:
    (tmp_path / "title_plain.j2").write_text("CUSTOM {{ abstract }}")
    s = _sample("title", demos=0)
    assert prompts.render_prompt(s, templates_dir=tmp_path) == "CUSTOM THE ABSTRACT\n"
    assert prompts.render_prompt(s, templates_dir=tmp_path, variant="rag").startswith("The passages")
    with pytest.raises(ConfigError):
        prompts.render_prompt(s, templates_dir=tmp_path / "missing")


def test_label_match_ignores_case_and_any_whitespace() -> None:
    from academiceval.rounds.leakage import contains

    label = r"Spin wave dispersion of ultra-low damping hematite ($\alpha\text{-Fe}_2\text{O}_3$) thin films"
    body = r"we study SPIN WAVE dispersion of ultra-low damping hematite ($\alpha \text{-Fe}_2 \text{O}_3$) thin  films"
    assert contains(body, label)
    assert not contains(body, "Spin wave dispersion of ultra-low damping magnetite")
    assert not contains(body, "   ")
