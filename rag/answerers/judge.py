"""The model as a judge of borderline papers (PaperQA2's re-scoring, made checkable).

Borderline papers are the ones the extractive rule almost rejected (matched only by similarity, or loosely) and
the ones it almost matched (every facet but one). The model sees them in batches and answers yes or no for each,
with a quote. A "yes" counts only when its quote occurs in that paper's abstract; the abstract's sentence
holding it becomes the paper's evidence, so every citation stays verbatim.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from askpapers.rag.answerers.chain import describe_error, format_context, judge_chain, structured
from askpapers.rag.decide.citations import ContextPaper
from askpapers.rag.settings import LLMSettings
from askpapers.rag.types import Verdicts
from askpapers.vectorstore.text import sentences
from askpapers.vectorstore.types import Paper

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from askpapers.rag.answerers.meter import Meter

log = logging.getLogger("askpapers")

BATCH_PAPERS = 8  # papers per judge request (a short JSON reply each)
MIN_QUOTE = 12  # characters: a shorter "quote" shows nothing


@dataclass
class Judged:
    """The judge's verified word: the evidence sentence of each paper it said yes to, the papers it said no to
    (or quoted falsely), and the batches that failed (their papers keep the extractive decision)."""

    yes: dict[str, str] = field(default_factory=dict)
    no: set[str] = field(default_factory=set)
    failed: list[str] = field(default_factory=list)


def evidence_for(quote: str, abstract: str) -> str | None:
    """The abstract's sentence holding ``quote`` (compared with runs of blanks as one), or None."""
    q = quote.strip().strip("\"'“”‘’").strip().removesuffix("…").removesuffix("...").strip()
    if len(q) < MIN_QUOTE:
        return None
    flat = " ".join(q.split())
    for sent in sentences(abstract):
        if q in sent or flat in " ".join(sent.split()):
            return sent
    return q if q in abstract else None


def batches(papers: Sequence[Paper], budget: int) -> list[list[Paper]]:
    """Papers in batches of at most :data:`BATCH_PAPERS` whose abstracts fit the character budget."""
    out: list[list[Paper]] = []
    size = 0
    for p in papers:
        need = len(p.title) + len(p.abstract) + 64
        if not out or len(out[-1]) >= BATCH_PAPERS or size + need > budget:
            out.append([])
            size = 0
        out[-1].append(p)
        size += need
    return out


def judge(model: BaseChatModel, question: str, papers: Sequence[Paper], settings: LLMSettings, meter: Meter) -> Judged:
    """Yes or no for each paper (see the module text)."""
    result = Judged()
    groups = batches(papers, settings.context_chars)
    inputs = [
        {"context": format_context([ContextPaper(i, p) for i, p in enumerate(g, 1)], settings.context_chars),
         "question": question}
        for g in groups
    ]  # fmt: skip
    config: Any = {"max_concurrency": settings.max_concurrency, "callbacks": [meter]}
    outs = judge_chain(model).batch(inputs, config=config, return_exceptions=True)
    for n, (group, out) in enumerate(zip(groups, outs, strict=True), 1):
        verdicts = None if isinstance(out, Exception) else structured(out, Verdicts)
        if verdicts is None:
            why = describe_error(out, settings) if isinstance(out, Exception) else "no valid verdicts"
            log.warning("judge batch %d failed: %s", n, why)
            result.failed.append(f"batch {n} of {len(groups)} ({why})")
            continue
        said = {v.paper: v for v in verdicts.verdicts}
        for i, p in enumerate(group, 1):
            v = said.get(i)
            if v is None:
                continue  # no word on this paper: the extractive decision stands
            sentence = evidence_for(v.quote, p.abstract) if v.yes else None
            if sentence is not None:
                result.yes[p.paper_id] = sentence
            else:
                result.no.add(p.paper_id)
    return result
