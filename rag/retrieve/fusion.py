"""Reciprocal rank fusion: the one formula the retrievers' fusion (:mod:`rag.retrieve.retrieval`) and the reranker's
pool (:mod:`rag.retrieve.rerank`) share, in a module of its own so that neither imports the other back."""

from __future__ import annotations


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over the rankings a paper appears in."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
    return scores
