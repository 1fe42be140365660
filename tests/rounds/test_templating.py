"""`rounds.templating.PromptEnvironment` (the runner's hot path renders every prompt through it) renders exactly what
a plain `jinja2.Environment` with the same loader and options renders, for every writing task and variant, on real
paper text (unarXive sample): titles, bodies, demos, citations, retrieved passages and the length hint."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import jinja2

from academiceval.rounds import prompts
from academiceval.rounds.prompts import VARIANTS, render_prompt
from academiceval.rounds.templating import PromptEnvironment
from academiceval.store.models import CitedPaper, Demo, Sample
from academiceval.testing.sample_round import load_unarxive_papers

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
