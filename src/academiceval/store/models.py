"""The boundary models every workspace artifact is made of: a round (manifest + samples), a run (spec + records)
and its scores. They live at the bottom of the tree so that `store.artifacts`, the one reader and writer of these
files, can type them. Every stage imports them from here (one import path per type; `scores.models` adds the
summaries the scores stage makes).

A sample stores its input *fields* (not only a rendered prompt) so that any backend can re-render it after
truncation or retrieval; `prompt_sha256` is the hash of the default rendering.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from academiceval.errors import ConfigError
from academiceval.store.paper_models import DatePrecision
from academiceval.store.secrets import scrub

# The one low-n rule (issue 28): a mean over fewer than this many samples gets no interval, and a paired comparison
# over fewer shared samples no interval and no verdict, wherever it is shown (`score`, `compare`, the report's
# tables, plots, ladders and results.json, `stats` notes). An interval over one to nine papers looks precise and
# is not (n = 1 gives [x, x]); a mean is still shown, marked "n < 10".
MIN_N_FOR_INTERVAL = 10


def is_first_epoch(epoch: int) -> bool:
    """Epoch 1 is left out of written records (a one-epoch run's lines are what they were before epochs)."""
    return epoch == 1


# ---- configs -----------------------------------------------------------------------------------------
class StrictConfig(BaseModel):
    """Base of the stage configs (`BuildConfig`, `RunConfig`, `ScoreConfig`): built once by the CLI or a caller,
    passed whole, stored verbatim with what they produced. An unknown or misspelled option is an error."""

    model_config = ConfigDict(extra="forbid")

    def __init__(self, **options: Any) -> None:
        """A validation failure is one ConfigError naming every bad option (not a pydantic traceback)."""
        try:
            super().__init__(**options)
        except ValidationError as e:
            bad = "; ".join(f"{'.'.join(map(str, err['loc'])) or '?'}: {err['msg']}" for err in e.errors())
            raise ConfigError(f"invalid {type(self).__name__} option(s): {bad}") from None

    def stored(self) -> dict[str, Any]:
        """The JSON form kept with the artifact it produced (`run.json`, every `scores.jsonl` line, the round
        manifest), with every secret masked (`store.secrets.scrub`: user-info and key parameters of URLs, fields
        named like keys), so a field added to any config later is covered too (issue 26, item 6)."""
        return scrub(self.model_dump(mode="json"))


# ---- rounds ------------------------------------------------------------------------------------------
# A task name ("title", "citation_cloze", "leval", …): what it means — its family, prompt kind, inputs, output
# length, metrics — is its `TaskSpec` in the family registry (`store.tasks`). Names that come in from outside (CLI,
# configs) are checked there (`store.tasks.check_task`); files carry them as they were written.
Task = str
Split = Literal["train", "val", "test"]


class Demo(BaseModel):
    """One demonstration: an input/label pair of the same task from an older paper."""

    arxiv_id: str
    published: date
    fields: dict[str, str]  # same field names as the target's `fields`
    label: str
    origin: Literal["random", "coauthor"]
    paper_id: str = ""  # the parsed paper the demo was cut from
    date_precision: DatePrecision = "day"  # "year"/"month" for publication-list dates
    shared_authors: list[str] = Field(default_factory=list)  # author names linking the demo to the target


class CitedPaper(BaseModel):
    """One entry of the Related-Work citation list: a work the target cites in its related-work section, or a
    distractor. A cited work that resolution did not find stays in the list with its reference's own title, authors
    and year (`resolved=False`, no abstract), so the model is shown every work the section cites."""

    arxiv_id: str | None = None  # the work's id (arXiv id, "doi:…", "openalex:…"); None when unresolved
    title: str
    abstract: str = ""  # empty: no abstract known (the prompt says so) or withheld (`abstract_withheld`)
    distractor: bool = False  # padding paper not cited by the target (never shown to the model as such)
    authors: list[str] = Field(default_factory=list)  # the work's record's names, or the reference's when unresolved
    year: int | None = None
    resolved: bool = True  # False: no record of the work was found; title, authors and year are the reference's
    found_by: str = ""  # a cited work: how it was resolved (sources.resolve METHODS); a distractor: its pool
    abstract_withheld: bool = False  # a distractor shown without its abstract, as often as cited works lack one
    mentions: int = 0  # in-text citations of the work in the related-work section (the label); 0 for a distractor


class Sample(BaseModel):
    sample_id: str  # stable: "<task>/<setting>/<arxiv_id>"
    round: str
    task: Task
    setting: str  # "zero-shot", "random:2", "coauthor:2", "mixed:1+1", "ctx:32000"
    setting_name: str = ""  # the config name (artifact_name): "title-zero-shot", "abstract-coauthor2"; older rounds
    # appended the mean input size ("title-zero-shot-10K"), see LoadedRound.resolve_config
    split: Split
    arxiv_id: str
    paper_id: str
    published: date  # v1 date of the target paper
    date_precision: DatePrecision = "day"  # how much of `published` is known (sources.dates)
    primary_category: str | None = None
    fields: dict[str, str]  # task inputs: title / abstract / body, depending on the task
    citations: list[CitedPaper] = Field(default_factory=list)
    demos: list[Demo] = Field(default_factory=list)
    label: str
    prompt_sha256: str = ""
    seed: int = 0
    input_tokens: int | None = None  # BERT WordPiece tokens of the default rendered prompt (no special tokens)
    label_tokens: int | None = None  # BERT WordPiece tokens of the label


class SplitWindows(BaseModel):
    train_until: date | None = None  # inclusive end of the train window
    val_from: date | None = None
    val_until: date | None = None
    test_from: date | None = None
    test_until: date | None = None


class ConfigInfo(BaseModel):
    """One exported task-setting (a `datasets` config): what it holds and where."""

    task: Task
    setting: str  # the setting spec, e.g. "random:2"
    setting_name: str  # the config name, e.g. "title-zero-shot" (older rounds: "title-zero-shot-30K")
    counts: dict[str, int] = Field(default_factory=dict)  # split -> samples
    mean_input_tokens: float = 0.0
    mean_label_tokens: float = 0.0
    files: list[str] = Field(default_factory=list)  # relative paths (parquet and JSONL, one per split)


class RoundManifest(BaseModel):
    round: str
    created_at: str  # ISO timestamp of the build
    package_version: str
    seed: int
    windows: SplitWindows
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task-setting: split -> count
    skipped: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task: reason -> count
    files: dict[str, str] = Field(default_factory=dict)  # relative path -> sha256
    build_options: dict[str, object] = Field(default_factory=dict)
    adds: list[str] = Field(default_factory=list)  # sample ids new in this round (vs previous round)
    retires: list[str] = Field(default_factory=list)  # sample ids of the previous round not carried over
    previous_round: str | None = None
    configs: dict[str, ConfigInfo] = Field(default_factory=dict)  # config name -> what it holds
    notes: dict[str, dict[str, int]] = Field(default_factory=dict)  # per task: non-fatal observations -> count
    config: dict[str, Any] = Field(default_factory=dict)  # the BuildConfig, verbatim
    # set on a published release (`academiceval release`): which labels it withholds, from which round manifest
    release: dict[str, Any] | None = None


# ---- runs --------------------------------------------------------------------------------------------
class RunSpec(BaseModel):
    """What produced a run directory (`run.json`)."""

    round: str
    round_manifest_sha256: str
    model: str  # the spec as given: "openai/gpt-4o-mini", "hf/path", "baseline/lead"
    backend: str  # "openai", "hf", "baseline"
    base_url: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # generation options
    context_length: int | None = None
    rag: dict[str, Any] | None = None  # retriever, top_k, chunk size/overlap, embedding model
    probe: str | None = None  # "title-only", "no-context"
    length_instruction: bool = False
    package_version: str
    created_at: str
    # added by the runs area (optional, backward compatible)
    on_overflow: str = "truncate"  # or "skip"
    tokenizer: str | None = None  # the tokenizer asked for (--tokenizer), as given
    # what actually counted tokens (None: nothing was counted locally) and why it is not the one implied or asked
    # for (an offline tiktoken that fell back to the bert-base-uncased estimate): the run record says what happened
    tokenizer_used: str | None = None
    warnings: list[str] = Field(default_factory=list)
    prompt_preparation: str = ""  # which code rendered/truncated prompts (module.function)
    max_connections: int | None = None
    timeout_s: float | None = None
    task_max_tokens: dict[str, int] = Field(default_factory=dict)  # output length used per task when not set
    updated_at: str = ""
    config: dict[str, Any] = Field(default_factory=dict)  # the RunConfig of the latest invocation, verbatim

    @property
    def label(self) -> str:
        """How the run is named in tables: the model spec plus whatever changes its inputs."""
        extra = []
        if self.probe:
            extra.append(f"probe={self.probe}")
        if self.rag:
            extra.append("rag")
        if self.context_length:
            extra.append(f"ctx={self.context_length}")
        if self.length_instruction:
            extra.append("len-instr")
        return self.model + (f" [{', '.join(extra)}]" if extra else "")


class RunRecord(BaseModel):
    """One finished sample, appended to `runs/ROUND/MODEL/<task-setting>.jsonl` as soon as it is done."""

    sample_id: str
    task: str
    setting: str
    split: str
    arxiv_id: str
    published: date  # the target paper's v1 date, so windows can be computed without re-running
    date_precision: DatePrecision = "day"  # "year"/"month": windows ask sources.dates.surely_after
    prompt_sha256: str
    output_raw: str = ""
    output: str = ""  # post-processed (e.g. refined title)
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_cut: int = 0
    truncation: str = "none"  # policy applied: none, demos-dropped, body-tail-cut, ...
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    finished_at: str = ""
    # added by the runs area (optional, backward compatible)
    error_code: str | None = None  # machine-readable: rate_limited, timeout, context_length, empty_answer, ...
    retryable: bool = False  # the error may go away on a rerun: the next run requests this sample again
    skipped: bool = False  # --on-overflow skip: too long, not sent
    finish_reason: str | None = None
    attempts: int = 0  # HTTP attempts this run made for the sample (0 when cached or skipped)
    endpoint: str | None = None  # the server that answered, when the run had several (run --base-url A --base-url B)
    warnings: list[str] = Field(default_factory=list)  # e.g. invalid_utf8 in the answer
    prompt_info: dict[str, Any] = Field(default_factory=dict)  # demos/citations dropped, tokenizer, retrieved chunks
    # repeat number (`run --epochs N`): the record key is (sample_id, epoch). Epoch 1 is not written, so a run of
    # one epoch writes exactly the lines it wrote before epochs existed, and old lines read as epoch 1
    epoch: int = Field(default=1, ge=1, exclude_if=is_first_epoch)


# ---- scores ------------------------------------------------------------------------------------------
class ScoreRecord(BaseModel):
    """One metric on one sample, appended to `<run dir>/scores.jsonl`.

    `metric` names carry their configuration (e.g. "bertscore-all-MiniLM-L6-v2-L6"), and `config_hash`
    identifies the exact configuration, so results from different settings are never mixed.
    """

    sample_id: str
    task: str
    setting: str
    split: str
    published: date
    date_precision: DatePrecision = "day"
    metric: str
    config_hash: str
    values: dict[str, float] = Field(default_factory=dict)  # e.g. {"p": .., "r": .., "f": ..}
    details: dict[str, object] = Field(default_factory=dict)  # e.g. tokens cut, judge verdicts
    error: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)  # the ScoreConfig that produced it, verbatim
    epoch: int = Field(default=1, ge=1, exclude_if=is_first_epoch)  # the scored RunRecord's epoch (not written: 1)
