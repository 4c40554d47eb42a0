"""The only door the CLI and UI use: :func:`ask` and :func:`search` (and the :class:`AskPapers` facade)."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from vectorstore.errors import QuestionError, StoreError
from vectorstore.pipeline import ingest
from vectorstore.text import content_stems
from vectorstore.types import Filters, IngestReport, Paper

from . import extractive, inputs
from .citations import ContextPaper, check
from .corpus import MapPoint, build_map
from .inputs import clean_question
from .query import analyse
from .retrieve import Retriever
from .settings import Settings, get_settings
from .types import Answer, Hit, Message

log = logging.getLogger("askpapers")
Mode = Literal["auto", "extractive", "llm"]
MessageLike = Message | dict[str, Any]
SEARCH_MOST = 500  # the most results one search returns
# A paper named by id: a 16-hex-digit id (the form askpapers gives papers) or "paper id X" where X has a digit.
_PAPER_ID = re.compile(
    r"(?<![\w-])([0-9a-f]{16})(?![\w-])|\bpaper[ _-]?id\s*[:=#]?\s*[\"'“‘`]?([\w.:/-]*\d[\w.:/-]*\w|\d)", re.IGNORECASE
)


def previous_questions(history: Sequence[Message]) -> list[str]:
    """The user's earlier questions, oldest first."""
    return [m.content for m in history if m.role == "user" and m.content.strip()]


class AskPapers:
    """A store plus a retriever, opened lazily; the first use of an empty store ingests the bundled corpus."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self._map_cache: tuple[tuple[str, int], list[MapPoint]] | None = None

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

    # -- the corpus, for browsing, the map and uploads ------------------------------------------------
    def papers(self) -> list[Paper]:
        """Every paper in the store, by title."""
        return sorted(self.retriever.store.iter_papers(), key=lambda p: p.title.lower())

    def paper(self, paper_id: str) -> Paper | None:
        """One paper by id, or None."""
        if not isinstance(paper_id, str) or not paper_id or len(paper_id) > 500:
            return None
        return self.retriever.papers([paper_id]).get(paper_id)

    def corpus_map(self) -> list[MapPoint]:
        """Papers as 2-D points coloured by topic (cached until the store changes)."""
        store = self.retriever.store
        key = (store.revision, store.count())
        if self._map_cache is None or self._map_cache[0] != key:
            papers = self.papers()
            vectors = store.paper_vectors([p.paper_id for p in papers])
            mat = np.array([vectors[p.paper_id] for p in papers], dtype=np.float32).reshape(len(papers), -1)
            self._map_cache = (key, build_map(papers, mat))
        return self._map_cache[1]

    def add_files(
        self, paths: Sequence[str | Path], *, skip_bad: bool = False, progress: bool | None = None
    ) -> IngestReport:
        """Ingest files into this store; the new papers are searchable at once."""
        report = ingest(
            paths, self.settings.store, skip_bad=skip_bad, progress=progress, embedder=self.retriever.embedder
        )
        self.retriever.refresh()
        return report

    def search(self, query: str, k: int | None = None, *, filters: Filters | dict[str, Any] | None = None) -> list[Hit]:
        text = clean_question(query)
        n = inputs.k_value(k, SEARCH_MOST) or self.settings.retrieval.k
        scope = inputs.filters_value(filters)
        if not content_stems(text):  # only stop-words, punctuation or emoji: nothing to rank the papers by
            return []
        q = analyse(text)
        if q.kind == "list" and q.topic:  # "Which papers use X?": search for X and its spellings
            return self.retriever.search(q.topic, n, scope, q.alternatives)
        return self.retriever.search(text, n, scope)

    def ask(
        self,
        question: str,
        history: Sequence[MessageLike] | None = None,
        *,
        mode: Mode | None = None,
        k: int | None = None,
        filters: Filters | dict[str, Any] | None = None,
    ) -> Answer:
        """The finished answer (the last item of :meth:`ask_stream`)."""
        answer: Answer | None = None
        for item in self.ask_stream(question, history, mode=mode, k=k, filters=filters):
            if isinstance(item, Answer):
                answer = item
        assert answer is not None
        return answer

    def ask_stream(
        self,
        question: str,
        history: Sequence[MessageLike] | None = None,
        *,
        mode: Mode | None = None,
        k: int | None = None,
        filters: Filters | dict[str, Any] | None = None,
    ) -> Iterator[str | Answer]:
        """Yield pieces of answer text as they are generated, then the checked :class:`Answer`.

        Every argument is validated before any work (see :mod:`rag.inputs`).
        """
        t0 = time.perf_counter()
        text = clean_question(question)
        chosen = inputs.mode_value(mode, self.settings.mode)
        messages = inputs.history(history)
        n = inputs.k_value(k, self.settings.retrieval.max_list)
        scope = inputs.filters_value(filters)
        return self._stream(text, messages, chosen, n, scope, t0)

    def _stream(
        self, text: str, messages: list[Message], mode: str, k: int | None, filters: Filters, t0: float
    ) -> Iterator[str | Answer]:
        configured = self.settings.llm.configured
        if mode == "llm" and not configured:
            raise QuestionError(
                "mode 'llm' needs an LLM endpoint, and none is configured: set OPENAI_API_KEY "
                "(and OPENAI_BASE_URL for a local server), or use mode 'extractive'"
            )
        earlier = previous_questions(messages)
        fallback = self._extractive(text, earlier, filters, k)
        if mode == "extractive" or not configured or self._missing_ids(text):
            fallback.latency_s = time.perf_counter() - t0
            yield fallback.text
            yield fallback
            return
        yield from self._llm_stream(text, messages, earlier, fallback, filters, k, t0)

    def _llm_stream(
        self,
        text: str,
        history: list[Message],
        earlier: list[str],
        fallback: Answer,
        filters: Filters,
        k: int | None,
        t0: float,
    ) -> Iterator[str | Answer]:
        from .chain import answer_chain, build_llm, condense_chain, describe_error, format_context, format_history

        s = self.settings.llm
        notices: list[str] = []
        shown: list[str] = []

        def fall_back(reason: str) -> Answer:
            fallback.notices = [f"The LLM answer is unavailable: {reason}. Showing the extractive answer.", *notices]
            fallback.draft = "".join(shown)
            fallback.model = s.model
            fallback.latency_s = time.perf_counter() - t0
            return fallback

        try:
            llm = build_llm(s)
            standalone = text
            if history:
                try:
                    standalone = (
                        condense_chain(llm).invoke({"history": format_history(history), "question": text}).strip()
                        or text
                    )
                except Exception as e:  # a failed rewrite is not fatal: use the question as asked
                    log.warning("condensing the follow-up failed: %s", describe_error(e, s))
            context = self._context(standalone, earlier, fallback, filters)
            usage: dict[str, int] = {}
            finished = False
            for chunk in answer_chain(llm).stream(
                {"context": format_context(context, s.context_chars), "question": standalone}
            ):
                piece = chunk.content if isinstance(chunk.content, str) else ""
                if piece:
                    shown.append(piece)
                    yield piece
                meta = getattr(chunk, "response_metadata", None) or {}
                if meta.get("finish_reason"):
                    finished = True
                if getattr(chunk, "usage_metadata", None):
                    um = chunk.usage_metadata
                    usage = {k2: int(um.get(k2, 0)) for k2 in ("input_tokens", "output_tokens", "total_tokens")}
        except Exception as e:
            yield fall_back(describe_error(e, s))
            return
        raw = "".join(shown)
        if not raw.strip():
            yield fall_back("the model returned an empty answer")
            return
        if not finished:
            yield fall_back("the model's answer stopped part-way")
            return
        checked = check(raw, context, self.retriever.embedder)
        if checked.removed:
            notices.append(
                "Removed citation markers that match no retrieved paper: "
                + ", ".join(f"[{n}]" for n in checked.removed)
            )
        if checked.unsupported:
            notices.append(f"{len(checked.unsupported)} sentence(s) are not supported by the papers they cite.")
        if checked.markup:
            notices.append(
                f"The model's answer contained {checked.markup} image(s) or HTML element(s); "
                "they are shown as text and never loaded."
            )
        yield Answer(
            question=text,
            text=checked.text,
            citations=checked.citations,
            mode="llm",
            found=bool(checked.citations),
            kind=fallback.kind,
            notices=notices,
            unsupported=checked.unsupported,
            model=s.model,
            usage=usage,
            latency_s=time.perf_counter() - t0,
            removed_markers=checked.removed,
            raw=raw,
        )

    def _context(self, standalone: str, earlier: list[str], fallback: Answer, filters: Filters) -> list[ContextPaper]:
        """Papers for the prompt: the extractive answer's, the previous answer's, then search hits."""
        limit = self.settings.llm.context_papers
        ids: dict[str, float] = {c.paper_id: c.score for c in fallback.citations}
        if earlier:
            prev = self._extractive(earlier[-1], earlier[:-1], filters, None)
            for c in prev.citations:
                ids.setdefault(c.paper_id, c.score)
        for h in self.retriever.search(standalone, limit, filters):
            ids.setdefault(h.paper_id, h.score)
        chosen = list(ids)[:limit]
        papers = self.retriever.papers(chosen)
        return [ContextPaper(n, papers[pid], ids[pid]) for n, pid in enumerate((p for p in chosen if p in papers), 1)]

    def _missing_ids(self, text: str) -> list[str]:
        """Paper ids the question names that are not in the store."""
        named = list(dict.fromkeys(a or b for a, b in _PAPER_ID.findall(text)))
        if not named:
            return []
        known = self.retriever.papers(list(dict.fromkeys(named + [n.lower() for n in named])))
        return [n for n in named if n not in known and n.lower() not in known]

    def _extractive(self, text: str, earlier: list[str], filters: Filters, k: int | None, depth: int = 0) -> Answer:
        q = analyse(text)
        missing = self._missing_ids(text)
        if missing:
            named = ", ".join(missing)
            return extractive.abstain(q, f"No paper with the id {named} is in the corpus.", [])
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
    history: Sequence[MessageLike] | None = None,
    *,
    mode: Mode | None = None,
    k: int | None = None,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> Answer:
    """Answer a question about the papers, with numbered citations (see :class:`rag.types.Answer`)."""
    return default_app(settings).ask(question, history, mode=mode, k=k, filters=filters)


def ask_stream(
    question: str,
    history: Sequence[MessageLike] | None = None,
    *,
    mode: Mode | None = None,
    k: int | None = None,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> Iterator[str | Answer]:
    """Yield answer text pieces as they arrive, then the final, checked :class:`Answer`."""
    return default_app(settings).ask_stream(question, history, mode=mode, k=k, filters=filters)


def search(
    query: str,
    k: int | None = None,
    *,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> list[Hit]:
    """The ``k`` papers that best match ``query`` (hybrid dense + BM25, one entry per paper)."""
    return default_app(settings).search(query, k, filters=filters)
