"""Search results: the papers a search finds for a question as it was read, one per paper, best first, each with
the sentence it shows (its snippet) and whether it only comes nearest (its "weak" flag; see :mod:`rag.decide.snippets`).

The facade reads and validates the request, then hands the reading here (:func:`search_hits`).
"""

from __future__ import annotations

from askpapers.rag.decide import snippets
from askpapers.rag.read.query import core_text
from askpapers.rag.retrieve.index import PaperReads
from askpapers.rag.retrieve.retrieval import FusionRetriever, Query
from askpapers.rag.types import Hit, QueryPlan
from askpapers.vectorstore.text import content_stems
from askpapers.vectorstore.types import Filters


def search_query(q: QueryPlan) -> Query:
    """What search looks for, from how the question was read: for "Which papers use X?", X as typed (without its
    wrapping) and the phrases that spell it; otherwise the question's searched words."""
    if q.kind == "list" and q.facets:
        required = [f for f in q.facets if not f.optional]
        return Query(core_text(q), tuple(q.alternatives), tuple(tuple(f.all_spellings()) for f in required))
    return Query(q.searched)


def search_hits(
    q: QueryPlan, n: int, filters: Filters, index: PaperReads, retriever: FusionRetriever, dense_alone: float
) -> list[Hit]:
    """The ``n`` papers that best match the question read as ``q``, with their snippets and weak flags (a paper is
    weak below the cosine ``dense_alone``)."""
    cands = retriever.retrieve(search_query(q), filters)
    papers = index.papers([c.paper_id for c in cands[: n * 2]])
    # (a paper whose chunks were written but whose record was never committed is skipped)
    terms = content_stems(q.searched)
    facets = q.facets if q.kind == "list" else []
    topics = [f.all_spellings() for f in facets if not f.optional]  # what a paper must state to match
    phrases = [s for f in facets for s in f.all_spellings()]
    ranker = retriever.ranker  # (its per-paper data holds each sentence's stems already)
    hits = []
    for c in cands:
        if (p := papers.get(c.paper_id)) is None:
            continue
        sents = ranker.sentence_stems(p.paper_id) if ranker is not None else None
        snippet = snippets.best_snippet(p, terms, phrases, c.snippet, sents)
        hit = Hit.from_paper(p, c.score, snippet, c.similarity)
        hit.weak = snippets.is_weak(p, terms, topics, c.similarity, dense_alone)
        hits.append(hit)
        if len(hits) == n:  # (the rest would be cut: no snippets for them)
            break
    return hits
