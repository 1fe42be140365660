"""Task specs and the family registry: the one table of what each task is, and who implements it.

Why here, at the bottom: every stage asks questions about a task by its name (which prompt kind renders it,
how many tokens it may answer, which metric ranks it, what its inputs are called), and every artifact carries
task names. The answers are *data* (`TaskSpec`), declared by the task's family (`academiceval.families.<name>`),
and looked up here; no core module names a family or a task.

A family is one folder whose `__init__.py` declares `family` (a `Family`): its name, its `TaskSpec`s, and the
*ports* it implements as "module:function" references, imported on first use (so loading the registry stays
cheap: `academiceval --help` loads it). A port is a small protocol owned by the core layer that calls it —
`rounds.choice.ChoicePort` (a multiple-choice item's view), `rounds.document_qa.DocumentPort` (a long-document
prompt for a budget), the command-line sub-app — so a core module asks `family_for(sample.task).port(...)` and
calls it, without importing the family. Families are loaded on the first lookup, like the metric registry's
plugins: the built-in list below, then the `academiceval.families` entry points of installed packages
(`toy = "toyfam"` or `"toyfam:family"`). Adding a family = one folder + one line in `FAMILY_MODULES` (or one
entry point).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from academiceval.errors import ConfigError

# The built-in families, in the order their tasks are listed. A new family appends its module here.
FAMILY_MODULES: tuple[str, ...] = (
    "academiceval.families.writing",
    "academiceval.families.cloze",
    "academiceval.families.leval",
    "academiceval.families.elaip",
)
ENTRY_POINT_GROUP = "academiceval.families"

# How core code renders, fits and baselines a task: the *kind* of prompt, never the family.
PromptKind = Literal["writing", "choice", "document_qa"]
# Where a writing task's label comes from: the paper's title, its metadata abstract, or one of its sections.
LabelSource = Literal["title", "metadata_abstract", "section", "item"]


class TaskSpec(BaseModel):
    """Everything core code needs to know about one task (one row of the table that replaced 18)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str  # the task name samples, records and file names carry ("title", "citation_cloze", "leval")
    title: str  # display name (leaderboard headings, plots)
    prompt_kind: PromptKind
    family: str = ""  # filled by `register_family`
    order: int = 100  # display order (lower first; ties by name)
    input_fields: tuple[str, ...] = ()  # the sample's text fields (parquet columns), in the order templates show them
    max_new_tokens: int = 512  # output tokens a run reserves when the run does not say
    default_metrics: tuple[str, ...] = ()  # the metrics that score and rank it; () = the general default
    length_instruction: bool = False  # the protocol gives a length instruction by default (L-Eval's LIE)
    # writing tasks
    output_name: str = ""  # how prompts name the output ("related-work section"), in demo blocks
    judge_name: str = ""  # how the judge's prompt names it ("related work section")
    removes: str | None = None  # the section role the input body loses (a `SectionRole` value)
    label_source: LabelSource = "item"
    label_section: str | None = None  # the section role that is the label (label_source "section")
    label_words: tuple[int, int] | None = None  # plausible label length in words (the quality gate's default)
    target_words: int = 200  # what the text baselines (lead, extractive) aim for, in words
    cites: bool = False  # the sample carries the cited papers (the Related-Work citation corpus)
    refine: Literal["title", "text"] = "text"  # answer clean-up: a title is refined, other texts lose wrappers
    answer_heading: str | None = None  # regex of a heading naming the output that clean-up removes
    # multiple-choice tasks
    choice_form: Literal["letters", "indices"] | None = None  # how options are named in answers ("A" / "0")


class Family:
    """A task family, declared in its folder's `__init__.py` as `family = Family(...)`.

    The declaration is light (it is imported for every lookup): its name, its `specs`, and references
    ("module:attribute", imported on first use) to what it implements — `ports`, the functions core layers call
    (`"choice_item"`: `rounds.choice.ChoicePort`; `"document_prompt"`: `rounds.document_qa.DocumentPort`),
    `cli_app`, the typer app mounted as `academiceval <command>`, and `extensions`: per core registry, the modules
    that add the family's entries to it when imported (`"metrics"`: `scores.registry`; `"run_presets"`:
    `runs.presets`; `"export_formats"`: `runs.export`). A core registry imports them on its first lookup
    (`load_extensions`), so the family's metric, preset or file format exists exactly when its family is loaded."""

    def __init__(
        self,
        name: str,
        specs: Iterable[TaskSpec],
        *,
        ports: dict[str, str] | None = None,
        command: str | None = None,
        cli_app: str | None = None,
        extensions: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.name = name
        self.specs = tuple(specs)
        self.ports = dict(ports or {})
        self.command = command
        self.cli_app = cli_app
        self.extensions = {k: tuple(v) for k, v in (extensions or {}).items()}

    def port(self, name: str) -> Any | None:
        """The function the family gives for port `name` (imported now), or None when it gives none."""
        ref = self.ports.get(name)
        return _resolve(ref, f"port {name!r} of family {self.name!r}") if ref else None

    def cli(self) -> Any | None:
        """The family's command-line sub-app (a typer app), or None."""
        return _resolve(self.cli_app, f"command line of family {self.name!r}") if self.cli_app else None

    def __repr__(self) -> str:
        return f"<family {self.name}: {', '.join(s.name for s in self.specs)}>"


def _resolve(ref: str, what: str) -> Any:
    module, _, attr = ref.partition(":")
    try:
        return getattr(importlib.import_module(module), attr or "app")
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{what} ({ref}) cannot be loaded: {exc}", hint="is the family's package complete?") from exc


@dataclass
class _Registry:
    families: dict[str, Family] = field(default_factory=dict)
    specs: dict[str, TaskSpec] = field(default_factory=dict)


_lock = threading.RLock()
_registry: _Registry | None = None
_loading = False


def register_family(family: Family) -> Family:
    """Add a family and its task specs (each spec gets `family=family.name`). A task name that another family
    already declares is a ConfigError (a task is scored and rendered by exactly one family)."""
    with _lock:
        reg = _registry if _loading and _registry is not None else _load()
        if not family.name:
            raise ConfigError(f"family {family!r} has no name")
        old = reg.families.get(family.name)
        if old is family:
            return family
        if old is not None:
            raise ConfigError(f"two families are named {family.name!r}", hint="rename one of them")
        specs = [s.model_copy(update={"family": family.name}) for s in family.specs]
        for s in specs:
            if s.name in reg.specs:
                other = reg.specs[s.name].family
                raise ConfigError(f"task {s.name!r} of family {family.name!r} is already declared by family {other!r}")
        family.specs = tuple(specs)
        reg.families[family.name] = family
        for s in specs:
            reg.specs[s.name] = s
        return family


def _start() -> _Registry:
    global _registry
    _registry = _Registry()
    return _registry


def _family_of(obj: Any, where: str) -> Family:
    fam = getattr(obj, "family", obj)
    if not isinstance(fam, Family):
        raise ConfigError(f"{where} does not provide a Family", hint="expose `family = Family(...)` in the module")
    return fam


def _load() -> _Registry:
    """The registry, loading the built-in families and the entry points once (thread-safe)."""
    global _loading
    reg = _registry
    if reg is not None and not _loading:
        return reg
    with _lock:
        if _registry is not None and not _loading:
            return _registry
        if _loading:  # a family module looked a task up while it was being imported
            raise ConfigError(
                "a task was looked up while the families were being loaded",
                hint="a family module must not look tasks up at import time",
            )
        _loading = True
        try:
            _start()
            for name in FAMILY_MODULES:
                register_family(_family_of(importlib.import_module(name), name))
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                try:
                    obj = ep.load()
                except Exception as exc:  # a broken third-party plugin: one clear line, not a traceback
                    raise ConfigError(
                        f"task family plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}",
                        hint=f"fix or uninstall the package that declares it in the {ENTRY_POINT_GROUP!r} entry points",
                    ) from exc
                register_family(_family_of(obj, f"entry point {ep.name} ({ep.value})"))
        finally:
            _loading = False
        assert _registry is not None
        return _registry


def load_extensions(registry: str) -> None:
    """Import every loaded family's modules for one core registry (`Family.extensions[registry]`): each registers
    its entries there when imported. Called by the registry itself on its first lookup."""
    for fam in families():
        for module in fam.extensions.get(registry, ()):
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise ConfigError(
                    f"{registry} of family {fam.name!r} ({module}) cannot be loaded: {exc}",
                    hint="is the family's package complete?",
                ) from exc


def reset_families() -> None:
    """Forget every loaded family (the next lookup loads them again). For tests and plugin development."""
    global _registry
    with _lock:
        _registry = None


def families() -> list[Family]:
    return list(_load().families.values())


def task_specs(kind: PromptKind | None = None) -> list[TaskSpec]:
    """Every task spec (of one prompt kind), in display order."""
    specs = [s for s in _load().specs.values() if kind is None or s.prompt_kind == kind]
    return sorted(specs, key=lambda s: (s.order, s.name))


def task_names(kind: PromptKind | None = None) -> tuple[str, ...]:
    return tuple(s.name for s in task_specs(kind))


def find_spec(task: str | None) -> TaskSpec | None:
    """The spec of a task, or None for a name no family declares (e.g. a record of an uninstalled family)."""
    return _load().specs.get(task or "")


def task_spec(task: str) -> TaskSpec:
    """The spec of a task; an unknown name is a ConfigError naming the known tasks."""
    spec = find_spec(task)
    if spec is None:
        raise ConfigError(
            f"unknown task {task!r}",
            hint=f"known tasks: {', '.join(task_names())} (another family's tasks need its package installed)",
        )
    return spec


def check_task(task: str, *, kind: PromptKind | None = None, source: str | None = None) -> str:
    """A task name from outside (CLI, a config, a file), checked against the registry (and the prompt kind)."""
    spec = find_spec(task)
    if spec is None or (kind is not None and spec.prompt_kind != kind):
        known = ", ".join(task_names(kind))
        what = f"{kind} task" if kind else "task"
        raise ConfigError(f"unknown {what} {task!r}", source=source, hint=f"one of {known}")
    return task


def family_for(task: str) -> Family:
    """The family that declares `task` (ConfigError for an unknown task)."""
    return _load().families[task_spec(task).family]


def max_new_tokens(task: str, default: int = 512) -> int:
    """Output tokens a run reserves for `task` when the run does not say (the task's protocol)."""
    spec = find_spec(task)
    return spec.max_new_tokens if spec is not None else default


def task_order(task: str) -> int:
    """Where a task is listed (its spec's `order`; a task no family declares comes last)."""
    spec = find_spec(task)
    return spec.order if spec is not None else TaskSpec.model_fields["order"].default


def task_title(task: str) -> str:
    """The display name of a task (the name itself for a task no family declares)."""
    spec = find_spec(task)
    return spec.title if spec is not None else task
