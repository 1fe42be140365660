"""`rounds.templating.PromptEnvironment` (the runner's hot path renders every prompt through it) renders exactly what
a plain `jinja2.Environment` with the same loader and options renders, for every writing task and variant, on real
paper text (unarXive sample): titles, bodies, demos, citations, retrieved passages and the length hint."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import jinja2

from academiceval.errors import ConfigError
from academiceval.rounds import prompts, templating
from academiceval.rounds.prompts import VARIANTS, render_prompt
from academiceval.rounds.templating import PromptEnvironment, PromptTemplate
from academiceval.store.artifacts import load_round
from academiceval.store.models import CitedPaper, Demo, Sample
from academiceval.testing.sample_round import load_unarxive_papers, write_sample_round

TASKS = ("title", "abstract", "introduction", "related_work")


def _plain_env(env: jinja2.Environment) -> jinja2.Environment:
    return jinja2.Environment(
        loader=env.loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
        auto_reload=False,
    )


def _samples(corpus: Path) -> list[Sample]:
    papers = load_unarxive_papers(corpus, max_papers=6, body_chars=3000)
    out = []
    for i, p in enumerate(papers):
        older = papers[i - 1]
        demo = Demo(
            arxiv_id=older["arxiv_id"],
            published=older["published"],
            fields={"title": older["title"], "body": older["body"][:800]},
            label=older["abstract"],
            origin="random",
        )
        cited = [
            CitedPaper(
                arxiv_id=q["arxiv_id"], title=q["title"], abstract=q["abstract"], authors=["A. Vaswani", "B. Li"]
            )
            for q in papers
            if q is not p
        ] + [CitedPaper(title="An unresolved reference", resolved=False, year=2019)]
        for task in TASKS:
            fields = {"title": p["title"], "body": p["body"]} if task != "title" else {"abstract": p["abstract"]}
            fields["body"] = p["body"]
            out.append(
                Sample(
                    sample_id=f"{task}/{p['arxiv_id']}",
                    round="t",
                    task=task,
                    setting="random:1",
                    split="test",
                    arxiv_id=p["arxiv_id"],
                    paper_id=f"unarxive:{p['arxiv_id']}",
                    published=p["published"] or date(2022, 12, 1),
                    fields=fields,
                    label=p["abstract"],
                    demos=[demo],
                    citations=cited if task == "related_work" else [],
                )
            )
    return out


def test_prompt_environment_renders_what_jinja2_renders(corpus):
    env = prompts.env()
    assert isinstance(env, PromptEnvironment) and env.cache is not None and isinstance(env.cache, dict)
    plain = _plain_env(env)
    checked = 0
    for s in _samples(corpus):
        for variant in VARIANTS:
            for retrieved, words in ((None, None), (["first passage", "second passage"], 180)):
                ours = render_prompt(s, variant=variant, retrieved=retrieved, length_words=words)
                ctx = prompts._context(
                    s, fields_override=None, demos_override=None, retrieved=retrieved, length_words=words
                )
                theirs = plain.get_template(f"{s.task}_{variant}.j2").render(**ctx).strip() + "\n"
                assert ours == theirs, (s.sample_id, variant)
                checked += 1
    assert checked == 6 * len(TASKS) * len(VARIANTS) * 2
    template = env.get_template("abstract_plain.j2")
    assert type(template.globals) is dict and "range" in template.globals  # the environment's globals, overlaid


def test_template_globals_overlay_the_environment_and_stay_per_template(tmp_path):
    (tmp_path / "a.j2").write_text("{{ greeting }} {{ name }}")
    (tmp_path / "b.j2").write_text("{{ greeting }}")
    env = PromptEnvironment(loader=jinja2.FileSystemLoader(str(tmp_path)), undefined=jinja2.StrictUndefined)
    env.globals["greeting"] = "hello"
    a = env.get_template("a.j2", globals={"name": "a"})
    assert a.render() == "hello a"
    assert env.get_template("b.j2").render() == "hello" and "name" not in env.get_template("b.j2").globals
    assert PromptEnvironment(cache_size=5).cache is not None and not isinstance(
        PromptEnvironment(cache_size=5).cache, dict
    )


MACROS = """\
{%- macro plain(a, b) -%}[{{ a }}|{{ b }}]{%- endmacro -%}
{%- macro defaults(a, b="B") -%}<{{ a }}/{{ b }}>{%- endmacro -%}
{%- macro catch_all(a) -%}({{ a }};{{ varargs | join(",") }};{{ kwargs | dictsort | join(",") }}){%- endmacro -%}
{%- macro wrap(a) -%}{{ a }}:{{ caller() }}{%- endmacro -%}
{%- macro named_caller(a, caller=none) -%}{{ a }}{{ caller }}{%- endmacro -%}
{%- macro nothing() -%}{%- endmacro -%}
"""
USES = """\
{%- import "m.j2" as m -%}
{{ m.plain(x, "<b>") }} {{ m.defaults(x) }} {{ m.defaults(x, b=x) }} {{ m.defaults(a=x) }}
{{ m.catch_all(x) }} {{ m.catch_all(x, 1, 2) }} {{ m.catch_all(x, k=3) }}
{% call m.wrap(x) %}inside {{ x }}{% endcall %} {{ m.named_caller(x, "c") }} {{ m.named_caller(x) }} [{{ m.nothing() }}]
{%- for i in [1, 2] %} {{ m.plain(i, loop.index) }}{% endfor %}
{%- set f = m.plain %} {{ f(x, x) }} {{ m.plain(*[x, "y"]) }}
"""


def test_macro_calls_render_as_in_jinja2_with_and_without_autoescape(tmp_path, monkeypatch):
    """`PromptContext.call` takes a short path for a call with exactly a macro's positional arguments; every kind of
    call (defaults, keywords, varargs/kwargs, caller blocks, calls in loops, through a variable, with autoescape on
    or off) renders what jinja2's own path renders, and the wrong calls raise the same errors."""
    (tmp_path / "m.j2").write_text(MACROS)
    (tmp_path / "use.j2").write_text(USES)
    (tmp_path / "bad.j2").write_text('{%- import "m.j2" as m -%}{{ m.plain(1, 2, 3) }}')
    for autoescape in (False, True):
        loader = jinja2.FileSystemLoader(str(tmp_path))
        opts = dict(loader=loader, undefined=jinja2.StrictUndefined, autoescape=autoescape)
        ours, theirs = PromptEnvironment(**opts), jinja2.Environment(**opts)
        for x in ("plain", "<em>&'\"", "ünïcode — ∑"):
            got = ours.get_template("use.j2").render(x=x)
            assert got == theirs.get_template("use.j2").render(x=x)
            assert ("&lt;b&gt;" in got) is autoescape  # the caller's autoescape reaches the macro
        for env in (ours, theirs):
            try:
                env.get_template("bad.j2").render()
                raise AssertionError("three arguments to a two-argument macro must fail")
            except TypeError as e:
                assert "takes not more than 2 argument(s)" in str(e)

    # the short path is taken: a plain positional call renders without jinja2's Macro.__call__
    def refuse(*args, **kwargs):
        raise AssertionError("Macro.__call__ was used")

    (tmp_path / "short.j2").write_text('{%- import "m.j2" as m -%}{{ m.plain(1, "2") }}{{ m.nothing() }}')
    env = PromptEnvironment(loader=jinja2.FileSystemLoader(str(tmp_path)), undefined=jinja2.StrictUndefined)
    monkeypatch.setattr(jinja2.runtime.Macro, "__call__", refuse)
    assert env.get_template("short.j2").render() == "[1|2]"
    monkeypatch.undo()

    # a jinja2 without the private names the short path uses: jinja2's own path, the same text
    monkeypatch.setattr(templating, "_PLAIN_MACRO_CALLS", False)
    env = PromptEnvironment(loader=jinja2.FileSystemLoader(str(tmp_path)), undefined=jinja2.StrictUndefined)
    plain = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path)), undefined=jinja2.StrictUndefined)
    assert env.get_template("use.j2").render(x="y") == plain.get_template("use.j2").render(x="y")


def test_prompt_template_render_is_jinja2s_render_on_a_real_round(corpus, tmp_path, monkeypatch):
    """`PromptTemplate.render` builds its context in one step; on every sample of a real round (title and abstract
    × zero-shot and random:1 over real papers, rendered with a copy of the templates, as a round holds them) it gives
    what jinja2's own
    `Template.render` gives on the same template object, and it fails the same way."""
    view = load_round(write_sample_round(corpus, tmp_path / "2022-12-sample", max_papers=6, body_chars=3000))
    templates = shutil.copytree(prompts.DEFAULT_TEMPLATES, tmp_path / "templates")
    samples = view.distinct_samples()
    assert {(s.task, s.setting) for s in samples} == {
        (t, g) for t in ("title", "abstract") for g in ("zero-shot", "random:1")
    }
    env = prompts.env(templates)
    for s in samples:
        for words in (None, 150):
            ours = render_prompt(s, templates_dir=templates, length_words=words)
            variant = "demos" if s.demos else "plain"
            template = env.get_template(f"{s.task}_{variant}.j2")
            assert type(template) is PromptTemplate
            ctx = prompts._context(s, fields_override=None, demos_override=None, retrieved=None, length_words=words)
            assert ours == jinja2.Template.render(template, **ctx).strip() + "\n", s.sample_id
            assert template.render(ctx) == template.render(**ctx)  # a positional mapping takes jinja2's path
    # the same error as jinja2's render (StrictUndefined), with jinja2's traceback rewriting
    for render in (PromptTemplate.render, jinja2.Template.render):
        try:
            render(env.get_template("abstract_plain.j2"), title="t")
            raise AssertionError("a missing variable must fail")
        except jinja2.UndefinedError as e:
            assert "'body' is undefined" in str(e)
    # a relative templates directory resolves against the working directory of each call
    monkeypatch.chdir(tmp_path)
    rel = render_prompt(samples[0], templates_dir=templates.name)
    assert rel == render_prompt(samples[0], templates_dir=templates)
    monkeypatch.chdir(view.path)
    try:
        render_prompt(samples[0], templates_dir=templates.name)
        raise AssertionError("a directory that is not there from here must fail")
    except ConfigError as e:
        assert "templates" in str(e)
