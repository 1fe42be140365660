"""Round statistics — the round's version of AcademicEval's Table 2.

Per config: samples, split percentages, mean input and output (label) tokens in BERT WordPiece, compression rate
(input / output) and the test timespan. Token counts come from the samples (measured at build time on the
default rendered prompt); `recount=True` re-tokenises every rendered prompt and label instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from academiceval.rounds.prompts import render_prompt
from academiceval.rounds.tokens import count_tokens
from academiceval.sources.dates import date_range, format_date
from academiceval.store.artifacts import LoadedRound, load_round
from academiceval.store.models import MIN_N_FOR_INTERVAL, RoundManifest
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


@dataclass
class DemoSpread:
    """How co-author demonstrations spread over the papers that serve as them, in one config and split."""

    config: str
    split: str
    samples: int  # samples with at least one co-author demo
    slots: int  # co-author demo slots
    distinct: int  # distinct papers in them
    top_paper: str
    top_uses: int  # slots of the most-used paper

    def row(self) -> list[str]:
        share = f"{self.top_uses / self.slots:.0%}" if self.slots else "—"
        return [
            self.config,
            self.split,
            str(self.samples),
            str(self.slots),
            str(self.distinct),
            f"{self.top_paper} ×{self.top_uses} ({share})",
        ]


SPREAD_COLUMNS = ["config", "split", "samples", "co-author slots", "distinct papers", "most used"]
CONSOLE_SPREAD_COLUMNS = ["config", "split", "n", "slots", "papers", "most used"]  # at 80 columns, headers whole
CONSOLE_SPREAD_KEY = "n: samples with a co-author demo; slots: co-author demos in them; papers: distinct papers there"


def coauthor_spread(rnd: LoadedRound) -> list[DemoSpread]:
    """Per config and split with co-author demos: how many distinct papers serve, and the most used one (issue 23:
    a setting whose targets all get the same demonstration measures nothing about co-authorship)."""
    out = []
    for cfg in rnd.configs():
        for split in ("train", "val", "test"):
            uses: Counter[str] = Counter()
            n = 0
            for s in rnd.samples(cfg, split=split):
                co = [d.arxiv_id for d in s.demos if d.origin == "coauthor"]
                n += bool(co)
                uses.update(co)
            if uses:
                top, k = min(uses.items(), key=lambda kv: (-kv[1], kv[0]))
                out.append(DemoSpread(cfg, split, n, sum(uses.values()), len(uses), top, k))
    return out


_COARSER = {"day": 0, "month": 1, "year": 2}


def coarsest_precisions(rnd: LoadedRound) -> dict[date, DatePrecision]:
    """date -> the coarsest precision of a sample dated on it (a "2024" paper makes 2024-01-01 mean the year)."""
    coarsest: dict[date, DatePrecision] = {}
    for s in rnd.samples():
        p = s.date_precision
        if _COARSER[p] > _COARSER[coarsest.get(s.published, "day")]:
            coarsest[s.published] = p
        else:
            coarsest.setdefault(s.published, p)
    return coarsest


def window_title(rnd: LoadedRound) -> str:
    """ "train ≤ … · val … · test …" with each cut shown as precisely as the dates it came from are known.

    Windows cut over publication-list dates known only to the year fall on that year's first day; a cut equal to
    such a date stands for the year ("val 2024"), not for 1 January ("2024-01-01…2024-01-01")."""
    coarsest = coarsest_precisions(rnd)

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
# the terminal's table (`academiceval stats`): 80 columns hold it whole, config names unbroken (issue 28 item 7).
# A config is named task + setting, so the setting column is left out there; the test dates, most often the same
# for every config, go below it in a table of their own, grouped (`test_dates_rows`); short headers, said in full
# by `CONSOLE_KEY`
CONSOLE_COLUMNS = ["config", "n", "split %", "demos", "in tok", "out tok", "in/out"]
CONSOLE_KEY = (
    "n: samples; split %: train/val/test; demos: mean per sample; in/out tok: mean BERT WordPiece tokens of input and "
    "output; in/out: compression (input ÷ output); config = task + setting (`--json` has both)"
)


def console_rows(stats: list[ConfigStats]) -> list[list[str]]:
    """`rows` without the setting (spelled in the config's name) and the test dates, for `CONSOLE_COLUMNS`."""
    return [r[:1] + r[2:-1] for r in rows(stats)]


TEST_DATES_COLUMNS = ["test dates", "configs"]


def test_dates_rows(stats: list[ConfigStats]) -> list[list[str]]:
    """The test timespan of every config, grouped: the most common one first ("every config", or "every other
    config" when some differ), then one row per other timespan naming its configs."""
    groups: dict[str, list[str]] = {}
    for c in stats:  # "2024-10-29…2026-07-29": one word, never folded (as the round's windows are written)
        groups.setdefault(c.timespan().replace(" … ", "…"), []).append(c.config)
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))  # stable: the table's order among equals
    if not ranked:
        return []
    (span, _), rest = ranked[0], ranked[1:]
    return [[span, f"every {'other ' if rest else ''}config"], *([s, ", ".join(cs)] for s, cs in rest)]


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


def split_notes(
    manifest: RoundManifest, *, precisions: dict[date, DatePrecision] | None = None, low_n: bool = True
) -> list[str]:
    """Plain-language notes on uneven splits. The split is by v1 date, so a window that is one day long can still
    hold a large share of a config's samples (many papers share a date: a bulk listing day, a conference
    deadline); and a split with a handful of samples gives wide, unstable scores. Said once per config.
    `precisions` (`coarsest_precisions`) make a window of papers dated only "2024" the year it is, not one day;
    `low_n=False` leaves out the small-split notes (the report states low n from the cells it shows)."""
    w = manifest.windows
    prec = precisions or {}

    def days(a: date | None, b: date | None) -> int | None:
        if a is None or b is None:
            return None
        return (date_range(b, prec.get(b, "day"))[1] - a).days + 1

    def fmt(d: date | None) -> str:
        return "—" if d is None else format_date(d, prec.get(d, "day"))

    spans = {"val": (w.val_from, w.val_until), "test": (w.test_from, w.test_until)}
    notes = []
    for name, info in sorted(manifest.configs.items()):
        total = sum(info.counts.values())
        if not total:
            continue
        for split in ("val", "test"):
            n = info.counts.get(split, 0)
            share = n / total
            a, b = spans[split]
            d = days(a, b)
            if d is not None and d <= 3 and share >= 0.25:
                notes.append(
                    f"{name}: the {split} window is {d} day{'s' if d > 1 else ''} ({fmt(a)}…{fmt(b)}) yet holds "
                    f"{share:.0%} of the samples ({n}/{total}): many papers share those v1 dates, and the split is "
                    "by date, so it cannot be balanced by count"
                )
            elif low_n and 0 < n < MIN_N_FOR_INTERVAL:
                notes.append(
                    f"{name}: the {split} split has only {n} sample{'s' if n > 1 else ''}: its scores are low-n "
                    f"(no intervals are shown below {MIN_N_FOR_INTERVAL} samples)"
                )
    return notes
