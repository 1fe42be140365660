"""Prompt rendering from template files (jinja2), kept separate from the samples.

A sample stores its input *fields*; any backend re-renders the prompt after cutting it to its own budget: the
runner passes `demos_override` (fewer or shortened demos) and `fields_override` (e.g. a shortened body) and
renders again. Blocks (`render_parts`) are exposed so a runner can measure what each costs.

Template files live in `rounds/templates/`, one per writing task × {plain, demos, rag} plus `<task>_query.j2`; a
user directory (`--templates DIR`) overrides any of them file by file. Other prompt kinds render through their
core path: multiple choice (`rounds.choice`) and long-document QA (`rounds.document_qa`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

import jinja2

from academiceval.errors import ConfigError
from academiceval.rounds.choice import choice_item, render_choice
from academiceval.rounds.document_qa import document_port
from academiceval.rounds.templating import PromptEnvironment
from academiceval.store.models import CitedPaper, Demo, Sample
from academiceval.store.tasks import task_names, task_spec

Variant = Literal["plain", "demos", "rag"]
VARIANTS: tuple[Variant, ...] = ("plain", "demos", "rag")
DEFAULT_TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def _env(templates_dir: str | None) -> jinja2.Environment:
    search = [str(DEFAULT_TEMPLATES)]
    if templates_dir is not None:
        d = Path(templates_dir)
        if not d.is_dir():
            raise ConfigError(f"templates directory {d} does not exist", hint="pass a directory of .j2 files")
        search.insert(0, str(d))
    return PromptEnvironment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
        # Templates are read once per process: checking file mtimes on every render cost ~30% of render time.
        auto_reload=False,
    )


def env(templates_dir: str | Path | None = None) -> jinja2.Environment:
    return _env(_env_key(templates_dir))


def _env_key(templates_dir: str | Path | None) -> str | None:
    """The resolved directory (the key of its environment): an absolute one looked up once per process (a run
    passes the round's own templates directory for every sample), a relative one against the working directory."""
    if templates_dir is None:
        return None
    got = _absolute_keys.get(templates_dir)
    if got is None:
        path = str(templates_dir)
        if not os.path.isabs(path):
            return _resolved(path, os.getcwd())
        got = _absolute_keys[templates_dir] = _resolved(path, "")
    return got


_absolute_keys: dict[str | Path, str] = {}


@functools.lru_cache(maxsize=256)
def _template(env_key: str | None, name: str) -> jinja2.Template:
    """`env(dir).get_template(name)`, once per directory and name: the environments never reload a template
    (`auto_reload=False`), so the loaded one is what every later `get_template` would hand back, without its
    argument checks and cache-key building on each render. A template that fails to load is not kept."""
    return _env(env_key).get_template(name)


@functools.lru_cache(maxsize=64)
def _resolved(path: str, cwd: str) -> str:
    """`Path(path).resolve()`, once per path (and working directory, for a relative one): a run renders every
    sample with the round's templates, and resolving cost an lstat per path component on each render."""
    return str(Path(cwd, path).resolve())


def template_names(tasks: tuple[str, ...] | None = None) -> list[str]:
    names = ["_blocks.j2", "_requirements.j2"]
    for t in tasks or task_names(kind="writing"):
        names += [f"{t}_{v}.j2" for v in VARIANTS] + [f"{t}_query.j2"]
    return names


def template_files(templates_dir: str | Path | None = None) -> dict[str, Path]:
    """The file each template name resolves to (override directory first, then the packaged defaults)."""
    out: dict[str, Path] = {}
    for name in template_names():
        for base in ([Path(templates_dir)] if templates_dir else []) + [DEFAULT_TEMPLATES]:
            if (base / name).is_file():
                out[name] = base / name
                break
    return out


def _demo_vars(d: Demo) -> dict[str, str]:
    return {**d.fields, "label": d.label}


def _surname(name: str) -> str:
    """The surname as written: "Vaswani" from "Ashish Vaswani", "A. Vaswani" or "Vaswani, Ashish"."""
    name = " ".join(name.split())
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = [w for w in name.split() if w.strip(".").casefold() not in _NAME_SUFFIXES]
    return words[-1] if words else name


_NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def byline(c: CitedPaper) -> str:
    """ "Vaswani, Shazeer, Parmar et al. (2017)": surnames only, so a name printed as initials in a reference list
    ("A. Vaswani") and one from a metadata record ("Ashish Vaswani") look alike in the list."""
    names = [_surname(a) for a in c.authors if a.strip()]
    shown = ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")
    year = f"({c.year})" if c.year else ""
    return " ".join(x for x in (shown, year) if x)


def _cite_vars(c: CitedPaper) -> dict[str, str]:
    return {"title": c.title, "abstract": c.abstract, "byline": byline(c)}


def _context(
    sample: Sample,
    *,
    fields_override: dict[str, str] | None,
    demos_override: list[Demo] | None,
    retrieved: list[str] | None,
    length_words: int | None,
) -> dict[str, object]:
    fields = {"title": "", "abstract": "", "body": "", **sample.fields, **(fields_override or {})}
    demos = sample.demos if demos_override is None else demos_override
    return {
        **fields,
        "demos": [_demo_vars(d) for d in demos],
        "citations": [_cite_vars(c) for c in sample.citations],
        "retrieved": list(retrieved or []),
        "length_words": length_words,
    }


def render_prompt(
    sample: Sample,
    *,
    variant: Variant | None = None,
    templates_dir: str | Path | None = None,
    fields_override: dict[str, str] | None = None,
    demos_override: list[Demo] | None = None,
    retrieved: list[str] | None = None,
    length_words: int | None = None,
) -> str:
    """The full prompt of a sample. variant None → "demos" when the sample (or the override) has demos."""
    kind = task_spec(sample.task).prompt_kind
    if kind == "choice":  # multiple choice: the task's own template on the family's view of the item
        return render_choice(choice_item(sample), templates_dir=templates_dir)
    if kind == "document_qa":  # the family's wording; a length instruction only when a length is given
        return document_port(sample)(sample, length_instruction=length_words is not None)[0]
    demos = sample.demos if demos_override is None else demos_override
    if variant is None:
        variant = "demos" if demos else "plain"
    if variant not in VARIANTS:
        raise ConfigError(f"unknown prompt variant {variant!r}", hint=f"one of {', '.join(VARIANTS)}")
    ctx = _context(
        sample,
        fields_override=fields_override,
        demos_override=demos_override,
        retrieved=retrieved,
        length_words=length_words,
    )
    try:
        return _template(_env_key(templates_dir), f"{sample.task}_{variant}.j2").render(**ctx).strip() + "\n"
    except jinja2.TemplateError as exc:
        raise ConfigError(
            f"template {sample.task}_{variant}.j2 failed to render: {exc}",
            hint="check the template file (variables: title, abstract, body, demos, citations, retrieved)",
        ) from exc


def retrieval_query(sample: Sample, *, templates_dir: str | Path | None = None) -> str:
    """The query a retrieval-augmented run ranks chunks with (built from the title and/or abstract)."""
    fields = {"title": "", "abstract": "", "body": "", **sample.fields}
    tpl = env(templates_dir).get_template(f"{sample.task}_query.j2")
    return " ".join(tpl.render(**fields).split())


def render_parts(
    sample: Sample,
    *,
    templates_dir: str | Path | None = None,
    fields_override: dict[str, str] | None = None,
    demos_override: list[Demo] | None = None,
) -> dict[str, str]:
    """Each truncatable block rendered on its own: "demos", "citations", "body" (what a runner may cut)."""
    mod = env(templates_dir).get_template("_blocks.j2").module
    fields = {**sample.fields, **(fields_override or {})}
    demos = sample.demos if demos_override is None else demos_override
    return {
        "demos": str(mod.demo_block([_demo_vars(d) for d in demos], task_spec(sample.task).output_name)),
        "citations": str(mod.citation_block([_cite_vars(c) for c in sample.citations])),
        "body": str(mod.body_block(fields.get("body", ""))),
    }


def skeleton(sample: Sample, *, templates_dir: str | Path | None = None) -> str:
    """The default prompt with every field, demo field and label emptied and no citation list: what the template
    adds. WordPiece counts are additive at whitespace, so tokens(prompt) = tokens(skeleton) + Σ tokens(texts) +
    tokens(the citation block, `render_parts(...)["citations"]`).
    """
    empty_fields = {k: "" for k in sample.fields}
    demos = [d.model_copy(update={"fields": {k: "" for k in d.fields}, "label": ""}) for d in sample.demos]
    s = sample.model_copy(update={"fields": empty_fields, "demos": demos, "citations": []})
    return render_prompt(s, templates_dir=templates_dir)
