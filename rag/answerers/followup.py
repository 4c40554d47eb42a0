"""Follow-ups: the papers of the previous answer, worked out once per question.

An assistant message may carry the ids of the papers it cited (the web app, ``askpapers chat`` and API callers
that pass them back): then those are the previous answer's papers. When a caller sends plain-text history
instead, the earlier questions are answered again, oldest first and each once (a follow-up among them narrows
the one before it), and the result is cached until the store changes. No recursion.

:class:`FollowUps` is given the parts it needs (the index, the facade's question reader, the extractive answerer)
and the history; it never calls back into the facade.

A follow-up is read together with the questions it narrows (:func:`context_of`): "Which papers use diffusion
models?" then "Which of those are about generating images?" is matched as both facets at once within the previous
answer, so the two turns find what the one question "diffusion models for generating images" finds among those
papers (a facet beside another may be met by similarity, a lone one only by a stated spelling); the papers beyond the
previous answer that this reading meets are listed after them, and the answer says so
(:meth:`~rag.answerers.extractive.ExtractiveAnswerer.matches`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache

from askpapers.rag.answerers.base import Answerer, Request
from askpapers.rag.read.inputs import missing_ids
from askpapers.rag.read.reader import QueryReader
from askpapers.rag.retrieve.index import PaperReads
from askpapers.rag.types import Facet, Message, QueryPlan
from askpapers.vectorstore.types import Filters

CHAIN = 5  # earlier questions re-derived at most (a longer chain of follow-ups starts from the whole corpus)
CACHE = 256  # re-derived answers kept


def previous_questions(history: Sequence[Message]) -> list[str]:
    """The user's earlier questions, oldest first."""
    return [m.content for m in history if m.role == "user" and m.content.strip()]


def context_of(read: Callable[[str], QueryPlan], questions: Sequence[str], beside: Sequence[Facet] = ()) -> list[Facet]:
    """The required facets the previous answer's papers were found for: those of the last of ``questions`` and,
    while it was a follow-up, of the questions it narrowed (at most :data:`CHAIN`); each once, and none that the
    follow-up asks again (``beside``, its own facets). None after a factoid."""
    out: list[Facet] = []
    for question in reversed(questions[-CHAIN:]):
        plan = read(question)
        if plan.kind != "list":
            break
        out = [f for f in plan.facets if not f.optional] + out
        if not plan.followup:
            break
    seen = {_named(f) for f in beside}
    kept = []
    for f in out:
        if _named(f) not in seen:
            seen.add(_named(f))
            kept.append(f)
    return kept


def _named(facet: Facet) -> tuple[str, ...]:
    return tuple(a.lower() for a in facet.alternatives)


class FollowUps:
    """The previous answer's papers, from the ids the history carries or by answering its questions again (with
    ``answerer``, the extractive one, reading them with ``reader`` over ``index``)."""

    def __init__(self, index: PaperReads, reader: QueryReader, answerer: Answerer) -> None:
        self._index = index
        self._reader = reader
        self._answerer = answerer
        self._cache: OrderedDict[tuple[object, ...], list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def _read(self, question: str) -> QueryPlan:
        with self._index.pinned():
            return self._reader.read(question)

    def _answer_ids(
        self, question: str, plan: QueryPlan, filters: Filters, within: list[str] | None, k: int | None,
        context: list[Facet],
    ) -> list[str]:  # fmt: skip
        """The papers an earlier question's answer cited (none when it names a paper id the store lacks)."""
        request = Request(question, plan, filters=filters, k=k, within=within, context=context)
        if missing_ids(question, self._index):
            return []
        return self._answerer.answer(request).paper_ids

    def previous_papers(
        self, history: Sequence[Message], filters: Filters, revision: str, k: int | None = None
    ) -> list[str] | None:
        """The previous answer's papers (each answer of the chain cut at ``k``, as it was shown), or None when
        there was no earlier question."""
        for m in reversed(history):
            if m.role == "assistant" and m.paper_ids is not None:
                return list(m.paper_ids)
            if m.role == "user":
                break
        chain = previous_questions(history)[-CHAIN:]
        read = lru_cache(maxsize=None)(self._read)  # (each question of the chain read at most once)
        scope: list[str] | None = None
        for i, question in enumerate(chain):
            key = (tuple(chain[: i + 1]), filters, revision, k)
            with self._lock:
                cached = self._cache.get(key)
            if cached is None:
                plan = read(question)
                within = scope if i > 0 and plan.followup else None
                context = context_of(read, chain[:i], plan.facets) if within is not None else []
                cached = self._answer_ids(question, plan, filters, within, k, context)
                with self._lock:
                    self._cache[key] = cached
                    while len(self._cache) > CACHE:
                        self._cache.popitem(last=False)
            scope = cached
        return scope
