"""The store as the query path sees it: paper records, nearest chunks, BM25 and phrase search, kept fresh.

:class:`PaperIndex` is the one object that touches Chroma and the BM25 index on the query path, the
implementation of :class:`rag.retrieve.index.Index` over them. Retrievers, the matcher and the answerers ask it for what
they need, through the interfaces of :mod:`rag.retrieve.index`; none of them reaches the store itself.

Freshness is one small request per question: the store's revision marker, which an ingest changes after every
batch it commits. A change brings the BM25 index up to date and empties the cache of paper records. Inside
:meth:`PaperIndex.pinned` the check is made once for all the lookups of one question.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

from askpapers.rag.retrieve.index import CHUNKS_PER_PAPER, best_chunk_per_paper
from askpapers.rag.retrieve.recent import Recent
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.lexical import LexicalIndex, sync_lexical
from askpapers.vectorstore.records import where_clause
from askpapers.vectorstore.store import Store, read_only_snapshot
from askpapers.vectorstore.types import ChunkHit, Filters, Listed, Paper

log = logging.getLogger("askpapers")
T = TypeVar("T")
PAPER_CACHE = 20_000  # paper records kept in memory between questions (about 3 KB each)
QUERY_CACHE = 64  # query embeddings kept (1.5 KB each)
STATS_CACHE = 20_000  # corpus statistics kept per store revision (word and phrase counts: a few dozen bytes each)
PRELOAD_BATCH = 500  # papers whose vectors one request of a warm-up reads


class PaperIndex:
    """Chroma (the system of record) and the derived BM25 index, opened for reading and searching."""

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
        self.store = Store(settings, embedder.embedder_id, embedder.dim)
        self._lexical: LexicalIndex | None = None
        self._lexical_key = ""
        self._lock = threading.Lock()
        self._papers: dict[str, Paper] = {}  # records read from the store, kept until the store changes
        self._papers_key = ""
        self._chunk_vectors: dict[str, np.ndarray] = {}  # every chunk vector of a paper (for the reranker), likewise
        self._paper_vectors: dict[str, np.ndarray] = {}  # paper embeddings, likewise
        self._chunk_texts: dict[str, str] = {}  # chunk texts by chunk id, likewise
        self._queries: Recent[np.ndarray] = Recent(QUERY_CACHE)  # recent query embeddings (several parts embed one)
        # corpus statistics (paper count, word and phrase counts, venues), kept until the store changes: the planner,
        # the matcher and the reranker ask for the same ones, within a question and across questions
        self._stats: Recent[object] = Recent(STATS_CACHE)
        self._pinned = threading.local()

    # -- freshness ---------------------------------------------------------------------------------------
    def refresh(self) -> LexicalIndex:
        """The BM25 index, brought up to date first if the store changed, here or in another process."""
        pinned: LexicalIndex | None = getattr(self._pinned, "index", None)
        if pinned is not None:
            return pinned
        with self._lock:
            key = self.store.revision
            if self._lexical is None or key != self._lexical_key or not self._lexical.path.exists():
                self._lexical = sync_lexical(self.store, self.settings)
                self._lexical_key = key
            if key != self._papers_key:
                self._papers.clear()
                self._chunk_vectors.clear()
                self._paper_vectors.clear()
                self._chunk_texts.clear()
                self._stats.clear()
                self._papers_key = key
            return self._lexical

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """One freshness check for every lookup inside (one question's), on this thread."""
        if getattr(self._pinned, "index", None) is not None:
            yield
            return
        self._pinned.index = self.refresh()
        try:
            yield
        finally:
            self._pinned.index = None

    @property
    def seen_revision(self) -> str:
        """The store revision at the last freshness check (no request to the store)."""
        return self._lexical_key

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index, up to date with the store."""
        return self.refresh()

    def _lexical_call(self, call: Callable[[LexicalIndex], T]) -> T:
        """Run ``call`` on the fresh BM25 index; a damaged index file is rebuilt from the store, then retried.

        The index is a cache: if its file is overwritten or corrupted while the app runs, the next question
        rebuilds it instead of failing until another process does.
        """
        index = self.refresh()
        try:
            return call(index)
        except sqlite3.DatabaseError as e:
            log.warning("askpapers: the BM25 index %s is damaged (%s); rebuilding it from the store", index.path, e)
            with self._lock:
                self._lexical = sync_lexical(self.store, self.settings, force=True)
                self._lexical_key = self.store.revision
                index = self._lexical
            if getattr(self._pinned, "index", None) is not None:
                self._pinned.index = index
            return call(index)

    # -- search ------------------------------------------------------------------------------------------
    def embed(self, text: str) -> np.ndarray:
        """The query's embedding; the last few are kept, since the retrievers, the reranker and the matcher of one
        question embed the same text."""
        vec = self._queries.get(text)
        if vec is None:
            vec = self.embedder.embed_query(text)
            self._queries.put(text, vec)
        return vec

    def nearest_paper_ids(self, vector: np.ndarray, n: int, filters: Filters | None = None) -> list[str]:
        """The papers of the ``n`` chunks nearest to a vector, nearest first."""
        return self.store.nearest_paper_ids(vector, n, where_clause(filters))

    def field_scores(self, query: str, paper_ids: Sequence[str]) -> dict[str, tuple[float, float, float]]:
        """BM25 of the query's words in each paper: (title and abstract, title, abstract)."""
        return self._lexical_call(lambda index: index.field_scores(query, list(paper_ids)))

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Every chunk vector of each paper, from the cache where possible."""
        return self._cached(self._chunk_vectors, ids, self.store.chunk_vectors)

    def nearest_chunks(self, text: str, n: int, filters: Filters | None = None) -> list[ChunkHit]:
        """The ``n`` chunks most similar to ``text``, most similar first (the search asks Chroma for their ids and
        distances; their texts come from a per-revision cache). A chunk's id is ``<paper id>:<position>``."""
        found = self.store.nearest_chunk_ids(self.embed(text), n, where_clause(filters))
        texts = self._cached(self._chunk_texts, [cid for cid, _ in found], self.store.chunk_texts)
        hits = []
        for cid, similarity in found:
            if (chunk := texts.get(cid)) is not None:  # (a chunk deleted since the query is left out)
                pid, _, pos = cid.rpartition(":")
                hits.append(ChunkHit(pid, chunk, similarity, int(pos)))
        return hits

    def best_chunks(self, text: str, n: int, filters: Filters | None = None) -> dict[str, ChunkHit]:
        """Each paper among the ``n`` nearest chunks, with its most similar chunk."""
        return best_chunk_per_paper(self.nearest_chunks(text, n, filters))

    def best_chunks_within(self, text: str, paper_ids: Sequence[str]) -> dict[str, ChunkHit]:
        """The most similar chunk of each of the given papers."""
        if not paper_ids:
            return {}
        where = {"paper_id": {"$in": list(paper_ids)}}
        return best_chunk_per_paper(self.store.query_chunks(self.embed(text), CHUNKS_PER_PAPER * len(paper_ids), where))

    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """BM25 over the query's words: (paper_id, score), best first."""
        return self._lexical_call(lambda index: index.search(query, n, filters))

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating one of the phrases (consecutive stemmed words), best BM25 first."""
        return self._lexical_call(lambda index: index.phrase_search(phrases, n, filters))

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating a phrase of every facet, best BM25 first."""
        return self._lexical_call(lambda index: index.facet_search(facets, n, filters))

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers holding every content word of one of the phrases anywhere, best BM25 first."""
        return self._lexical_call(lambda index: index.all_words_search(phrases, n, filters))

    def doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        """The reranker's per-paper text data, as the BM25 index stored it when the papers were indexed."""
        return self._lexical_call(lambda index: index.doc_texts(ids))

    # -- the vocabulary (for reading questions) ------------------------------------------------------------------
    def _stat(self, key: str, compute: Callable[[LexicalIndex], T]) -> T:
        """A corpus statistic, computed once per store revision."""
        self.refresh()  # (a changed store empties the cache first)
        key = f"{self.seen_revision}\0{key}"  # (and a value computed as it changed is never read at the next one)
        found = self._stats.get(key)
        if found is None:
            found = self._lexical_call(compute)
            self._stats.put(key, found)
        return found  # type: ignore[return-value]

    def word_df(self, words: Sequence[str]) -> dict[str, int]:
        """The document frequency of each word the corpus uses (words it never uses are left out); one query for
        those not counted yet at this revision."""
        self.refresh()
        prefix = f"{self.seen_revision}\0df\0"
        wanted = list(dict.fromkeys(words))
        known = {w: self._stats.get(prefix + w) for w in wanted}
        missing = [w for w, n in known.items() if n is None]
        if missing:
            found = self._lexical_call(lambda index: index.word_df(missing))
            for w in missing:
                known[w] = found.get(w, 0)
                self._stats.put(prefix + w, known[w])
        return {w: n for w, n in known.items() if n}  # type: ignore[misc]

    def words_with_stems(self, stems: Sequence[str]) -> list[tuple[str, int]]:
        key = "stems\0" + "\0".join(sorted(set(stems)))
        return self._stat(key, lambda index: index.words_with_stems(stems))

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        return self._lexical_call(lambda index: index.vocabulary(min_df))

    def phrase_count(self, phrase: str) -> int:
        """Papers stating the phrase (an FTS5 count, not a list of ids)."""
        return self._stat("phrase\0" + phrase, lambda index: index.phrase_count(phrase))

    def facet_count(self, facets: list[list[str]]) -> int:
        """Papers stating a phrase of every facet (an FTS5 count)."""
        key = "facets\0" + "\1".join("\0".join(f) for f in facets)
        return self._stat(key, lambda index: index.facet_count(facets))

    def venues(self) -> list[str]:
        return self._stat("venues", lambda index: index.venues())

    def years(self) -> list[int]:
        return self._stat("years", lambda index: index.years())

    def listing(self) -> list[Listed]:
        """Every paper's id, title, venue and year, from the BM25 index (no record is read from the store)."""
        return self._lexical_call(lambda index: index.listing())

    def sample_ids(self, n: int) -> list[str]:
        """``n`` papers' ids chosen by a hash of the id, from the BM25 index's row ids (no record is read)."""
        return self._lexical_call(lambda index: index.sample_ids(n))

    def size(self) -> int:
        """Papers in the BM25 index (the store's count, without a request to Chroma; once per revision)."""
        return self._stat("size", lambda index: index.size())

    # -- records -----------------------------------------------------------------------------------------
    def papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        """The stored records of these papers (those that exist), from the cache where possible."""
        return self._cached(self._papers, ids, self.store.get_papers)

    def _cached(
        self, cache: dict[str, T], ids: Sequence[str], fetch: Callable[[list[str]], dict[str, T]]
    ) -> dict[str, T]:
        """``ids``' entries of a per-revision cache (in the order given), fetching the missing ones into it."""
        wanted = list(dict.fromkeys(ids))
        found = {pid: v for pid in wanted if (v := cache.get(pid)) is not None}
        missing = [pid for pid in wanted if pid not in found]
        if missing:
            fetched = fetch(missing)
            found.update(fetched)
            with self._lock:
                if len(cache) + len(fetched) > PAPER_CACHE:
                    cache.clear()
                cache.update(fetched)
        return {pid: found[pid] for pid in wanted if pid in found}

    def all_papers(self, most: int | None = None) -> list[Paper]:
        """Every paper in the store, by title; or the first ``most`` the store yields, by title (the same list
        when the store holds no more), without reading the rest."""
        return sorted(itertools.islice(self.store.iter_papers(), most), key=lambda p: p.title.lower())

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The papers' embeddings (the mean of their chunks), from the cache where possible."""
        return self._cached(self._paper_vectors, ids, self.store.paper_vectors)

    def preload(self, most: int, stop: threading.Event | None = None) -> list[Paper]:
        """Read the records, paper vectors, chunk vectors and chunk texts of up to ``most`` papers into the caches,
        ahead of the questions that need them (the warm-up), a batch per request; returns the records read. A
        batch read while the store changed is not kept, and reading stops there, when ``stop`` is set, or when
        the caches are full."""
        self.refresh()
        key = self._papers_key
        out: list[Paper] = []
        papers = itertools.islice(self.store.iter_papers(), max(most, 0))
        while batch := list(itertools.islice(papers, PRELOAD_BATCH)):
            if stop is not None and stop.is_set():
                break
            ids = [p.paper_id for p in batch]
            chunks, vectors = self.store.chunk_vectors(ids), self.store.paper_vectors(ids)
            texts = self.store.chunk_texts(paper_ids=ids)
            with self._lock:
                if key != self._papers_key or len(self._papers) + len(batch) > PAPER_CACHE:
                    break
                if len(self._chunk_texts) + len(texts) > PAPER_CACHE:
                    texts = {}
                self._papers.update((p.paper_id, p) for p in batch)
                self._chunk_vectors.update(chunks)
                self._paper_vectors.update(vectors)
                self._chunk_texts.update(texts)
            out.extend(batch)
        return out

    def count(self) -> int:
        return self.store.count()

    @property
    def revision(self) -> str:
        return self.store.revision
