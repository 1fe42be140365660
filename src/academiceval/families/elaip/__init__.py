"""ElaipBench-format multiple-choice questions as a task family: import, retrieval settings, generation.

`family` (for the registry): task `elaipbench`, prompt kind choice (letters); `items` (rows → items, retrieval
settings, the item as core multiple choice), `samples` (an item as a round `Sample`), `generate`
(ElaipBench-style questions), `cli` (`elaip import|run|generate`)."""

from academiceval.families.elaip.family import family

__all__ = ["family"]
