"""The embedding pass of a dense-retrieval run: say what it will cost before it starts, then show it going.

Under `--rag dense` every chunk of every sample's inputs is embedded once (minutes of CPU on a small machine: the
demo round's chunks took about five). Interleaved with the requests, that time passed with the sample bar at 0
and no word of how long it would take (issue 28 item 8). So before the requests the runner embeds the chunks
of the samples still to ask, in one pass:

1. it collects the distinct chunk texts exactly as the prompt preparation cuts them
   (`models.prepare.retrieval_chunks`; a progress line, since tokenizing long inputs takes a while) and drops
   those the retriever has already embedded;
2. it embeds a spread-out probe of them and times it: the estimate is the measured rate × what is left, on this
   machine under its current load — not a constant;
3. it says so (`notice`: chunks, tokens, measured rate, estimate), embeds the rest with a progress line, and
   says how long it really took.

The preparation of each sample then finds its chunks in the retriever's memo. At most `memo_size` chunks are
embedded ahead (a bigger pass would evict its own first vectors); the rest are embedded as their samples come,
and the notice says how many that is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from academiceval.models.prepare import retrieval_chunks
from academiceval.models.rag.retrievers import DenseRetriever
from academiceval.runs.prepare import PromptPreparer
from academiceval.store.models import Sample

PROBE_CHUNKS = 32  # chunks embedded and timed for the estimate (spread over the pass; they count as done)
PASS_BATCH = 128  # chunks per embedding call between two progress ticks

Notice = Callable[[str], None]
StageProgress = Callable[[str, int, int], None]  # (description, done, total)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class EmbeddingPass:
    """What the pass embedded, what it expected, and what it took (kept in the run summary)."""

    model: str
    samples: int
    chunks: int  # distinct chunk texts not embedded before the pass
    tokens: int  # their length in the run's tokenizer
    ahead: int  # embedded in the pass (the rest: as their samples come)
    probe_chunks: int
    probe_s: float
    estimated_s: float  # the whole pass over the `ahead` chunks (the probe's time + the rest at its rate)
    elapsed_s: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.probe_chunks / self.probe_s if self.probe_s > 0 else float("inf")

    def plan_line(self) -> str:
        later = f"; the other {self.chunks - self.ahead:,} as their samples come" if self.ahead < self.chunks else ""
        return (
            f"dense retrieval: {self.chunks:,} chunks ({self.tokens:,} tokens) of {self.samples:,} samples to embed "
            f"with {self.model}: about {_duration(self.estimated_s)} in all at {self.chunks_per_s:,.1f} chunks/s "
            f"(measured on {self.probe_chunks} of them){later}"
        )

    def done_line(self) -> str:
        return (
            f"dense retrieval: embedded {self.ahead:,} chunks in {_duration(self.elapsed_s)} "
            f"(estimated {_duration(self.estimated_s)})"
        )

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "chunks_per_s": round(self.chunks_per_s, 3)}


def embedding_pass(
    retriever: DenseRetriever,
    samples: Sequence[Sample],
    chunks_of: Callable[[Sample], list[tuple[str, int]]],
    *,
    notice: Notice | None = None,
    progress: StageProgress | None = None,
) -> EmbeddingPass | None:
    """Embed the chunks of `samples` (`chunks_of(sample)`: (text, tokens) each) that `retriever` has not embedded
    yet, after saying how many and how long; None when there is nothing to embed."""
    tokens_of: dict[str, int] = {}
    cutting = f"cutting {len(samples):,} samples into chunks"  # tokenizing long inputs: a minute on the demo round
    for k, s in enumerate(samples, 1):
        for text, n in chunks_of(s):
            tokens_of.setdefault(text, n)
        if progress and (k % 16 == 0 or k == len(samples)):
            progress(cutting, k, len(samples))
    todo = retriever.missing(list(tokens_of))
    if not todo:
        return None
    ahead = todo[: retriever.memo_size]
    step = max(1, len(ahead) // PROBE_CHUNKS)
    probe = ahead[::step][:PROBE_CHUNKS]  # spread over the pass: short and long papers alike
    t0 = time.perf_counter()
    retriever.embed(probe)
    probe_s = time.perf_counter() - t0
    rate = len(probe) / probe_s if probe_s > 0 else float("inf")
    est = EmbeddingPass(
        model=retriever.model_name,
        samples=len(samples),
        chunks=len(todo),
        tokens=sum(tokens_of[t] for t in todo),
        ahead=len(ahead),
        probe_chunks=len(probe),
        probe_s=probe_s,
        estimated_s=probe_s + (len(ahead) - len(probe)) / rate,
    )
    if notice:
        notice(est.plan_line())
    rest = retriever.missing(ahead)
    what = f"embedding {len(ahead):,} chunks ({retriever.model_name})"
    done = len(ahead) - len(rest)
    if progress:
        progress(what, done, len(ahead))
    for i in range(0, len(rest), PASS_BATCH):
        batch = rest[i : i + PASS_BATCH]
        retriever.embed(batch)
        done += len(batch)
        if progress:
            progress(what, done, len(ahead))
    est.elapsed_s = time.perf_counter() - t0
    if notice:
        notice(est.done_line())
    return est


def dense_pass_for(
    preparer: PromptPreparer,
    samples: Sequence[Sample],
    *,
    notice: Notice | None = None,
    progress: StageProgress | None = None,
) -> EmbeddingPass | None:
    """`embedding_pass` for a run's prompt preparation (`runs.prepare.PromptPreparer`): its retrieval settings,
    tokenizer and model decide the chunks; None unless it retrieves densely."""
    rag = preparer.rag
    if rag is None or rag.retriever != "dense":
        return None
    retriever = rag.retriever_obj()
    assert isinstance(retriever, DenseRetriever)

    def chunks_of(sample: Sample) -> list[tuple[str, int]]:
        return retrieval_chunks(sample, rag, tokenizer=preparer.tokenizer, model=preparer.model)

    return embedding_pass(retriever, samples, chunks_of, notice=notice, progress=progress)
