"""Hybrid retrieval: dense chunks from Chroma + BM25 papers, fused by reciprocal rank at paper level."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from vectorstore.embed import Embedder, get_embedder
from vectorstore.lexical import LexicalIndex
from vectorstore.pipeline import sync_lexical
from vectorstore.store import Store, read_only_snapshot, where_clause
from vectorstore.types import Filters, Paper

from .settings import Settings
from .types import Hit

log = logging.getLogger("askpapers")
T = TypeVar("T")
PAPER_CACHE = 20_000  # paper records kept in memory between questions (about 3 KB each)


@dataclass
class Candidate:
    """A paper with the evidence each retriever had for it."""

    paper_id: str
    score: float = 0.0  # fused (RRF) score
    similarity: float = 0.0  # best chunk cosine similarity (0 when dense did not return it)
    snippet: str = ""
    bm25: float = 0.0
    dense_rank: int | None = None
    lexical_rank: int | None = None


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over the rankings a paper appears in."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
    return scores


def best_chunk_per_paper(chunks: list[tuple[str, str, float, int]]) -> dict[str, tuple[float, str]]:
    """Aggregate chunk hits to papers: each paper keeps its most similar chunk (input is sorted)."""
    best: dict[str, tuple[float, str]] = {}
    for pid, text, sim, _pos in chunks:
        if pid not in best or sim > best[pid][0]:
            best[pid] = (sim, text)
    return best


class Retriever:
    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.embedder = embedder or get_embedder(settings.store.embed_threads)
        snapshot = read_only_snapshot(settings.store)
        self.read_only = snapshot is not None
        if snapshot is not None:
            log.warning(
                "askpapers: the data directory %s is read-only; answering from a copy of it (ingest is disabled)",
                settings.store.data_dir,
            )
            self.settings = settings.model_copy(update={"store": snapshot})
        self.store = Store(self.settings.store, self.embedder.embedder_id, self.embedder.dim)
        self._lexical: LexicalIndex | None = None
        self._lexical_key = ""
        self._lock = threading.Lock()
        # Paper records read from the store, kept until the store changes (checked by refresh()).
        self._papers: dict[str, Paper] = {}
        self._papers_key = ""

    def refresh(self) -> LexicalIndex:
        """The BM25 index, rebuilt first if the store changed, here or in another process.

        The check is one small request: the revision marker, which an ingest changes after every batch it
        commits. A change also empties the cache of paper records.
        """
        with self._lock:
            key = self.store.revision
            if self._lexical is None or key != self._lexical_key or not self._lexical.path.exists():
                self._lexical = sync_lexical(self.store, self.settings.store)
                self._lexical_key = key
            if key != self._papers_key:
                self._papers.clear()
                self._papers_key = key
            return self._lexical

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
                self._lexical = sync_lexical(self.store, self.settings.store, force=True)
                self._lexical_key = self.store.revision
                index = self._lexical
            return call(index)

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index, up to date with the store (see :meth:`refresh`)."""
        return self.refresh()

    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """BM25 over the query's words: (paper_id, score), best first."""
        return self._lexical_call(lambda index: index.search(query, n, filters))

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating one of the phrases (consecutive stemmed words), best BM25 first."""
        return self._lexical_call(lambda index: index.phrase_search(phrases, n, filters))

    def embed(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)

    def dense(self, text: str, filters: Filters | None = None, n: int | None = None) -> dict[str, tuple[float, str]]:
        vec = self.embed(text)
        hits = self.store.query_chunks(vec, n or self.settings.retrieval.dense_candidates, where_clause(filters))
        return best_chunk_per_paper(hits)

    def candidates(
        self, query: str, filters: Filters | None = None, phrases: list[str] | None = None
    ) -> list[Candidate]:
        """Every paper a retriever returned, best fused score first.

        Rankings fused: dense chunks (aggregated to papers), BM25 over the query's words, and, when the query
        names ``phrases`` (a topic and its spellings), BM25 over the papers that contain one of them.
        """
        r = self.settings.retrieval
        dense = self.dense(query, filters)
        lex, by_phrase = self._lexical_call(  # one freshness check for both
            lambda index: (
                index.search(query, r.lexical_candidates, filters),
                index.phrase_search(phrases, r.lexical_candidates, filters) if phrases else [],
            )
        )
        dense_order = sorted(dense, key=lambda pid: -dense[pid][0])
        lex_order = [pid for pid, _ in lex]
        rankings = [dense_order, lex_order]
        if phrases:
            rankings.append([pid for pid, _ in by_phrase])
        fused = rrf(rankings, r.rrf_k)
        out = []
        lex_scores = dict(lex)
        dense_rank = {pid: i for i, pid in enumerate(dense_order, start=1)}
        lex_rank = {pid: i for i, pid in enumerate(lex_order, start=1)}
        for pid, score in fused.items():
            c = Candidate(pid, score=score, bm25=lex_scores.get(pid, 0.0))
            if pid in dense:
                c.similarity, c.snippet = dense[pid]
                c.dense_rank = dense_rank[pid]
            c.lexical_rank = lex_rank.get(pid)
            out.append(c)
        out.sort(key=lambda c: (-c.score, -c.similarity))
        return out

    def papers(self, ids: list[str]) -> dict[str, Paper]:
        """The stored records of these papers (those that exist), from the cache where possible."""
        found = {pid: p for pid in dict.fromkeys(ids) if (p := self._papers.get(pid)) is not None}
        missing = [pid for pid in dict.fromkeys(ids) if pid not in found]
        if missing:
            fetched = self.store.get_papers(missing)
            found.update(fetched)
            with self._lock:
                if len(self._papers) + len(fetched) > PAPER_CACHE:
                    self._papers.clear()
                self._papers.update(fetched)
        return {pid: found[pid] for pid in ids if pid in found}

    def search(
        self, query: str, k: int = 10, filters: Filters | None = None, phrases: list[str] | None = None
    ) -> list[Hit]:
        cands = self.candidates(query, filters, phrases)
        papers = self.papers([c.paper_id for c in cands[: k * 2]])
        hits = []
        for c in cands:
            p = papers.get(c.paper_id)
            if p is None:  # chunks of a paper whose record was never committed
                continue
            hits.append(to_hit(p, c))
            if len(hits) >= k:
                break
        return hits


def to_hit(p: Paper, c: Candidate) -> Hit:
    snippet = c.snippet or (p.abstract[:300])
    return Hit(
        paper_id=p.paper_id,
        title=p.title,
        score=round(c.score, 6),
        snippet=snippet,
        abstract=p.abstract,
        venue=p.venue,
        year=p.year,
        url=p.url,
        code_urls=list(p.code_urls),
        similarity=round(c.similarity, 4),
    )
