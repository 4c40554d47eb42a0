"""The Chroma-backed index's caches, in one place: paper records, chunk and paper vectors, chunk texts and corpus
statistics, kept until the store's revision changes (:meth:`RevisionCaches.renew`), and recent query embeddings.

One lock guards them and the freshness check (:mod:`rag.retrieve.chroma.freshness`), as one lock did when they were
one class.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from askpapers.rag.retrieve.recent import Recent
from askpapers.vectorstore.types import Paper

T = TypeVar("T")
PAPER_CACHE = 20_000  # paper records kept in memory between questions (about 3 KB each)
QUERY_CACHE = 64  # query embeddings kept (1.5 KB each)
NEAREST_CACHE = 64  # recent nearest-chunk searches kept (ids and similarities: a few KB each)
STATS_CACHE = 20_000  # corpus statistics kept per store revision (word and phrase counts: a few dozen bytes each)


class RevisionCaches:
    """What the index read from the store, kept until the store changes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.papers: dict[str, Paper] = {}  # records read from the store, kept until the store changes
        self.key = ""  # the store revision the caches below hold values of
        self.chunk_vectors: dict[str, np.ndarray] = {}  # every chunk vector of a paper (for the reranker), likewise
        self.paper_vectors: dict[str, np.ndarray] = {}  # paper embeddings, likewise
        self.chunk_texts: dict[str, str] = {}  # chunk texts by chunk id, likewise
        self.queries: Recent[np.ndarray] = Recent(QUERY_CACHE)  # recent query embeddings (several parts embed one)
        # recent nearest-chunk searches (chunk ids and similarities), keyed with the store revision they were made at:
        # the fused search and the matcher of one question search the same text
        self.nearest: Recent[list[tuple[str, float]]] = Recent(NEAREST_CACHE)
        # corpus statistics (paper count, word and phrase counts, venues), kept until the store changes: the planner,
        # the matcher and the reranker ask for the same ones, within a question and across questions
        self.stats: Recent[object] = Recent(STATS_CACHE)

    def renew(self, key: str) -> None:
        """Empty the per-revision caches if the store's revision is no longer ``key`` (called holding the lock)."""
        if key != self.key:
            self.papers.clear()
            self.chunk_vectors.clear()
            self.paper_vectors.clear()
            self.chunk_texts.clear()
            self.stats.clear()
            self.nearest.clear()
            self.key = key

    def cached(
        self, cache: dict[str, T], ids: Sequence[str], fetch: Callable[[list[str]], dict[str, T]]
    ) -> dict[str, T]:
        """``ids``' entries of a per-revision cache (in the order given), fetching the missing ones into it."""
        wanted = list(dict.fromkeys(ids))
        found = {pid: v for pid in wanted if (v := cache.get(pid)) is not None}
        missing = [pid for pid in wanted if pid not in found]
        if missing:
            fetched = fetch(missing)
            found.update(fetched)
            with self.lock:
                if len(cache) + len(fetched) > PAPER_CACHE:
                    cache.clear()
                cache.update(fetched)
        return {pid: found[pid] for pid in wanted if pid in found}
