"""The index as the query path sees it, by role: small typed interfaces, and two implementations of them.

Retrievers, the matcher, the reranker and the answerers ask an index for what they need, through the role they
use: :class:`PaperReads` (records and their text data), :class:`VectorSearch` (embeddings and nearest chunks),
:class:`LexicalSearch` (BM25 and phrase search), :class:`LexicalStats` (the word and phrase counts the planner
reads questions with), each with :class:`Freshness` (one check of the store per question); :class:`Index` is all
of them. Two implementations, held to one contract (``tests/test_index_contract.py``):
:class:`rag.retrieve.chroma_index.PaperIndex` over Chroma and SQLite FTS5, and
:class:`rag.retrieve.memory_index.MemoryIndex` in memory (numpy vectors, a dict of papers), for tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.types import ChunkHit, Filters, Listed, Paper

CHUNKS_PER_PAPER = 50  # most chunks one abstract can have (a 2,000,000-character abstract has more; rare)


class Freshness(Protocol):
    """The store's revision, checked once per question."""

    def refresh(self) -> object:
        """Bring derived data up to date with the store, if it changed (here or in another process)."""

    def pinned(self) -> AbstractContextManager[None]:
        """One freshness check for every lookup inside (one question's), on this thread."""

    def carried(self) -> Callable[[], AbstractContextManager[None]]:
        """This thread's pin, for a worker thread running one of the question's lookups to hold (:meth:`pinned`
        there: the same revision without another check); a fresh pin when this thread holds none."""

    @property
    def seen_revision(self) -> str:
        """The revision at the last freshness check (no request to the store)."""

    @property
    def revision(self) -> str:
        """The store's revision now."""


class PaperReads(Freshness, Protocol):
    """Paper records by id, every paper, and the reranker's per-paper text data."""

    def papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        """The records of these papers (those that exist), in the order given."""

    def all_papers(self, most: int | None = None) -> list[Paper]:
        """Every paper, by title; or the first ``most`` the store yields, by title."""

    def count(self) -> int:
        """Papers in the store."""

    def doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        """The reranker's text data of these papers (those that exist)."""

    def preload(self, most: int, stop: threading.Event | None = None) -> list[Paper]:
        """Read up to ``most`` papers (records and vectors) ahead of the questions that need them; the records."""


class VectorSearch(Freshness, Protocol):
    """Embeddings and the chunks nearest to a text (cosine similarity, most similar first)."""

    @property
    def embedder(self) -> Embedder:
        """The model that embeds queries and texts (the one the papers were embedded with)."""

    def embed(self, text: str) -> np.ndarray:
        """The query's embedding."""

    def nearest_paper_ids(self, vector: np.ndarray, n: int, filters: Filters | None = None) -> list[str]:
        """The papers of the ``n`` chunks nearest to a vector, nearest first."""

    def nearest_chunks(self, text: str, n: int, filters: Filters | None = None) -> list[ChunkHit]:
        """The ``n`` chunks most similar to ``text``, most similar first."""

    def best_chunks(self, text: str, n: int, filters: Filters | None = None) -> dict[str, ChunkHit]:
        """Each paper among the ``n`` nearest chunks, with its most similar chunk."""

    def best_chunks_within(self, text: str, paper_ids: Sequence[str]) -> dict[str, ChunkHit]:
        """The most similar chunk of each of the given papers."""

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The papers' embeddings (the normalised mean of their chunks')."""

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Every chunk vector of each paper, rows in chunk order."""


class LexicalSearch(Freshness, Protocol):
    """BM25 over titles and abstracts (FTS5's ``bm25``, higher is better): words, phrases, facets."""

    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers with any of the query's content words: (paper_id, score), best first."""

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating one of the phrases (consecutive stemmed words), best first."""

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating a phrase of every facet, best first."""

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers holding every content word of one of the phrases anywhere, best first."""

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper :meth:`phrase_search` finds, unranked (a set that only needs its members is not scored)."""

    def all_words_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper :meth:`all_words_search` finds, unranked."""

    def surface_ids(self, queries: list[list[list[str]]], in_a_row: bool = True) -> set[str]:
        """Every paper whose words as written (no stems) meet one of the queries: each a list of slots, each slot
        the words that may fill it; with ``in_a_row``, consecutive (see :meth:`vectorstore.lexical.LexicalIndex.
        surface_ids`)."""

    def field_scores(self, query: str, paper_ids: Sequence[str]) -> dict[str, tuple[float, float, float]]:
        """BM25 of the query's words in each paper holding one: (title and abstract, title, abstract)."""


class LexicalStats(Freshness, Protocol):
    """Corpus statistics for reading questions: papers, word and phrase counts, the vocabulary, venues."""

    def size(self) -> int:
        """Papers in the corpus."""

    def word_df(self, words: Sequence[str]) -> dict[str, int]:
        """The document frequency of each word the corpus uses (words it never uses are left out)."""

    def words_with_stems(self, stems: Sequence[str]) -> list[tuple[str, int]]:
        """(word, document frequency) of the corpus words whose stem is one of ``stems``."""

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        """Every word used by at least ``min_df`` papers, with its document frequency."""

    def phrase_count(self, phrase: str) -> int:
        """Papers stating the phrase (consecutive stemmed words)."""

    def facet_count(self, facets: list[list[str]]) -> int:
        """Papers stating a phrase of every facet (0 when a facet has no words)."""

    def venues(self) -> list[str]:
        """The distinct venues of the papers, sorted."""

    def years(self) -> list[int]:
        """The distinct years of the papers, newest first."""

    def listing(self) -> list[Listed]:
        """Every paper's id, title (as shown), venue and year, without reading its record."""

    def sample_ids(self, n: int) -> list[str]:
        """The ids of ``n`` papers chosen by a hash of their ids (:func:`vectorstore.lexical.rowid_of`, smallest
        first): the same papers for the same store, whatever the order they came in; all of them when ``n`` is
        at least the corpus."""


class Index(PaperReads, VectorSearch, LexicalSearch, LexicalStats, Protocol):
    """Everything the query path reads: the four roles over one corpus."""


def best_chunk_per_paper(chunks: Sequence[ChunkHit]) -> dict[str, ChunkHit]:
    """Chunk hits aggregated to papers: each paper keeps its most similar chunk."""
    best: dict[str, ChunkHit] = {}
    for c in chunks:
        if c.paper_id not in best or c.similarity > best[c.paper_id].similarity:
            best[c.paper_id] = c
    return best
