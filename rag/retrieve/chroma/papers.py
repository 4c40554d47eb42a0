"""Paper reads from Chroma: records by id (cached per revision), every paper, the count, the reranker's text data,
and the warm-up that reads papers ahead of the questions (:class:`~rag.retrieve.index.PaperReads`)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

from askpapers.rag.retrieve.chroma.caches import PAPER_CACHE
from askpapers.rag.retrieve.chroma.freshness import FreshRole
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.types import Paper

PRELOAD_BATCH = 500  # papers whose vectors one request of a warm-up reads


class ChromaPapers(FreshRole):
    """The stored records of the papers, and what the warm-up reads of them."""

    def papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        """The stored records of these papers (those that exist), from the cache where possible."""
        return self.caches.cached(self.caches.papers, ids, self._read)

    def _read(self, ids: Sequence[str]) -> dict[str, Paper]:
        """Records from the BM25 index (kept up to date with the store), and from Chroma those it lacks."""
        found = self.fresh.call(lambda index: index.papers(ids))
        missing = [pid for pid in ids if pid not in found]
        return {**found, **self.store.get_papers(missing)} if missing else found

    def all_papers(self, most: int | None = None) -> list[Paper]:
        """Every paper in the store, by title; or the first ``most`` the store yields, by title (the same list
        when the store holds no more), without reading the rest."""
        return sorted(itertools.islice(self.store.iter_papers(), most), key=lambda p: p.title.lower())

    def count(self) -> int:
        return self.store.count()

    def doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        """The reranker's per-paper text data, as the BM25 index stored it when the papers were indexed."""
        return self.fresh.call(lambda index: index.doc_texts(ids))

    def preload(self, most: int, stop: threading.Event | None = None) -> list[Paper]:
        """Read the records, paper vectors, chunk vectors and chunk texts of up to ``most`` papers into the caches,
        ahead of the questions that need them (the warm-up), a batch per request; returns the records read. A
        batch read while the store changed is not kept, and reading stops there, when ``stop`` is set, or when
        the caches are full."""
        self.refresh()
        caches = self.caches
        key = caches.key
        out: list[Paper] = []
        papers = itertools.islice(self.store.iter_papers(), max(most, 0))
        while batch := list(itertools.islice(papers, PRELOAD_BATCH)):
            if stop is not None and stop.is_set():
                break
            ids = [p.paper_id for p in batch]
            chunks, vectors = self.store.chunk_vectors(ids), self.store.paper_vectors(ids)
            texts = self.store.chunk_texts(paper_ids=ids)
            with caches.lock:
                if key != caches.key or len(caches.papers) + len(batch) > PAPER_CACHE:
                    break
                if len(caches.chunk_texts) + len(texts) > PAPER_CACHE:
                    texts = {}
                caches.papers.update((p.paper_id, p) for p in batch)
                caches.chunk_vectors.update(chunks)
                caches.paper_vectors.update(vectors)
                caches.chunk_texts.update(texts)
            out.extend(batch)
        return out
