"""Citation cloze (SCALAR) as a task family built live from the paper store.

Public entry points: `family` (its task spec and multiple-choice port, for the registry), `build.build_cloze_round`
(store → round), `importer.import_scalar` (SCALAR's published questions → round), `export.load_items` (round →
items), `prompt.render_item` / `prompt.fit_item` (item → prompt within a budget), `models.PRESETS` (easy / medium /
hard as SCALAR's code sets them).
"""

from academiceval.families.cloze.family import family
from academiceval.families.cloze.models import MASK, PRESETS, TASK, ClozeCandidate, ClozeItem, ClozeOptions, preset

__all__ = ["MASK", "PRESETS", "TASK", "ClozeCandidate", "ClozeItem", "ClozeOptions", "family", "preset"]
