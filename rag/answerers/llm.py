"""The LLM answerer: every matching paper kept, a cited synthesis over all of them, in the question's language.

1. **Condense** (every question): the message, with the chat so far, as an English search query, the plan's
   facets and the message's language (JSON mode, validated; on failure the question is searched as typed). A
   question with no Latin-script topic words ("有哪些关于模型合并的论文？") is read from that output by the second
   reader, :class:`~rag.read.reader.CondensedReader` (the English query, or the model's facets resolved and spelled
   as the rule reader's are); every other question keeps the rule reader's plan.
2. **Match**: the plan's matcher finds the papers, all of them up to ``k`` (``ASKPAPERS_MAX_LIST``), exactly as
   in extractive mode; with ``ASKPAPERS_LLM_JUDGE`` the model judges the borderline ones (:mod:`.judge`).
3. **Synthesis** over the whole set (:mod:`.mapreduce`), streamed, its citations checked with their numbers kept;
   the papers it does not cite are listed after it, and every paper is cited with verbatim evidence.
4. A factoid question is answered from one request over the best papers, as before.

When the endpoint fails, returns nothing, or stops part-way, the extractive answer is shown with a notice saying
why. Every answer reports its requests, tokens, latency and (with prices set) estimated cost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from askpapers.rag.answerers.base import Answerer, Request
from askpapers.rag.answerers.chain import (
    build_llm,
    condense_chain,
    describe_error,
    format_context,
    format_history,
    structured,
)
from askpapers.rag.answerers.extractive import LATIN, ExtractiveAnswerer, md, preface, reading
from askpapers.rag.answerers.judge import judge
from askpapers.rag.answerers.mapreduce import Generation, NothingRead, Synthesis
from askpapers.rag.decide.citations import Checked, ContextPaper, check
from askpapers.rag.decide.match import Match, MatchList
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.reader import CondensedReader
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.retrieval import FusionRetriever, Query
from askpapers.rag.settings import AnswerSettings, LLMSettings
from askpapers.rag.types import Answer, Citation, Condensed, Progress
from askpapers.vectorstore.text import content_stems

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from askpapers.rag.answerers.meter import Meter

log = logging.getLogger("askpapers")


class LLMAnswerer(Answerer):
    name = "llm"

    def __init__(
        self,
        index: Index,
        retriever: FusionRetriever,
        llm: LLMSettings,
        rule: AnswerSettings,
        fallback: ExtractiveAnswerer,
        lexicon: Lexicon,
    ) -> None:
        self.index = index
        self.retriever = retriever
        self.llm = llm
        self.rule = rule
        self.fallback = fallback
        self.lexicon = lexicon

    def stream(self, request: Request) -> Iterator[str | Progress | Answer]:
        from askpapers.rag.answerers.meter import Meter  # (LangChain is imported only once a model is used)

        meter, run = Meter(), Generation()
        try:
            model = build_llm(self.llm)
            request, language = self._condensed(model, request, meter)
        except Exception as e:  # no model at all (a bad setting): the extractive answer, and why
            yield self._fall_back(self.fallback.answer(request), describe_error(e, self.llm), run, request, meter)
            return
        if request.plan.intent == "factoid":
            yield from self._factoid(model, request, language, meter)
        else:
            yield from self._set(model, request, language, meter)

    # -- 1. condense ----------------------------------------------------------------------------------------------
    def _condensed(self, model: BaseChatModel, request: Request, meter: Meter) -> tuple[Request, str]:
        """The request planned from the model's English reading when the question has no Latin-script topic
        (and the language to answer in)."""
        inputs = {"history": format_history(request.history), "question": request.question}
        # (an endpoint that fails here fails the LLM answer: the caller falls back at once, with the reason)
        got = structured(condense_chain(model).invoke(inputs, config={"callbacks": [meter]}), Condensed)
        if got is None:  # no valid JSON: not fatal, the question is searched as typed
            note = "The model could not restate the question as a search; it was searched as typed."
            return replace(request, notices=[*request.notices, note]), "the language of the question"
        topic = " ".join(request.plan.alternatives)
        if request.within is None and not LATIN.search(topic):  # read from the English query instead
            reader = CondensedReader(self.lexicon, got, typed=request.plan)
            return replace(request, plan=reader.read(request.question)), got.language
        return request, got.language

    # -- 2. match (and judge) --------------------------------------------------------------------------------------
    def _matches(self, model: BaseChatModel, request: Request, meter: Meter) -> tuple[MatchList, list[str]]:
        filters = request.plan.filters.merged(request.filters)
        near: list[Match] = []
        matches = self.fallback.matches(request, filters, near)
        if not self.llm.judge or self.llm.judge_max == 0 or not (matches or near):
            return matches, []
        weak = sorted((m for m in matches if not m.phrase), key=lambda m: m.probability)[: self.llm.judge_max // 2]
        close = near[: self.llm.judge_max - len(weak)]
        if not weak and not close:
            return matches, []
        question = request.plan.searched if LATIN.search(request.plan.searched) else request.plan.topic
        verdict = judge(model, question, [m.paper for m in [*weak, *close]], self.llm, meter)
        kept = [m for m in matches if m.paper.paper_id not in verdict.no]
        added = [replace(m, evidence=verdict.yes[m.paper.paper_id], sentences=[verdict.yes[m.paper.paper_id]])
                 for m in close if m.paper.paper_id in verdict.yes]  # fmt: skip
        beyond = matches.beyond  # (a follow-up's papers the previous answer did not list stay after the others)
        order = sorted([*kept, *added], key=lambda m: (m.paper.paper_id in beyond, -m.probability, -m.score,
                                                       m.paper.title))  # fmt: skip
        judged = MatchList(order, matches.unread, beyond)
        notes = [
            f"The model judged {len(weak) + len(close)} borderline papers: {len(added)} added, "
            f"{len(matches) - len(kept)} removed (each “yes” checked against a verbatim quote)."
        ]
        notes += [f"The judge's {f} failed; those papers keep the extractive decision." for f in verdict.failed]
        return judged, notes

    # -- 3. synthesis ---------------------------------------------------------------------------------------------
    def _set(
        self, model: BaseChatModel, request: Request, language: str, meter: Meter
    ) -> Iterator[str | Progress | Answer]:
        run = Generation()
        try:
            matches, notes = self._matches(model, request, meter)
        except Exception as e:
            yield self._fall_back(self.fallback.answer(request), describe_error(e, self.llm), run, request, meter)
            return
        if not matches or (not request.plan.facets and request.within is None):
            yield self._fall_back(self.fallback.answer(request), "", run, request, meter)
            return
        cut = matches[: request.k or self.rule.max_list]
        context = [ContextPaper(n, m.paper, m.score) for n, m in enumerate(cut, 1)]
        head = self._head(request, matches, len(cut))
        yield head
        english = request.plan.searched if LATIN.search(request.plan.searched) else request.plan.topic
        try:
            yield from Synthesis(model, self.llm, meter, language).stream(context, request.question, english, run)
        except (NothingRead, Exception) as e:
            reason = str(e) if isinstance(e, NothingRead) else describe_error(e, self.llm)
            yield self._fall_back(self.fallback.answer(request), reason, run, request, meter)
            return
        if not run.text.strip() or not run.finished:
            why = "the model's answer stopped part-way" if run.text.strip() else "the model returned an empty answer"
            yield self._fall_back(self.fallback.answer(request), why, run, request, meter)
            return
        notes = [*notes, *self._batch_notes(run)]
        answer, tail = self._composed(head, run, cut, matches.total, request, notes, meter, language)
        answer.matched_ids = matches.ids
        if tail:
            yield tail  # (so the streamed text is the whole answer)
        yield answer

    def _head(self, request: Request, matches: MatchList, shown: int) -> str:
        filters = request.plan.filters.merged(request.filters)
        read = reading(request.plan, filters) if request.plan.facets else "your question"
        relaxed = not any(m.strict for m in matches)  # (none meets every part: the closest, and it says so)
        head = self.fallback.head(request.plan, matches.total, shown, read, request.within, relaxed, matches.outside,
                                  request.context)  # fmt: skip
        return preface(request.plan) + head.rstrip(":") + ".\n\n"

    @staticmethod
    def _batch_notes(run: Generation) -> list[str]:
        if not run.failed:
            return []
        return [f"The model could not read {f}; those papers are still listed, without a synthesis."
                for f in run.failed]  # fmt: skip

    def _composed(
        self, head: str, run: Generation, cut: list[Match], total: int, request: Request, notes: list[str],
        meter: Meter, language: str,
    ) -> tuple[Answer, str]:  # fmt: skip
        """The checked synthesis (numbers kept), the papers it does not cite (also returned, to be streamed), and
        every paper as a citation."""
        context = [ContextPaper(n, m.paper, m.score) for n, m in enumerate(cut, 1)]
        checked = check(run.text, context, self.index.embedder, self.rule, keep_numbers=True,
                        question=_asked(request), english=is_english(language))  # fmt: skip
        cited = {c.n for c in checked.citations}
        rest = [f"[{cp.n}] *{md(cp.paper.title)}*" for cp in context if cp.n not in cited]
        tail = ""
        if rest:
            tail = f"\n\n**Also matching** ({len(rest)} more, each in the sources with its evidence): "
            tail += "; ".join(rest) + "."
        terms = content_stems(" ".join(request.plan.alternatives) or request.plan.searched)
        cites = [
            Citation.from_paper(n, m.paper, m.sentences or [m.evidence], m.score, terms) for n, m in enumerate(cut, 1)
        ]
        answer = Answer(
            question=request.question, text=head + checked.text + tail, citations=cites, mode="llm", found=True,
            kind="list", notices=[*request.notices, *notes, *_check_notes(checked)], unsupported=checked.unsupported,
            removed_markers=checked.removed, raw=run.text, total=total, plan=request.plan.to_dict(),
        )  # fmt: skip
        return self._metered(answer, request, meter), tail

    # -- 4. factoids ----------------------------------------------------------------------------------------------
    def _factoid(
        self, model: BaseChatModel, request: Request, language: str, meter: Meter
    ) -> Iterator[str | Progress | Answer]:
        extractive = self.fallback.answer(request)
        run = Generation()
        context = self.context(request, extractive)
        inputs = {"context": format_context(context, self.llm.context_chars), "language": language,
                  "question": request.question}  # fmt: skip
        try:
            yield from Synthesis(model, self.llm, meter, language).stream_one(inputs, run)
        except Exception as e:
            yield self._fall_back(extractive, describe_error(e, self.llm), run, request, meter)
            return
        if not run.text.strip():
            yield self._fall_back(extractive, "the model returned an empty answer", run, request, meter)
        elif not run.finished:
            yield self._fall_back(extractive, "the model's answer stopped part-way", run, request, meter)
        else:
            checked = check(run.text, context, self.index.embedder, self.rule, question=_asked(request),
                            english=is_english(language))  # fmt: skip
            answer = Answer(
                question=request.question, text=checked.text, citations=checked.citations, mode="llm",
                found=bool(checked.citations), kind="factoid", notices=[*request.notices, *_check_notes(checked)],
                unsupported=checked.unsupported, removed_markers=checked.removed, raw=run.text,
                total=len(checked.citations), plan=request.plan.to_dict(),
            )  # fmt: skip
            yield self._metered(answer, request, meter)

    def context(self, request: Request, extractive: Answer) -> list[ContextPaper]:
        """Papers for a factoid's prompt: the extractive answer's, the previous answer's, then search hits."""
        limit = self.llm.context_papers
        ids: dict[str, float] = {c.paper_id: c.score for c in extractive.citations}
        for pid in request.previous:
            ids.setdefault(pid, 0.0)
        cands = self.retriever.retrieve(Query(request.plan.searched), request.filters)
        for c in cands[: limit * 2]:
            ids.setdefault(c.paper_id, round(c.score, 6))
        chosen = list(ids)[:limit]
        papers = self.index.papers(chosen)
        return [ContextPaper(n, papers[pid], ids[pid]) for n, pid in enumerate((p for p in chosen if p in papers), 1)]

    # -- reporting ------------------------------------------------------------------------------------------------
    def _fall_back(self, extractive: Answer, reason: str, run: Generation, request: Request, meter: Meter) -> Answer:
        if reason:
            extractive.notices = [
                *extractive.notices,
                f"The LLM answer is unavailable: {reason}. Showing the extractive answer.",
            ]
        extractive.draft = run.text
        extractive.model = self.llm.model
        return self._metered(extractive, request, meter)

    def _metered(self, answer: Answer, request: Request, meter: Meter) -> Answer:
        answer.model = self.llm.model
        answer.usage = meter.usage()
        answer.cost_usd = meter.cost(self.llm)
        answer.latency_s = time.perf_counter() - request.started if request.started else 0.0
        return answer


def is_english(language: str) -> bool:
    """Whether the condense step's answer language is English (only then are a claim's own words checked)."""
    lang = language.strip().lower()
    return lang in ("english", "en") or lang.startswith(("english ", "en-", "english("))


def _asked(request: Request) -> str:
    """Every wording of the question: words a claim may use without a cited paper holding them."""
    return f"{request.question} {request.plan.searched} {request.plan.topic}"


def _check_notes(checked: Checked) -> list[str]:
    notes = []
    if checked.removed:
        notes.append(
            "Removed citation markers that match no retrieved paper: " + ", ".join(f"[{n}]" for n in checked.removed)
        )
    if checked.unsupported:
        notes.append(f"{len(checked.unsupported)} sentence(s) are not supported by the papers they cite.")
    if checked.markup:
        notes.append(
            f"The model's answer contained {checked.markup} image(s) or HTML element(s); "
            "they are shown as text and never loaded."
        )
    return notes
