"""Named run protocols (`academiceval run --preset NAME`): a peer's published way of running its items.

A preset fills the options the user did not give: how many epochs (independent repeats, each with its own seed),
the generation options and a text appended to every prompt (a chain-of-thought instruction). Anything given
explicitly wins (`--epochs 5 --preset elaipbench` runs five epochs), and the preset's name becomes part of the
run directory's name, so a preset run never mixes with a plain run of the same model.

These protocols are data, declared by the task family whose peer publishes them: a family lists its preset
module under `Family.extensions["run_presets"]` (ElaipBench's: `families.elaip.presets`), and this table is filled
on its first lookup (`store.tasks.load_extensions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from academiceval.errors import ConfigError
from academiceval.store.tasks import load_extensions


@dataclass(frozen=True)
class RunPreset:
    name: str
    summary: str  # one line for `--help` and errors
    epochs: int = 1
    options: dict[str, Any] = field(default_factory=dict)  # GenerationOptions fields (-T) the preset sets
    prompt_suffix: str | None = None  # appended to every prompt (runs.prepare.PromptPreparer)


_PRESETS: dict[str, RunPreset] = {}
_loaded = False


def _load() -> dict[str, RunPreset]:
    """The table, with every family's presets (imported once, on the first lookup)."""
    global _loaded
    if not _loaded:
        _loaded = True
        load_extensions("run_presets")
    return _PRESETS


def register_preset(preset: RunPreset) -> RunPreset:
    """Add a protocol; a name is registered once (a family declares its own)."""
    if preset.name in _PRESETS and _PRESETS[preset.name] != preset:
        raise ConfigError(f"run preset {preset.name!r} is already registered")
    _PRESETS[preset.name] = preset
    return preset


def get_preset(name: str) -> RunPreset:
    """The preset called `name`; a one-line ConfigError naming the known ones otherwise."""
    preset = _load().get(name)
    if preset is None:
        known = "; ".join(f"{p.name} ({p.summary})" for p in sorted(_PRESETS.values(), key=lambda p: p.name))
        raise ConfigError(f"unknown run preset {name!r}", source="--preset", hint=f"one of: {known}")
    return preset
