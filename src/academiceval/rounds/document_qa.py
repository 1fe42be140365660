"""Long-document QA, the core side: the port a family of prompt kind "document_qa" implements (L-Eval).

Such a task shows one long document and an instruction about it; the family owns the wording and how its
document is cut (L-Eval's: words from the right, in steps, as its own code does), the core owns *when*: a run
measures the whole prompt, and over its budget asks the family for the prompt whose document fits the tokens
left after the rest (`models.prepare`). `document_prompt` returns the prompt and what was used
(`length_words` of the length instruction when one was given; after a cut, `words_cut` and the `policy` a run
record names). The sample holds its document in the field `document` (the rest of the prompt is measured by
rendering it empty) and its instruction in `instruction`; under `run --rag` the core retrieves chunks of the
document alone for the instruction and the family renders them in place of the document (`models.prepare`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from academiceval.errors import ConfigError
from academiceval.store.models import Sample
from academiceval.store.tasks import family_for, task_spec

DOCUMENT_FIELD = "document"
INSTRUCTION_FIELD = "instruction"  # the question or instruction: the retrieval query under `run --rag`


class DocumentPort(Protocol):
    """What a family of long-document QA tasks implements (its port "document_prompt")."""

    def __call__(
        self,
        sample: Sample,
        *,
        length_instruction: bool,
        budget_tokens: int | None = None,
        count: Callable[[str], int] | None = None,
    ) -> tuple[str, dict[str, Any]]: ...


def document_port(sample: Sample) -> DocumentPort:
    """The family of a long-document QA sample (ConfigError when its task is another kind)."""
    port: DocumentPort | None = family_for(sample.task).port("document_prompt")
    if task_spec(sample.task).prompt_kind != "document_qa" or port is None:
        raise ConfigError(f"sample {sample.sample_id} is not a long-document QA item (task {sample.task!r})")
    return port
