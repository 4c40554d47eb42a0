"""Hybrid retrieval: dense chunks from Chroma + BM25 papers, fused by reciprocal rank at paper level."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from vectorstore.embed import Embedder, get_embedder
from vectorstore.lexical import LexicalIndex
from vectorstore.pipeline import sync_lexical
from vectorstore.store import Store, read_only_snapshot, where_clause
from vectorstore.types import Paper

from .settings import Settings
from .types import Hit

log = logging.getLogger("askpapers")


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
        self._lexical_key: tuple[str, int] = ("", -1)
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Rebuild the derived BM25 index if the store changed, here or in another process.

        The check is cheap: the paper count and the revision marker every ingest bumps (two small requests).
        """
        with self._lock:
            key = (self.store.revision, self.store.count())
            if self._lexical is None or key != self._lexical_key or not self._lexical.path.exists():
                self._lexical = sync_lexical(self.store, self.settings.store)
                self._lexical_key = key

    @property
    def lexical(self) -> LexicalIndex:
        self.refresh()
        assert self._lexical is not None
        return self._lexical

    def embed(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)

    def dense(
        self, text: str, filters: dict[str, Any] | None = None, n: int | None = None
    ) -> dict[str, tuple[float, str]]:
        vec = self.embed(text)
        hits = self.store.query_chunks(vec, n or self.settings.retrieval.dense_candidates, where_clause(filters))
        return best_chunk_per_paper(hits)

    def candidates(
        self, query: str, filters: dict[str, Any] | None = None, phrases: list[str] | None = None
    ) -> list[Candidate]:
        """Every paper a retriever returned, best fused score first.

        Rankings fused: dense chunks (aggregated to papers), BM25 over the query's words, and, when the query
        names ``phrases`` (a topic and its spellings), BM25 over the papers that contain one of them.
        """
        r = self.settings.retrieval
        where_clause(filters)  # validates filter names before any work
        dense = self.dense(query, filters)
        lex = self.lexical.search(query, r.lexical_candidates, filters)
        dense_order = sorted(dense, key=lambda pid: -dense[pid][0])
        lex_order = [pid for pid, _ in lex]
        rankings = [dense_order, lex_order]
        if phrases:
            rankings.append([pid for pid, _ in self.lexical.phrase_search(phrases, r.lexical_candidates, filters)])
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
        return self.store.get_papers(ids)

    def search(
        self, query: str, k: int = 10, filters: dict[str, Any] | None = None, phrases: list[str] | None = None
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
