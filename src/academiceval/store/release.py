"""The layout of a published round (`academiceval release ROUND OUT`) and of its private key: the one writer and
reader of both.

A release is a round directory a dataset hub can host as it is:

    OUT/README.md            dataset card; its YAML header lists every config's parquet files (and the withheld
                             listing as the config `withheld`), so `datasets.load_dataset(OUT, CONFIG)` loads it
    OUT/data/CONFIG/SPLIT.parquet   the published samples: no sample of a withheld paper
    OUT/withheld/SPLIT.parquet      one row per withheld sample: what a maintainer needs to verify a submission
                                    (`WithheldItem`: release id, config, task, arXiv id, date, prompt sha256) and
                                    nothing a model could learn the answer from
    OUT/templates/           the prompt templates (runs re-render prompts from the samples' fields)
    OUT/LICENSES.md          licence notes per source of the papers
    OUT/SHA256SUMS           `sha256sum -c SHA256SUMS` checks every file
    OUT/manifest.json        the round's manifest for what is published, plus `release` (what is withheld, how
                             the leak check was made, how to rebuild)

Withholding is per paper: a withheld paper's samples are in no config (inputs, labels, demonstrations, citation
corpora, multiple-choice contexts and candidates), because one paper's tasks carry each other's labels (its abstract
is the Title task's input). Multiple-choice items are listed under an opaque id (`release_sample_id`): no answer,
no seed, no id that names the gold option.

The private key (`store.release_key`, at `store.artifacts.Layout.release_key`, 0600, in the creator's workspace,
never in OUT) maps each withheld release id to the full sample, so `academiceval score` in that workspace can score
a submission on the withheld papers (`scores.labels`); anywhere else those samples score as "label withheld".

The writer takes the leak check as a callable (it lives in `rounds.release_check`, above this layer) and runs it on
the staged directory before the publisher renames it into place: a release that leaks is never published.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from academiceval.store.artifacts import (
    CHECKSUMS,
    DATASET_CARD,
    MANIFEST,
    SPLITS,
    TEMPLATES,
    ArtifactError,
    LoadedRound,
    data_paths,
    load_round,
    write_manifest,
)
from academiceval.store.hashing import sha256_file, sha256_hex
from academiceval.store.models import RoundManifest, Sample
from academiceval.store.publisher import publishing
from academiceval.store.release_key import stage_key
from academiceval.store.tasks import find_spec

LICENSES = "LICENSES.md"
WITHHELD = "withheld"  # OUT/withheld/SPLIT.parquet
WITHHELD_CONFIG = "withheld"  # its config name in the card (`datasets.load_dataset(OUT, "withheld")`)


class WithheldItem(BaseModel):
    """One withheld sample as a release lists it: enough to verify a submission (the prompt it answered) and to
    rebuild it from the paper, nothing that gives the answer (no label, no seed, no option key, no input text)."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str  # the release id: the sample id, or an opaque id for multiple choice (`release_sample_id`)
    config: str
    task: str
    setting: str
    split: str
    arxiv_id: str
    published: date
    date_precision: str
    prompt_sha256: str


WITHHELD_COLUMNS = tuple(WithheldItem.model_fields)
_WITHHELD_SCHEMA = pa.schema([(k, pa.date32() if k == "published" else pa.string()) for k in WITHHELD_COLUMNS])


def withheld_path(split: str) -> str:
    return f"{WITHHELD}/{split}.parquet"


def is_choice(task: str) -> bool:
    spec = find_spec(task)
    return spec is not None and spec.prompt_kind == "choice"


def content_digest(sample: Sample) -> str:
    """What identifies a sample's question without its answer: its prompt's sha256, else the sha256 of its input
    fields (a multiple-choice `item` field holds the answer and is left out)."""
    if sample.prompt_sha256:
        return sample.prompt_sha256
    fields = {k: v for k, v in sorted(sample.fields.items()) if k != "item"}
    return sha256_hex(json.dumps(fields, sort_keys=True))


def release_sample_id(sample: Sample) -> str:
    """The id a release gives a withheld sample. A writing sample keeps its id (`task/setting/arxiv_id`: nothing of
    the answer). A multiple-choice id names the gold option (`citation_cloze/easy/PAPER/REF/SECTION:START`), so it
    becomes `task/setting/arxiv_id/w<16 hex>` from the question's prompt hash: anyone who rebuilt the question can
    compute it (`release_sample_id` of the rebuilt sample), nobody learns the answer from it."""
    if not is_choice(sample.task):
        return sample.sample_id
    return release_id_of(sample.round, sample.task, sample.setting, sample.arxiv_id, content_digest(sample))


def release_id_of(round_name: str, task: str, setting: str, arxiv_id: str, digest: str) -> str:
    """A multiple-choice release id from what a run record also carries (its prompt hash as `digest`)."""
    h = sha256_hex("|".join([round_name, task, setting, arxiv_id, digest]))
    return f"{task}/{setting}/{arxiv_id or 'item'}/w{h[:16]}"


def withheld_item(sample: Sample, config: str) -> WithheldItem:
    return WithheldItem(
        sample_id=release_sample_id(sample),
        config=config,
        task=sample.task,
        setting=sample.setting,
        split=sample.split,
        arxiv_id=sample.arxiv_id,
        published=sample.published,
        date_precision=sample.date_precision,
        prompt_sha256=sample.prompt_sha256,
    )


@dataclass
class ReleasePlan:
    """What a release publishes, decided by `rounds.release`: which splits' papers are withheld, and which other
    samples stay out because they carry a withheld paper (a demonstration, a cited or candidate paper)."""

    withheld_splits: list[str]
    withheld_papers: set[str] = field(default_factory=set)  # arXiv ids (or paper ids) of withheld papers
    dropped: dict[str, str] = field(default_factory=dict)  # sample id of a non-withheld split -> why it stays out
    info: dict[str, Any] = field(default_factory=dict)  # more of `manifest.release` (test window, rebuild recipe)


@dataclass
class ReleaseResult:
    out: Path
    configs: list[str]  # configs with published samples
    samples: int = 0  # published samples (rows)
    withheld: int = 0  # withheld samples (listed in withheld/)
    withheld_distinct: int = 0  # distinct withheld sample ids (a sample may sit in several configs)
    withheld_papers: int = 0
    withheld_dates: tuple[date, date] | None = None  # first and last `published` of the withheld samples (listed)
    dropped: int = 0  # samples of published splits left out because they carry a withheld paper
    withheld_splits: list[str] = field(default_factory=list)
    files: int = 0
    key: Path | None = None  # the private key written into the creator's workspace
    check: Any = None  # the leak check's report (rounds.release_check.LeakReport)


class LeakCheck(Protocol):
    """The leak check a release runs on its staged files (`rounds.release_check.check_release`): raises to refuse
    the release; `only` restricts it to some files (re-checked after the card and manifest get its summary)."""

    def __call__(self, staging: Path, withheld: list[tuple[str, Sample]], only: Sequence[str] | None = None) -> Any: ...


def write_release(
    round: LoadedRound,
    out: Path,
    *,
    plan: ReleasePlan,
    card: Callable[[RoundManifest, ReleaseResult], str],
    licences: str,
    check: LeakCheck | None = None,
    force: bool = False,
    home: Path | None = None,
) -> ReleaseResult:
    """Write `round` as a release into `out` through the one publisher (`store.publisher.publishing`): refused when
    `out` is, contains or lies inside the round or the workspace `home`, or already holds files (unless `force`,
    and then only a release or round academiceval wrote is replaced).

    `check(staging, withheld)` runs on the staged directory with every withheld (release id, full sample) and raises
    to refuse the release. Its report (`ReleaseResult.check`, with `summary()`) then goes into the card and
    `manifest.release["leak_check"]`, and the three files that changed are checked again. When anything is
    withheld the private key is written into the workspace `home` (required then), after the release is in place."""
    out = Path(out)
    if plan.withheld_splits and home is None:
        raise ArtifactError(
            "a release that withholds labels needs the workspace to keep its private key",
            hint="pass --home (or release --with-labels)",
        )
    res = ReleaseResult(out=out, configs=[], withheld_splits=sorted(plan.withheld_splits))
    withheld: list[tuple[str, str, Sample]] = []  # (release id, config, sample)
    key_tmp: Path | None = None
    try:
        with publishing(out, force=force, home=home, protect=[round.path], what="release") as tmp:
            manifest = _write(round, tmp, res, plan, withheld, licences=licences)
            _finish(tmp, manifest, card(manifest, res))
            if check is not None:
                pairs = [(rid, s) for rid, _, s in withheld]
                res.check = check(tmp, pairs)
                manifest.release = {**(manifest.release or {}), "leak_check": res.check.summary()}
                manifest.files = {}
                _finish(tmp, manifest, card(manifest, res))
                check(tmp, pairs, only=[DATASET_CARD, MANIFEST, CHECKSUMS])
            res.files = len(manifest.files) + 2
            if withheld and home is not None:
                key_tmp = stage_key(home, round, manifest, tmp, out, withheld)
        if key_tmp is not None:
            res.key = key_tmp.with_name(key_tmp.name.removeprefix("."))
            key_tmp.rename(res.key)
            key_tmp = None
    finally:
        if key_tmp is not None:
            key_tmp.unlink(missing_ok=True)
    return res


def _finish(tmp: Path, manifest: RoundManifest, card_text: str) -> None:
    """The card, then the manifest (sha256 of every other file), then SHA256SUMS (the manifest's too)."""
    (tmp / CHECKSUMS).unlink(missing_ok=True)  # re-finishing: the manifest lists every file but these two
    (tmp / DATASET_CARD).write_text(card_text, encoding="utf-8")
    write_manifest(tmp, manifest)
    sums = {**manifest.files, MANIFEST: sha256_file(tmp / MANIFEST)}
    (tmp / CHECKSUMS).write_text("".join(f"{h}  {p}\n" for p, h in sorted(sums.items())), encoding="utf-8")


def _keep(table: pa.Table, ids: Iterable[str]) -> pa.Table:
    return table.filter(pc.is_in(table["sample_id"], value_set=pa.array(sorted(set(ids)), pa.string())))


def _write(
    round: LoadedRound,
    tmp: Path,
    res: ReleaseResult,
    plan: ReleasePlan,
    withheld: list[tuple[str, str, Sample]],
    *,
    licences: str,
) -> RoundManifest:
    manifest = round.manifest.model_copy(deep=True)
    manifest.files = {}
    manifest.counts = {}
    # sample ids of the previous round (release notes) may be multiple-choice ids that name the answer
    manifest.adds, manifest.retires = [], []
    listing: dict[str, list[WithheldItem]] = {}
    withheld_ids: set[str] = set()
    configs: dict[str, Any] = {}
    for name in round.configs():
        info = manifest.configs[name]
        kept: list[str] = []
        counts: dict[str, int] = {}
        for split in SPLITS:
            rel = data_paths(name, split)[0]
            if rel not in info.files:
                continue
            if split in plan.withheld_splits:
                for s in round.samples(name, split=split):
                    rid = release_sample_id(s)
                    listing.setdefault(split, []).append(withheld_item(s, name))
                    withheld.append((rid, name, s))
                    withheld_ids.add(s.sample_id)
                continue
            table = pq.read_table(round.path / rel)
            ids = [i for i in table["sample_id"].to_pylist() if i not in plan.dropped]
            res.dropped += table.num_rows - len(ids)
            table = _keep(table, ids)
            if not table.num_rows:
                continue
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp / rel, compression="zstd")
            kept.append(rel)
            counts[split] = table.num_rows
            res.samples += table.num_rows
        if kept:
            info.files, info.counts = kept, counts
            configs[name] = info
            manifest.counts[name] = counts  # per config, as the round has them
    manifest.configs = configs
    res.configs = sorted(configs)
    for split, items in sorted(listing.items()):
        rows = [i.model_dump() for i in sorted(items, key=lambda i: (i.config, i.sample_id))]
        (tmp / WITHHELD).mkdir(exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=_WITHHELD_SCHEMA), tmp / withheld_path(split))
    res.withheld = len(withheld)
    res.withheld_distinct = len(withheld_ids)
    res.withheld_papers = len({s.arxiv_id or s.paper_id for _, _, s in withheld})
    if withheld:
        res.withheld_dates = (min(s.published for _, _, s in withheld), max(s.published for _, _, s in withheld))
    if round.templates_dir is not None:
        shutil.copytree(round.templates_dir, tmp / TEMPLATES)
    (tmp / LICENSES).write_text(licences, encoding="utf-8")
    manifest.release = {
        "released_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "withheld_splits": res.withheld_splits,
        "withheld_samples": res.withheld,
        "withheld_papers": res.withheld_papers,
        "withheld_listing": [withheld_path(sp) for sp in sorted(listing)],
        "dropped_samples": res.dropped,
        "dropped_reasons": _reasons(plan.dropped),
        "source_manifest_sha256": round.manifest_sha256,
        **plan.info,
    }
    return manifest


def _reasons(dropped: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for why in dropped.values():
        out[why] = out.get(why, 0) + 1
    return dict(sorted(out.items()))


def read_withheld(release_dir: str | Path) -> list[WithheldItem]:
    """The withheld listing of a release (empty for a round or a release with every label)."""
    d = Path(release_dir)
    manifest = load_round(d, verify=False).manifest
    out: list[WithheldItem] = []
    for rel in (manifest.release or {}).get("withheld_listing", []):
        for row in pq.read_table(d / rel).to_pylist():
            out.append(WithheldItem.model_validate(row))
    return out


def placeholder(item: WithheldItem, round_name: str) -> Sample:
    """A withheld sample as scoring sees it without the key: its identity and date, no input, no label."""
    return Sample(
        sample_id=item.sample_id,
        round=round_name,
        task=item.task,
        setting=item.setting,
        setting_name=item.config,
        split=item.split,
        arxiv_id=item.arxiv_id,
        paper_id="",
        published=item.published,
        date_precision=item.date_precision,
        fields={},
        label="",
        prompt_sha256=item.prompt_sha256,
    )


def verify_checksums(out: Path) -> list[str]:
    """Files whose sha256 differs from SHA256SUMS (empty: all good), as `sha256sum -c` would report them."""
    bad = []
    for line in (Path(out) / CHECKSUMS).read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        p = Path(out) / rel
        if not p.is_file() or sha256_hex(p.read_bytes()) != digest:
            bad.append(rel)
    return bad


def released_files(out: Path) -> Sequence[Path]:
    """Every file of a (staged) release, in a stable order: what the leak check reads."""
    return sorted(p for p in Path(out).rglob("*") if p.is_file())
