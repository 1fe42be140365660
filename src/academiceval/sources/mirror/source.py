"""`MirrorSource`: the `MetadataSource` protocol answered in-process from a local bulk mirror (`--source DIR`)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from academiceval.sources.base import FeedPage, SortBy, SortOrder, iter_pages
from academiceval.sources.entries import EntryPage, entry_of
from academiceval.sources.errors import InvalidArxivIdError, NotAPdfError, UnknownIdError
from academiceval.sources.ids import parse_arxiv_id, pdf_filename, safe_child
from academiceval.sources.mirror.disk import DiskIndex, open_index
from academiceval.sources.mirror.index import MirrorIndex, Progress
from academiceval.sources.pdf import is_complete_pdf
from academiceval.store.paper_models import PaperMeta


class MirrorSource:
    """Reads a mirror directory once (cached per process) and evaluates queries locally.

    `requests_made` counts query calls (search pages and id_list batches) as if each were one API request, so
    cost reports compare directly with the live client; `pdf_requests` counts PDF copies.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        id_batch_size: int = 100,
        progress: Progress | None = None,
        index: MirrorIndex | DiskIndex | None = None,
        index_path: str | Path | None = None,
        index_dir: str | Path | None = None,
    ) -> None:
        """`index`: one already open (the demo's, read once); else `open_index` (on disk when `index_path`,
        `index_dir` or `ACADEMICEVAL_MIRROR_INDEX_DIR` says where, in memory otherwise)."""
        self.root = Path(root)
        self.index: MirrorIndex | DiskIndex = index or open_index(
            self.root, index_path=index_path, index_dir=index_dir, progress=progress
        )
        self.id_batch_size = id_batch_size
        self.requests_made = 0
        self.pdf_requests = 0
        self._lock = threading.Lock()

    def _count(self, n: int = 1) -> None:
        with self._lock:
            self.requests_made += n

    def search(
        self,
        query: str,
        *,
        start: int = 0,
        max_results: int = 100,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> FeedPage:
        self._count()
        start = max(0, start)
        metas = getattr(self.index, "search_metas", None)  # a disk index decodes only the metadata
        if metas is not None:
            total, items = metas(query, start=start, max_results=max(0, max_results), sort_by=sort_by,
                                 sort_order=sort_order)  # fmt: skip
        else:
            total, page = self.index.search_page(
                query, start=start, max_results=max(0, max_results), sort_by=sort_by, sort_order=sort_order
            )
            items = [r.meta for r in page]
        return FeedPage.model_construct(total_results=total, start=start, items=items, errors=[])

    def search_entries(
        self,
        query: str,
        *,
        start: int = 0,
        max_results: int = 100,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> EntryPage:
        """One page as light entries (`sources/entries.py`): from the disk index's columns without decoding the
        records; the in-memory index has them decoded already. One request, like `search`."""
        native = getattr(self.index, "search_entries", None)
        if native is None:
            page = self.search(query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order)
            return EntryPage(page.total_results, page.start, [entry_of(m) for m in page.items])
        self._count()
        start = max(0, start)
        total, items = native(query, start=start, max_results=max(0, max_results), sort_by=sort_by,
                              sort_order=sort_order)  # fmt: skip
        return EntryPage(total, start, items)

    def iter_search(
        self,
        query: str,
        *,
        page_size: int = 100,
        limit: int | None = None,
        sort_by: SortBy = "submittedDate",
        sort_order: SortOrder = "descending",
    ) -> Iterator[PaperMeta]:
        return iter_pages(
            self.search,
            query,
            page_size=page_size,
            limit=limit,
            sort_by=sort_by,
            sort_order=sort_order,
        )

    def fetch_ids(self, arxiv_ids: Sequence[str]) -> list[PaperMeta]:
        out: list[PaperMeta] = []
        seen: set[str] = set()
        for i in range(0, len(arxiv_ids), self.id_batch_size):
            self._count()
            for raw in arxiv_ids[i : i + self.id_batch_size]:
                rec = self.index.get(raw)
                if rec is not None and rec.meta.arxiv_id not in seen:
                    seen.add(rec.meta.arxiv_id)
                    out.append(rec.meta)
        return out

    def fetch_pdf(self, arxiv_id: str, dest_dir: Path) -> Path:
        """Copy the mirror's PDF of a paper into dest_dir (atomic; skipped when a complete copy exists)."""
        base, _ = parse_arxiv_id(arxiv_id)  # raises InvalidArxivIdError for anything that is not an id
        dest_dir = Path(dest_dir)
        dest_dir.mkdir(parents=True, exist_ok=True)
        target = safe_child(dest_dir, pdf_filename(base))
        if target.exists() and is_complete_pdf(target):
            return target
        with self._lock:
            self.pdf_requests += 1
        found = self.index.pdfs.get(base)
        if found is None:
            raise UnknownIdError(f"no PDF for {base} in the mirror", source=str(self.root), hint="add <id>.pdf")
        src = found[1]
        with src.open("rb") as f:
            if f.read(5) != b"%PDF-":
                raise NotAPdfError(f"{src} does not start with %PDF-", source=str(src))
        tmp = target.with_name(target.name + ".part")
        shutil.copyfile(src, tmp)
        tmp.replace(target)
        return target

    def pdf_path(self, arxiv_id: str) -> Path | None:
        """Where the mirror holds a paper's PDF (None when it has none)."""
        try:
            base, _ = parse_arxiv_id(arxiv_id)
        except InvalidArxivIdError:
            return None
        found = self.index.pdfs.get(base)
        return found[1] if found else None
