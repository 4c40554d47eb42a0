"""The LLM answerer: a generated, streamed answer whose citations are checked, with the extractive answer as
its fallback.

It owns the whole LLM path: condensing a follow-up (:mod:`rag.chain`), choosing the context papers, streaming
the answer, checking its citations (:mod:`rag.citations`) and falling back to the extractive answer, with a
notice saying why, when the endpoint fails, returns nothing, or stops part-way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from ..citations import ContextPaper, check
from ..index import PaperIndex
from ..retrieval import FusionRetriever, Query
from ..settings import AnswerSettings, LLMSettings
from ..types import Answer
from .base import Answerer, Request
from .extractive import ExtractiveAnswerer

log = logging.getLogger("askpapers")


class LLMAnswerer(Answerer):
    name = "llm"

    def __init__(
        self,
        index: PaperIndex,
        retriever: FusionRetriever,
        llm: LLMSettings,
        rule: AnswerSettings,
        fallback: ExtractiveAnswerer,
    ) -> None:
        self.index = index
        self.retriever = retriever
        self.llm = llm
        self.rule = rule
        self.fallback = fallback

    def context(self, standalone: str, request: Request, extractive: Answer) -> list[ContextPaper]:
        """Papers for the prompt: the extractive answer's, the previous answer's, then search hits."""
        limit = self.llm.context_papers
        ids: dict[str, float] = {c.paper_id: c.score for c in extractive.citations}
        for pid in request.previous:
            ids.setdefault(pid, 0.0)
        for c in self._search(standalone, request, limit):
            ids.setdefault(c[0], c[1])
        chosen = list(ids)[:limit]
        papers = self.index.papers(chosen)
        return [ContextPaper(n, papers[pid], ids[pid]) for n, pid in enumerate((p for p in chosen if p in papers), 1)]

    def _search(self, text: str, request: Request, k: int) -> list[tuple[str, float]]:
        cands = self.retriever.retrieve(Query(text), request.filters)
        papers = self.index.papers([c.paper_id for c in cands[: k * 2]])
        return [(c.paper_id, round(c.score, 6)) for c in cands if c.paper_id in papers][:k]

    def stream(self, request: Request) -> Iterator[str | Answer]:
        from ..chain import build_llm, describe_error

        extractive = self.fallback.answer(request)
        run = _Run()
        try:
            llm = build_llm(self.llm)
            standalone = self._standalone(llm, request)
            context = self.context(standalone, request, extractive)
            yield from self._generate(llm, context, standalone, run)
        except Exception as e:
            yield self._fall_back(extractive, describe_error(e, self.llm), run, request)
            return
        if not run.text.strip():
            yield self._fall_back(extractive, "the model returned an empty answer", run, request)
        elif not run.finished:
            yield self._fall_back(extractive, "the model's answer stopped part-way", run, request)
        else:
            yield self._checked(run, context, request, extractive.kind)

    def _standalone(self, llm: BaseChatModel, request: Request) -> str:
        """The question rewritten to stand alone when there is history; the question itself otherwise."""
        from ..chain import condense_chain, describe_error, format_history

        if not request.history:
            return request.question
        try:
            condensed = condense_chain(llm).invoke(
                {"history": format_history(request.history), "question": request.question}
            )
            return condensed.strip() or request.question
        except Exception as e:  # a failed rewrite is not fatal: use the question as asked
            log.warning("condensing the follow-up failed: %s", describe_error(e, self.llm))
            return request.question

    def _generate(self, llm: BaseChatModel, context: list[ContextPaper], question: str, run: _Run) -> Iterator[str]:
        from ..chain import answer_chain, format_context

        inputs = {"context": format_context(context, self.llm.context_chars), "question": question}
        for chunk in answer_chain(llm).stream(inputs):
            piece = chunk.content if isinstance(chunk.content, str) else ""
            if piece:
                run.pieces.append(piece)
                yield piece
            meta = getattr(chunk, "response_metadata", None) or {}
            run.finished = run.finished or bool(meta.get("finish_reason"))
            if getattr(chunk, "usage_metadata", None):
                um = chunk.usage_metadata
                run.usage = {k: int(um.get(k, 0)) for k in ("input_tokens", "output_tokens", "total_tokens")}

    def _fall_back(self, extractive: Answer, reason: str, run: _Run, request: Request) -> Answer:
        extractive.notices = [f"The LLM answer is unavailable: {reason}. Showing the extractive answer."]
        extractive.draft = run.text
        extractive.model = self.llm.model
        extractive.latency_s = time.perf_counter() - request.started
        return extractive

    def _checked(self, run: _Run, context: list[ContextPaper], request: Request, kind: str) -> Answer:
        checked = check(run.text, context, self.index.embedder, self.rule)
        notices = []
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
        return Answer(
            question=request.question,
            text=checked.text,
            citations=checked.citations,
            mode="llm",
            found=bool(checked.citations),
            kind=kind,
            notices=notices,
            unsupported=checked.unsupported,
            model=self.llm.model,
            usage=run.usage,
            latency_s=time.perf_counter() - request.started,
            removed_markers=checked.removed,
            raw=run.text,
        )


@dataclass
class _Run:
    """What one generation produced so far."""

    pieces: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    finished: bool = False

    @property
    def text(self) -> str:
        return "".join(self.pieces)
