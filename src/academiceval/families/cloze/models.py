"""Citation-cloze items, their options and presets — the boundary model of the `citation_cloze` family.

An item stores what a prompt is made of (the masked paper text and the four candidate texts), not only the
rendered prompt, so a runner can re-render it with its own template and truncate only paper content. The gold
answer is the candidate slot (0-3) as a string, like every multiple-choice item (`scores.mcq`).
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from academiceval.families.cloze import SPEC

TASK = SPEC.name  # "citation_cloze"
MASK = "**[MASKED_CITATION]**"  # SCALAR's placeholder, kept so imported and built items read the same
PRESETS_NAMES = ("easy", "medium", "hard")
CitationType = Literal["attributional", "descriptive"]
Split = Literal["train", "val", "test"]


class ClozeOptions(BaseModel):
    """Every knob of question generation. `preset()` gives SCALAR's three levels; any field can be overridden,
    and the item then records preset "custom" unless the options still equal a named preset."""

    model_config = ConfigDict(extra="forbid")

    paper_field: Literal["full", "section"] = "full"  # whole question paper, or only the masked section
    citation_type: CitationType | Literal["any"] = "attributional"
    # random / nearest (cited nearby): SCALAR's; matched: nearest on the guessers' word-matching signal with a
    # balanced target rank (`balance`), the filtered construction's
    distractors: Literal["random", "nearest", "matched"] = "random"
    candidate_field: Literal["full", "body", "abstract"] = "full"
    refs_per_paper: int | None = 5  # SCALAR: max_selected_references_per_paper (5 random, 10 nearest); None: all
    questions_per_reference: int = 1
    n_candidates: int = 4
    max_candidate_tokens: int = 40_000  # cap on a candidate's section text (SCALAR: 40k gpt-4o tokens)
    group_gap: int = 4  # a neighbouring citation closer than this many characters makes both "grouped"
    min_paper_chars: int = 10_000  # question paper section text, SCALAR's paper filter
    max_paper_chars: int = 100_000
    max_questions: int | None = 100  # per level, drawn at random after generation (SCALAR: 100)
    type_decider: Literal["heuristic", "judge", "source"] = "heuristic"  # who decides the citation type
    # the filtered construction (`filtered`): one cleaner for every text, one candidate per work, whole and
    # individual citations only, one level per citation, at most `max_per_paper` questions per paper and level
    clean: bool = False
    max_per_paper: int | None = None


PRESETS: dict[str, ClozeOptions] = {
    "easy": ClozeOptions(citation_type="attributional", distractors="random", candidate_field="full", refs_per_paper=5),
    "medium": ClozeOptions(citation_type="descriptive", distractors="random", candidate_field="full", refs_per_paper=5),
    "hard": ClozeOptions(citation_type="descriptive", distractors="nearest", candidate_field="body", refs_per_paper=10),
}
# the filtered construction (the default; `--preset scalar` builds SCALAR's above): the same three levels, each
# with distractors matched on surface cues, cleaned texts, every reference eligible, at most 5 per paper
FILTERED: dict[str, ClozeOptions] = {
    lv: o.model_copy(update={"distractors": "matched", "refs_per_paper": None, "clean": True, "max_per_paper": 5})
    for lv, o in PRESETS.items()
}
CONSTRUCTIONS: dict[str, dict[str, ClozeOptions]] = {"filtered": FILTERED, "scalar": PRESETS}
Construction = Literal["filtered", "scalar"]
_PRESET_KEYS = ("paper_field", "citation_type", "distractors", "candidate_field", "refs_per_paper")


def preset(name: str, construction: Construction = "scalar", **overrides: object) -> ClozeOptions:
    """A named level of a construction with some knobs changed (validated: an unknown knob or a bad value
    raises)."""
    table = CONSTRUCTIONS[construction]
    if name not in table:
        raise ValueError(f"unknown cloze preset {name!r}: one of {', '.join(table)}")
    return ClozeOptions.model_validate({**table[name].model_dump(), **overrides})


class ClozeBuildConfig(BaseModel):
    """Every option of a cloze build, stored verbatim in the round manifest (`build_options["config"]`)."""

    model_config = ConfigDict(extra="forbid")

    construction: Construction = "filtered"  # the filtered construction, or SCALAR's exact one ("scalar")
    levels: list[str] = Field(default_factory=lambda: list(PRESETS_NAMES))
    options: dict[str, ClozeOptions] = Field(default_factory=dict)  # custom levels (or replaced presets)
    overrides: dict[str, object] = Field(default_factory=dict)  # knobs changed on every level
    # live guard: question papers with v1 date after this day; "auto": the day before the test window of the
    # workspace's newest writing round (else of the writing split's fractions over the stored papers); None: all
    cutoff: date | Literal["auto"] | None = "auto"
    guesser_limit: float | None = 0.30  # the filtered construction's level check: no blind guesser above this
    min_level_items: int = 20  # the level check never leaves a level with fewer (a smaller level: half of it)
    # the round's flag: a blind guesser above chance + this margin on a level is flagged in the manifest and the
    # build's output; with `refuse_flagged` the round is not written at all (either construction)
    flag_margin: float = 0.10
    refuse_flagged: bool = False
    # level → a level it must be at least as hard as for the lexical baseline (checked in that order)
    harder_than: dict[str, str] = Field(default_factory=lambda: {"hard": "medium"})
    seed: int = 0
    tokenizer: str | None = None  # "wordpiece" (default) or "tiktoken:<encoding>"
    templates_dir: str | None = None
    relink: bool = True  # recompute reference links before building
    mask: str = MASK


def preset_name(options: ClozeOptions) -> str:
    """The named level these options equal (in either construction) on the fields that define a level, else
    "custom"."""
    for table in CONSTRUCTIONS.values():
        for name, p in table.items():
            if all(getattr(options, k) == getattr(p, k) for k in _PRESET_KEYS):
                return name
    return "custom"


class ClozeCandidate(BaseModel):
    slot: int  # position shown to the model (0-based, "Candidate [slot]")
    ref_index: int | None = None  # Reference.index in the question paper (None for imported items)
    ref_id: str = ""  # the question paper's own id for the reference (bib id, label), for review
    paper_id: str = ""  # the stored paper the candidate text comes from
    arxiv_id: str | None = None
    title: str = ""
    text: str = ""  # the candidate as shown (full / body / abstract representation)
    tokens: int | None = None  # tokens of `text` under the item's tokenizer
    link_method: str = ""  # how the reference was linked to the stored paper: arxiv_id / title / imported
    published: date | None = None  # v1 date of the candidate's work, when known


class TypeDecision(BaseModel):
    """Citation type by each classifier that ran, side by side; `decided_by` names the one the round used."""

    heuristic: CitationType | None = None
    heuristic_rule: str = ""
    judge: CitationType | None = None
    judge_model: str | None = None
    source: CitationType | None = None  # the type the source stored (SCALAR's `citation_type`), if any
    decided_by: str = "heuristic"
    decided: CitationType | None = None


class ClozeItem(BaseModel):
    sample_id: str  # stable: "citation_cloze/<preset>/<arxiv id or paper id>/<ref index>/<start>"
    round: str
    task: Literal["citation_cloze"] = TASK
    preset: str  # easy / medium / hard / custom / imported-<level>
    split: Split = "test"
    arxiv_id: str | None
    paper_id: str
    published: date | None  # v1 date of the question paper
    title: str = ""
    section: str = ""  # the section holding the masked citation
    citation_text: str  # the span that was masked, as printed
    citation_start: int = -1  # span inside that section's text
    citation_end: int = -1
    citation_type: TypeDecision = Field(default_factory=TypeDecision)
    mask: str = MASK
    paper: str  # the question paper as shown, with exactly the one span replaced by `mask`
    paper_tokens: int | None = None  # tokens of `paper` under the item's tokenizer
    candidates: list[ClozeCandidate]
    label: str  # gold slot as a string ("0".."3")
    reference_ids: list[str] = Field(default_factory=list)  # ref ids of the candidates in slot order
    gold_ref_id: str = ""
    seed: int = 0  # the per-question seed that placed the gold slot
    tokenizer: str = ""  # what `tokens` and the caps were counted with
    options: dict[str, object] = Field(default_factory=dict)  # the ClozeOptions used (verbatim)
    prompt: str = ""  # imported items: the published prompt verbatim (used instead of rendering)
    prompt_sha256: str = ""
    input_tokens: int | None = None

    @property
    def gold(self) -> int:
        return int(self.label)
