"""What a release of a round holds (`academiceval release ROUND OUT`): which labels it withholds, its dataset card
and licence notes. The files are written by `store.release` (the one writer of the release layout).

By default the labels of the newest window (the test split: every test paper is newer than the train and
validation papers) are withheld, as LiveBench withholds its newest questions: models can be run on a published
round without its answer key entering crawled copies of the dataset. `with_labels=True` publishes them (e.g.
when the next round is out).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from academiceval.rounds.export import dataset_card
from academiceval.store.artifacts import LoadedRound
from academiceval.store.release import CHECKSUMS, LICENSES, ReleaseResult, write_release

# What we can say about the rights in each source's text (a release copies paper text: inputs and labels).
SOURCE_NOTES = {
    "arxiv": (
        "arXiv papers (PDFs fetched from arXiv, or a bulk mirror of them). Each paper keeps the licence its authors "
        "chose at submission: often arXiv's non-exclusive distribution licence (arXiv may distribute it; it grants "
        "no redistribution rights to others), sometimes CC BY, CC BY-SA, CC BY-NC-SA or CC0. Check a paper's "
        "licence at https://arxiv.org/abs/ID before redistributing its text beyond research evaluation."
    ),
    "unarxive": (
        "unarXive (full-text arXiv papers parsed from LaTeX sources, Saier & Färber). The papers' own arXiv "
        "licences apply, as for arXiv above; unarXive's data licence governs its parsing."
    ),
    "publist": (
        "A publication list (BibTeX / CSL-JSON) with the authors' full texts: journal papers keep their "
        "publishers' licences; check each one before redistributing."
    ),
}
DEFAULT_NOTE = "Papers from a source this release does not describe: check each paper's licence."


def source_of(sample_paper_id: str, build_source: str | None) -> str:
    """`<source>:<id>` paper ids name their source; ingested PDFs (sha256 ids) come from the build's source."""
    if ":" in sample_paper_id:
        return sample_paper_id.split(":", 1)[0].lower()
    src = (build_source or "arxiv").lower()
    return "unarxive" if "unarxive" in src else ("publist" if "publ" in src else "arxiv")


def licence_notes(round: LoadedRound) -> str:
    build_source = str(round.manifest.build_options.get("source") or round.manifest.config.get("source") or "")
    papers: dict[str, set[str]] = {}
    for s in round.samples():
        papers.setdefault(source_of(s.paper_id, build_source), set()).add(s.arxiv_id)
    counts = Counter({k: len(v) for k, v in papers.items()})
    lines = [
        f"# Licence notes: academiceval round `{round.name}`",
        "",
        "The samples quote the papers' own text (inputs and labels). academiceval's code is Apache-2.0; it grants "
        "nothing over the papers. Per source:",
        "",
    ]
    for src, n in counts.most_common():
        lines += [f"## {src} ({n} papers)", "", SOURCE_NOTES.get(src, DEFAULT_NOTE), ""]
        ids = sorted(papers[src])
        lines += ["Papers: " + ", ".join(ids[:200]) + (f", … ({len(ids) - 200} more)" if len(ids) > 200 else ""), ""]
    return "\n".join(lines)


def release_card(round: LoadedRound, withheld: list[str], n_withheld: int) -> str:
    card = dataset_card(round.manifest).replace("\nlanguage:", "\nlicense: other\nlanguage:", 1)
    w = round.manifest.windows
    lines = ["## This release", ""]
    if withheld:
        lines += [
            f"The labels of the newest window ({', '.join(withheld)}: papers from {w.test_from} to {w.test_until}, "
            f"{n_withheld} samples) are **withheld**: `label` is empty and `label_tokens` null. Run a model on them "
            "(`academiceval run THIS_DIR --model ...` stores outputs only); they are scored when the labels "
            "are released. A paper's text can still appear in another task's input (the title in the abstract "
            "task's input), and the papers are public: withholding keeps the round's answer key out of crawled "
            "copies of this dataset, it does not hide the papers.",
        ]
    else:
        lines += ["All labels are included."]
    lines += [
        "",
        f"Check the files with `sha256sum -c {CHECKSUMS}`. Licence notes per source: `{LICENSES}`.",
        "",
    ]
    return card + "\n".join(lines)


def release_round(
    round: LoadedRound,
    out: str | Path,
    *,
    with_labels: bool = False,
    force: bool = False,
    home: str | Path | None = None,
) -> ReleaseResult:
    """Write `round` as a publishable dataset folder at `out` (see `store.release`; `home`: the workspace, which
    `out` may not be, contain or lie inside except as `rounds/NAME`)."""
    test = sum(info.counts.get("test", 0) for info in round.manifest.configs.values())
    withheld = [] if with_labels or not test else ["test"]
    return write_release(
        round,
        Path(out),
        withhold_splits=withheld,
        card=release_card(round, withheld, test if withheld else 0),
        licences=licence_notes(round),
        release_info={"test_window": round.manifest.windows.model_dump(mode="json")},
        force=force,
        home=Path(home) if home is not None else None,
    )
