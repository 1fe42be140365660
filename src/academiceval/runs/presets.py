"""Named run protocols (`academiceval run --preset NAME`): a peer's published way of running its items.

A preset fills the options the user did not give: how many epochs (independent repeats, each with its own seed),
the generation options and a text appended to every prompt (a chain-of-thought instruction). Anything given
explicitly wins (`--epochs 5 --preset elaipbench` runs five epochs), and the preset's name becomes part of the
run directory's name, so a preset run never mixes with a plain run of the same model.

ElaipBench (§4.1 of its paper): the reported number is the mean of 3 calls at temperature 0.1 with 32 new tokens
(the letters in their tags); its chain-of-thought variant lets the model reason in 4,096 new tokens. Our prompt
and parser for ElaipBench are our own (theirs are unpublished: `rounds.elaip`), so the CoT wording is ours too.

These protocols are data: when task families register themselves, each family declares its presets and this
table is filled from the registry (`register_preset`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from academiceval.errors import ConfigError
from academiceval.families.elaip.items import COT_SUFFIX as ELAIP_COT_SUFFIX


@dataclass(frozen=True)
class RunPreset:
    name: str
    summary: str  # one line for `--help` and errors
    epochs: int = 1
    options: dict[str, Any] = field(default_factory=dict)  # GenerationOptions fields (-T) the preset sets
    prompt_suffix: str | None = None  # appended to every prompt (runs.prepare.PromptPreparer)


_PRESETS: dict[str, RunPreset] = {}


def register_preset(preset: RunPreset) -> RunPreset:
    """Add a protocol; a name is registered once (a family declares its own)."""
    if preset.name in _PRESETS and _PRESETS[preset.name] != preset:
        raise ConfigError(f"run preset {preset.name!r} is already registered")
    _PRESETS[preset.name] = preset
    return preset


def preset_names() -> list[str]:
    return sorted(_PRESETS)


def get_preset(name: str) -> RunPreset:
    """The preset called `name`; a one-line ConfigError naming the known ones otherwise."""
    preset = _PRESETS.get(name)
    if preset is None:
        known = "; ".join(f"{p.name} ({p.summary})" for p in sorted(_PRESETS.values(), key=lambda p: p.name))
        raise ConfigError(f"unknown run preset {name!r}", source="--preset", hint=f"one of: {known}")
    return preset


register_preset(
    RunPreset(
        "elaipbench",
        "ElaipBench's protocol: 3 epochs at temperature 0.1, 32 new tokens; mean ± sd across epochs",
        epochs=3,
        options={"temperature": 0.1, "max_tokens": 32},
    )
)
register_preset(
    RunPreset(
        "elaipbench-cot",
        "ElaipBench's chain-of-thought variant: 3 epochs at temperature 0.1, 4,096 new tokens, step-by-step prompt",
        epochs=3,
        options={"temperature": 0.1, "max_tokens": 4096},
        prompt_suffix=ELAIP_COT_SUFFIX,
    )
)
