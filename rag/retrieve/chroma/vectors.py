"""Vector search in Chroma: query embeddings (the recent ones kept), the nearest chunks and papers, and the stored
vectors of papers and chunks (cached per revision) (:class:`~rag.retrieve.index.VectorSearch`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from askpapers.rag.retrieve.chroma.freshness import FreshRole, StoreFreshness
from askpapers.rag.retrieve.index import CHUNKS_PER_PAPER, best_chunk_per_paper
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.records import where_clause
from askpapers.vectorstore.types import ChunkHit, Filters


class ChromaVectors(FreshRole):
    """Embeddings and the chunks nearest to a text, over the store's vectors."""

    def __init__(self, fresh: StoreFreshness, embedder: Embedder) -> None:
        super().__init__(fresh)
        self.embedder = embedder

    def embed(self, text: str) -> np.ndarray:
        """The query's embedding; the last few are kept, since the retrievers, the reranker and the matcher of one
        question embed the same text."""
        vec = self.caches.queries.get(text)
        if vec is None:
            vec = self.embedder.embed_query(text)
            self.caches.queries.put(text, vec)
        return vec

    def nearest_paper_ids(self, vector: np.ndarray, n: int, filters: Filters | None = None) -> list[str]:
        """The papers of the ``n`` chunks nearest to a vector, nearest first."""
        return self.store.nearest_paper_ids(vector, n, where_clause(filters))

    def nearest_chunks(self, text: str, n: int, filters: Filters | None = None) -> list[ChunkHit]:
        """The ``n`` chunks most similar to ``text``, most similar first (the search asks Chroma for their ids and
        distances, kept for a few recent searches at the store's revision; their texts come from a per-revision
        cache). A chunk's id is ``<paper id>:<position>``."""
        where = where_clause(filters)
        self.refresh()  # (a changed store empties the cache first)
        key = f"{self.seen_revision}\0{n}\0{json.dumps(where, sort_keys=True)}\0{text}"
        found = self.caches.nearest.get(key)
        if found is None:  # (the same text searched again in one question, by the matcher: the same chunks)
            found = self.store.nearest_chunk_ids(self.embed(text), n, where)
            self.caches.nearest.put(key, found)
        texts = self.caches.cached(self.caches.chunk_texts, [cid for cid, _ in found], self._chunk_texts)
        hits = []
        for cid, similarity in found:
            if (chunk := texts.get(cid)) is not None:  # (a chunk deleted since the query is left out)
                pid, _, pos = cid.rpartition(":")
                hits.append(ChunkHit(pid, chunk, similarity, int(pos)))
        return hits

    def _chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """Chunk texts cut from the abstracts in the BM25 index by their recorded offsets, and from Chroma those of
        papers stored without offsets."""
        found = self.fresh.call(lambda index: index.chunk_texts(chunk_ids))
        missing = [cid for cid in chunk_ids if cid not in found]
        return {**found, **self.store.chunk_texts(missing)} if missing else found

    def best_chunks(self, text: str, n: int, filters: Filters | None = None) -> dict[str, ChunkHit]:
        """Each paper among the ``n`` nearest chunks, with its most similar chunk."""
        return best_chunk_per_paper(self.nearest_chunks(text, n, filters))

    def best_chunks_within(self, text: str, paper_ids: Sequence[str]) -> dict[str, ChunkHit]:
        """The most similar chunk of each of the given papers."""
        if not paper_ids:
            return {}
        where = {"paper_id": {"$in": list(paper_ids)}}
        return best_chunk_per_paper(self.store.query_chunks(self.embed(text), CHUNKS_PER_PAPER * len(paper_ids), where))

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The papers' embeddings (the mean of their chunks), from the cache where possible."""
        return self.caches.cached(self.caches.paper_vectors, ids, self._paper_vectors)

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Every chunk vector of each paper, from the cache where possible."""
        return self.caches.cached(self.caches.chunk_vectors, ids, self._chunk_vectors)

    def _paper_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Paper vectors from the BM25 index (which keeps the store's, as they were when it indexed each paper),
        and from Chroma those it does not hold."""
        return self._held(ids, 0, self.store.paper_vectors)

    def _chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Chunk vectors as :meth:`_paper_vectors` reads them (papers without chunks are left out, as Chroma does)."""
        return self._held(ids, 1, self.store.chunk_vectors)

    def _held(
        self, ids: Sequence[str], which: int, from_store: Callable[[Sequence[str]], dict[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        """Part ``which`` (0: the paper's vector, 1: its chunks') of the vectors the BM25 index holds for these
        papers, and ``from_store`` for those it holds none for."""
        held = self.fresh.call(lambda index: index.vectors(ids))
        found = {pid: pair[which] for pid, pair in held.items() if len(pair[which])}
        missing = [pid for pid in ids if pid not in held]
        return {**found, **from_store(missing)} if missing else found
