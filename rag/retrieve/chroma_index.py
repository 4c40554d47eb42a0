"""The store as the query path sees it: paper records, nearest chunks, BM25 and phrase search, kept fresh.

:class:`PaperIndex` is the one object that touches Chroma and the BM25 index on the query path, the
implementation of :class:`rag.retrieve.index.Index` over them. Retrievers, the matcher and the answerers ask it for what
they need, through the interfaces of :mod:`rag.retrieve.index`; none of them reaches the store itself.

It holds no logic of its own: it opens the store and composes the roles of :mod:`rag.retrieve.chroma`, each a small
class, and delegates to them: :attr:`PaperIndex.records` (:class:`~rag.retrieve.chroma.papers.ChromaPapers`, paper
reads), :attr:`PaperIndex.dense` (:class:`~rag.retrieve.chroma.vectors.ChromaVectors`, vector search),
:attr:`PaperIndex.bm25` (:class:`~rag.retrieve.chroma.lexical.ChromaLexical`, BM25 search) and
:attr:`PaperIndex.stats` (:class:`~rag.retrieve.chroma.lexical.ChromaStats`, corpus statistics), over one
:class:`~rag.retrieve.chroma.freshness.StoreFreshness` (one check of the store per question, inside
:meth:`PaperIndex.pinned`) and one :class:`~rag.retrieve.chroma.caches.RevisionCaches`. Each role is itself an
implementation of its interface, for a caller that needs only that one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np

from askpapers.rag.retrieve.chroma.caches import RevisionCaches
from askpapers.rag.retrieve.chroma.freshness import FreshRole, StoreFreshness
from askpapers.rag.retrieve.chroma.lexical import ChromaLexical, ChromaStats
from askpapers.rag.retrieve.chroma.papers import ChromaPapers
from askpapers.rag.retrieve.chroma.vectors import ChromaVectors
from askpapers.rag.retrieve.index import Index, LexicalSearch, LexicalStats, PaperReads, VectorSearch
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.lexical import LexicalIndex
from askpapers.vectorstore.store import Store, read_only_snapshot
from askpapers.vectorstore.types import ChunkHit, Filters, Listed, Paper

log = logging.getLogger("askpapers")


class PaperIndex(FreshRole):
    """Chroma (the system of record) and the derived BM25 index, opened for reading and searching; its freshness
    (refresh, pinned, the revisions) is that of the :class:`StoreFreshness` its roles share (:class:`FreshRole`)."""

    def __init__(self, settings: StoreSettings, embedder: Embedder) -> None:
        self.embedder = embedder
        snapshot = read_only_snapshot(settings)
        self.read_only = snapshot is not None
        if snapshot is not None:
            log.warning(
                "askpapers: the data directory %s is read-only; answering from a copy of it (ingest is disabled)",
                settings.data_dir,
            )
            settings = snapshot
        self.settings = settings
        super().__init__(
            StoreFreshness(Store(settings, embedder.embedder_id, embedder.dim), settings, RevisionCaches())
        )
        self.records = ChromaPapers(self.fresh)
        self.dense = ChromaVectors(self.fresh, embedder)
        self.bm25 = ChromaLexical(self.fresh)
        self.stats = ChromaStats(self.fresh)

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index, up to date with the store."""
        return self.fresh.refresh()

    # -- paper reads: ChromaPapers ---------------------------------------------------------------------------
    def papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        return self.records.papers(ids)

    def all_papers(self, most: int | None = None) -> list[Paper]:
        return self.records.all_papers(most)

    def count(self) -> int:
        return self.records.count()

    def doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        return self.records.doc_texts(ids)

    def preload(self, most: int, stop: threading.Event | None = None) -> list[Paper]:
        return self.records.preload(most, stop)

    # -- vector search: ChromaVectors ------------------------------------------------------------------------
    def embed(self, text: str) -> np.ndarray:
        return self.dense.embed(text)

    def nearest_paper_ids(self, vector: np.ndarray, n: int, filters: Filters | None = None) -> list[str]:
        return self.dense.nearest_paper_ids(vector, n, filters)

    def nearest_chunks(self, text: str, n: int, filters: Filters | None = None) -> list[ChunkHit]:
        return self.dense.nearest_chunks(text, n, filters)

    def best_chunks(self, text: str, n: int, filters: Filters | None = None) -> dict[str, ChunkHit]:
        return self.dense.best_chunks(text, n, filters)

    def best_chunks_within(self, text: str, paper_ids: Sequence[str]) -> dict[str, ChunkHit]:
        return self.dense.best_chunks_within(text, paper_ids)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.dense.vectors(ids)

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.dense.chunk_vectors(ids)

    # -- BM25 search: ChromaLexical --------------------------------------------------------------------------
    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self.bm25.lexical_search(query, n, filters)

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self.bm25.phrase_search(phrases, n, filters)

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self.bm25.facet_search(facets, n, filters)

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self.bm25.all_words_search(phrases, n, filters)

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        return self.bm25.phrase_ids(phrases, filters)

    def all_words_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        return self.bm25.all_words_ids(phrases, filters)

    def surface_ids(self, queries: list[list[list[str]]], in_a_row: bool = True) -> set[str]:
        return self.bm25.surface_ids(queries, in_a_row)

    def field_scores(self, query: str, paper_ids: Sequence[str]) -> dict[str, tuple[float, float, float]]:
        return self.bm25.field_scores(query, paper_ids)

    # -- corpus statistics: ChromaStats ----------------------------------------------------------------------
    def size(self) -> int:
        return self.stats.size()

    def word_df(self, words: Sequence[str]) -> dict[str, int]:
        return self.stats.word_df(words)

    def words_with_stems(self, stems: Sequence[str]) -> list[tuple[str, int]]:
        return self.stats.words_with_stems(stems)

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        return self.stats.vocabulary(min_df)

    def phrase_count(self, phrase: str) -> int:
        return self.stats.phrase_count(phrase)

    def facet_count(self, facets: list[list[str]]) -> int:
        return self.stats.facet_count(facets)

    def venues(self) -> list[str]:
        return self.stats.venues()

    def years(self) -> list[int]:
        return self.stats.years()

    def listing(self) -> list[Listed]:
        return self.stats.listing()

    def sample_ids(self, n: int) -> list[str]:
        return self.stats.sample_ids(n)


def _roles_are_interfaces(index: PaperIndex) -> tuple[Index, PaperReads, VectorSearch, LexicalSearch, LexicalStats]:
    """(For the type checker: the index is an :class:`~rag.retrieve.index.Index`, and each role its interface.)"""
    return index, index.records, index.dense, index.bm25, index.stats
