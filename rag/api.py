"""The only door the CLI and UI use: :func:`ask` and :func:`search` (and the :class:`AskPapers` facade)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

from vectorstore.errors import QuestionError, StoreError
from vectorstore.pipeline import ingest

from . import extractive
from .query import analyse
from .retrieve import Retriever
from .settings import Settings, get_settings
from .types import Answer, Hit

Mode = Literal["auto", "extractive", "llm"]
Message = dict[str, Any]
MAX_QUESTION_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_question(question: str) -> str:
    if not isinstance(question, str):
        raise QuestionError("the question must be text")
    q = _CONTROL.sub(" ", question).strip()
    if not q:
        raise QuestionError("the question is empty; ask something like “Which papers use information bottleneck?”")
    if len(q) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(q):,} characters long; the limit is {MAX_QUESTION_CHARS:,}")
    return q


def previous_questions(history: Sequence[Message] | None) -> list[str]:
    """The user's earlier questions, oldest first, from OpenAI-style ``{"role", "content"}`` messages."""
    out = []
    for m in history or []:
        if (
            isinstance(m, dict)
            and m.get("role") == "user"
            and isinstance(m.get("content"), str)
            and m["content"].strip()
        ):
            out.append(m["content"])
    return out


class AskPapers:
    """A store plus a retriever, opened lazily; the first use of an empty store ingests the bundled corpus."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()

    @property
    def retriever(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                retriever = Retriever(self.settings)
                if retriever.store.count() == 0:
                    corpus = self.settings.store.default_corpus
                    if not corpus.exists():
                        raise StoreError(
                            f"the store is empty and the bundled corpus {corpus} is missing; "
                            "run `askpapers ingest PATH`"
                        )
                    ingest([corpus], self.settings.store, embedder=retriever.embedder)
                self._retriever = retriever
            return self._retriever

    def search(self, query: str, k: int | None = None, *, filters: dict[str, Any] | None = None) -> list[Hit]:
        q = clean_question(query)
        return self.retriever.search(q, k or self.settings.retrieval.k, filters)

    def ask(
        self,
        question: str,
        history: Sequence[Message] | None = None,
        *,
        mode: Mode = "auto",
        k: int | None = None,
        filters: dict[str, Any] | None = None,
    ) -> Answer:
        t0 = time.perf_counter()
        text = clean_question(question)
        if mode not in ("auto", "extractive", "llm"):
            raise QuestionError(f"unknown mode '{mode}' (use auto, extractive or llm)")
        if mode == "llm":
            raise QuestionError("mode 'llm' needs an LLM endpoint, and none is configured; use mode 'extractive'")
        answer = self._extractive(text, previous_questions(history), filters, k)
        answer.latency_s = time.perf_counter() - t0
        return answer

    def _extractive(
        self, text: str, earlier: list[str], filters: dict[str, Any] | None, k: int | None, depth: int = 0
    ) -> Answer:
        q = analyse(text)
        within: list[str] | None = None
        notices: list[str] = []
        if q.followup and earlier and depth < 5:
            prev = self._extractive(earlier[-1], earlier[:-1], filters, k, depth + 1)
            within = [c.paper_id for c in prev.citations]
            if not within:
                notices.append("The previous answer cited no papers, so there was nothing to narrow down.")
        elif q.followup and not earlier and depth == 0:
            notices.append("This looks like a follow-up, but there is no earlier question; searching the whole corpus.")
        r = self.retriever
        if q.kind == "list":
            answer = extractive.answer_list(r, q, filters, within)
            if k is not None:
                answer.citations = answer.citations[:k]
        else:
            answer = extractive.answer_factoid(r, q, filters, within)
        answer.notices = notices + answer.notices
        return answer


_default: dict[int, AskPapers] = {}
_default_lock = threading.Lock()


def default_app(settings: Settings | None = None) -> AskPapers:
    s = settings or get_settings()
    with _default_lock:
        if id(s) not in _default:
            _default[id(s)] = AskPapers(s)
        return _default[id(s)]


def ask(
    question: str,
    history: Sequence[Message] | None = None,
    *,
    mode: Mode = "auto",
    k: int | None = None,
    filters: dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> Answer:
    """Answer a question about the papers, with numbered citations (see :class:`rag.types.Answer`)."""
    return default_app(settings).ask(question, history, mode=mode, k=k, filters=filters)


def search(
    query: str, k: int = 10, *, filters: dict[str, Any] | None = None, settings: Settings | None = None
) -> list[Hit]:
    """The ``k`` papers that best match ``query`` (hybrid dense + BM25, one entry per paper)."""
    return default_app(settings).search(query, k, filters=filters)
