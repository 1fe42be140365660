"""Round statistics — the round's version of AcademicEval's Table 2.

Per config: samples, split percentages, mean input and output (label) tokens in BERT WordPiece, compression rate
(input / output) and the test timespan. Token counts come from the samples (measured at build time on the
default rendered prompt); `recount=True` re-tokenises every rendered prompt and label instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from academiceval.rounds.prompts import render_prompt
from academiceval.rounds.tokens import count_tokens
from academiceval.sources.dates import date_range, format_date
from academiceval.store.artifacts import LoadedRound, load_round
from academiceval.store.models import RoundManifest
from academiceval.store.paper_models import DatePrecision
from academiceval.store.tasks import task_order


@dataclass
class ConfigStats:
    config: str
    task: str
    setting: str
    samples: int
    split_pct: dict[str, float]
    mean_input_tokens: float
    mean_output_tokens: float
    compression: float
    test_from: date | None
    test_until: date | None
    demos_mean: float
    test_from_precision: DatePrecision = "day"  # a publication-list date known to the year shows as "2024"
    test_until_precision: DatePrecision = "day"

    def timespan(self) -> str:
        """The test dates as precisely as they are known: "2024-03-01 … 2024-11-30", "2023 … 2024", "2024"."""
        if self.test_from is None or self.test_until is None:
            return "—"
        a = format_date(self.test_from, self.test_from_precision)
        b = format_date(self.test_until, self.test_until_precision)
        return a if a == b else f"{a} … {b}"


def round_stats(round_or_dir: LoadedRound | str | Path, *, recount: bool = False) -> list[ConfigStats]:
    rnd = round_or_dir if isinstance(round_or_dir, LoadedRound) else load_round(round_or_dir)
    out: list[ConfigStats] = []
    for cfg in rnd.configs():
        info = rnd.manifest.configs[cfg]
        n = 0
        inp = outp = demos = 0
        splits = {"train": 0, "val": 0, "test": 0}
        # earliest first day and latest last day any test date can stand for, with the date's own precision
        t_from: tuple[date, date, DatePrecision] | None = None  # (first day, published, precision)
        t_until: tuple[date, date, DatePrecision] | None = None  # (last day, published, precision)
        batch: list[tuple[str, str]] = []

        for s in rnd.samples(cfg):
            n += 1
            splits[s.split] += 1
            demos += len(s.demos)
            if s.split == "test":
                first, last = date_range(s.published, s.date_precision)
                if t_from is None or first < t_from[0]:
                    t_from = (first, s.published, s.date_precision)
                if t_until is None or last > t_until[0]:
                    t_until = (last, s.published, s.date_precision)
            if recount or s.input_tokens is None or s.label_tokens is None:
                batch.append((render_prompt(s, templates_dir=rnd.templates_dir), s.label))
                if len(batch) >= 16:
                    a, b = _count_pairs(batch)
                    inp, outp = inp + a, outp + b
            else:
                inp += s.input_tokens
                outp += s.label_tokens
        a, b = _count_pairs(batch)
        inp, outp = inp + a, outp + b
        mi, mo = (inp / n, outp / n) if n else (0.0, 0.0)
        out.append(
            ConfigStats(
                config=cfg,
                task=info.task,
                setting=info.setting,
                samples=n,
                split_pct={k: round(100.0 * v / n, 1) if n else 0.0 for k, v in splits.items()},
                mean_input_tokens=round(mi, 1),
                mean_output_tokens=round(mo, 1),
                compression=round(mi / mo, 1) if mo else 0.0,
                test_from=t_from[1] if t_from else None,
                test_until=t_until[1] if t_until else None,
                demos_mean=round(demos / n, 2) if n else 0.0,
                test_from_precision=t_from[2] if t_from else "day",
                test_until_precision=t_until[2] if t_until else "day",
            )
        )
    out.sort(key=lambda c: (task_order(c.task), c.mean_input_tokens, c.config))
    return out


_COARSER = {"day": 0, "month": 1, "year": 2}


def window_title(rnd: LoadedRound) -> str:
    """ "train ≤ … · val … · test …" with each cut shown as precisely as the dates it came from are known.

    Windows cut over publication-list dates known only to the year fall on that year's first day; a cut equal to
    such a date stands for the year ("val 2024"), not for 1 January ("2024-01-01…2024-01-01")."""
    coarsest: dict[date, DatePrecision] = {}
    for s in rnd.samples():
        p = s.date_precision
        if _COARSER[p] > _COARSER[coarsest.get(s.published, "day")]:
            coarsest[s.published] = p
        else:
            coarsest.setdefault(s.published, p)

    def fmt(d: date | None) -> str:
        return "—" if d is None else format_date(d, coarsest.get(d, "day"))

    def span(a: date | None, b: date | None) -> str:
        fa, fb = fmt(a), fmt(b)
        return fa if fa == fb else f"{fa}…{fb}"

    w = rnd.manifest.windows
    return (
        f"round {rnd.name}: train ≤ {fmt(w.train_until)} · val {span(w.val_from, w.val_until)} · "
        f"test {span(w.test_from, w.test_until)}"
    )


def _count_pairs(batch: list[tuple[str, str]]) -> tuple[int, int]:
    """Token sums of (prompt, label) pairs; empties the batch."""
    if not batch:
        return 0, 0
    c = count_tokens([t for pair in batch for t in pair])
    batch.clear()
    return sum(c[0::2]), sum(c[1::2])


COLUMNS = [
    "config",
    "setting",
    "samples",
    "train/val/test %",
    "demos",
    "input tok",
    "output tok",
    "compression",
    "test timespan",
]


def rows(stats: list[ConfigStats]) -> list[list[str]]:
    out = []
    for c in stats:
        pct = c.split_pct
        span = c.timespan()
        out.append(
            [
                c.config,
                c.setting,
                str(c.samples),
                f"{pct['train']:.0f}/{pct['val']:.0f}/{pct['test']:.0f}",
                f"{c.demos_mean:g}",
                f"{c.mean_input_tokens:,.0f}",
                f"{c.mean_output_tokens:,.0f}",
                f"{c.compression:.1f}",
                span,
            ]
        )
    return out


def markdown(stats: list[ConfigStats], *, title: str | None = None) -> str:
    lines = [f"### {title}", ""] if title else []
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "|".join(["---"] * 2 + ["---:"] * 6 + ["---"]) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in rows(stats)]
    return "\n".join(lines) + "\n"


def split_notes(manifest: RoundManifest) -> list[str]:
    """Plain-language notes on uneven splits. The split is by v1 date, so a window that is one day long can still
    hold a large share of a config's samples (many papers share a date: a bulk listing day, a conference
    deadline); and a split with a handful of samples gives wide, unstable scores. Said once per config."""
    w = manifest.windows
    days = {
        "train": None,
        "val": (w.val_until - w.val_from).days + 1 if w.val_from and w.val_until else None,
        "test": (w.test_until - w.test_from).days + 1 if w.test_from and w.test_until else None,
    }
    span = {"val": f"{w.val_from}…{w.val_until}", "test": f"{w.test_from}…{w.test_until}"}
    notes = []
    for name, info in sorted(manifest.configs.items()):
        total = sum(info.counts.values())
        if not total:
            continue
        for split in ("val", "test"):
            n = info.counts.get(split, 0)
            share = n / total
            d = days[split]
            if d is not None and d <= 3 and share >= 0.25:
                notes.append(
                    f"{name}: the {split} window is {d} day{'s' if d > 1 else ''} ({span[split]}) yet holds "
                    f"{share:.0%} of the samples ({n}/{total}): many papers share those v1 dates, and the split is "
                    "by date, so it cannot be balanced by count"
                )
            elif 0 < n < 10:
                notes.append(
                    f"{name}: the {split} split has only {n} sample{'s' if n > 1 else ''}: its scores are low-n "
                    "(no intervals are shown below 10 samples)"
                )
    return notes
