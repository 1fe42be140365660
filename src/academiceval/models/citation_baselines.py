"""Two Related Work baselines that calibrate the citation metrics (scores.citations, issue 15).

- `cite-copy`: one sentence per listed paper, citing it by the number the prompt gives it (`[i]`): every
  citation points into the list, so its citation precision is 1.0 (and its recall 1.0: it cites all of them).
- `cite-invent`: the same kind of section, but every citation is made up: numbers past the end of the list and
  author-year citations of works that are not listed, so its precision is 0 and its unlisted count is high.

Both read the sample's citation list (the numbered list the Related Work prompt shows), not the prompt text.
"""

from __future__ import annotations

from academiceval.store.hashing import stable_int
from academiceval.store.models import Sample

INVENTED_AUTHORS = ("Hartwell", "Okonkwo", "Lindqvist", "Ferreira", "Nakamura", "Dubois", "Kowalczyk", "Abara")


def cite_copy(sample: Sample) -> str:
    """Cites each listed paper by its list number, and by nothing else: a listed title may itself read like a
    citation (an unlinked SCALAR reference is listed by its printed marker, "Smith et al., 2020"), and copying
    it would add an author-year citation the list does not number."""
    if not sample.citations:
        return "No cited papers were listed for this paper."
    lines = [f"This section builds on the listed work [{i}]." for i in range(1, len(sample.citations) + 1)]
    return " ".join(lines)


def cite_invent(sample: Sample) -> str:
    """Cites only works that are not in the list (deterministic per sample)."""
    n = len(sample.citations)
    h = stable_int(sample.sample_id)
    out = []
    for k in range(max(3, min(n, 8))):
        name = INVENTED_AUTHORS[(h + k) % len(INVENTED_AUTHORS)]
        year = 2000 + (h + 3 * k) % 20
        out.append(
            f"{name} et al. ({year}) proposed a closely related approach [{n + k + 1}], "
            f"which was later extended [{n + k + 20}]."
        )
    return " ".join(out)
