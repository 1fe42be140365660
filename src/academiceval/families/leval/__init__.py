"""L-Eval (long-document QA) as a task family: its task files as a round, its prompts and truncation.

`family` (for the registry): task `leval`, prompt kind document_qa; `items` (task files → items, prompts, LIE,
L-Eval's truncation), `round` (items ↔ a round), `samples` (an item as a round `Sample`), `cli` (`leval
import|run`)."""

from academiceval.families.leval.family import family

__all__ = ["family"]
