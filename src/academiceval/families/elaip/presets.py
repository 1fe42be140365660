"""ElaipBench's run protocols (`academiceval run --preset elaipbench|elaipbench-cot`), registered with
`runs.presets` when that table is first looked up (`Family.extensions["run_presets"]`).

ElaipBench (§4.1 of its paper): the reported number is the mean of 3 calls at temperature 0.1 with 32 new tokens
(the letters in their tags); its chain-of-thought variant lets the model reason in 4,096 new tokens. Our prompt
and parser for ElaipBench are our own (theirs are unpublished: `families.elaip.items`), so the CoT wording is
ours too.
"""

from __future__ import annotations

from academiceval.families.elaip.items import COT_SUFFIX
from academiceval.runs.presets import RunPreset, register_preset

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
        prompt_suffix=COT_SUFFIX,
    )
)
