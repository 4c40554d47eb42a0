"""A synthesis over every matching paper, however many: map-reduce when they do not fit one request.

The papers are numbered once, over the whole set, and packed into batches that fit ``ASKPAPERS_LLM_CONTEXT_CHARS``.
One batch: a single streamed request (``prompts/answer.md``). Several: each batch gets short cited notes
(``prompts/map.md``, LCEL ``batch_as_completed`` with ``max_concurrency``), then one streamed request merges them
(``prompts/reduce.md``) with the numbers kept as they are. A batch that fails or comes back empty is named in a
notice and its papers stay in the answer's list; only when every batch fails is there nothing to merge.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from askpapers.rag.answerers.chain import answer_chain, describe_error, format_context, map_chain, reduce_chain
from askpapers.rag.decide.citations import ContextPaper
from askpapers.rag.settings import LLMSettings
from askpapers.rag.types import Progress

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable

    from askpapers.rag.answerers.meter import Meter

BLOCK_OVERHEAD = 64  # characters format_context adds around each abstract (number, fences, venue)


class NothingRead(RuntimeError):
    """Every batch failed or came back empty."""


@dataclass
class Generation:
    """What the streamed step produced, and what went wrong on the way."""

    pieces: list[str] = field(default_factory=list)
    finished: bool = False
    failed: list[str] = field(default_factory=list)  # "papers 13–24 (batch 2 of 5): the endpoint returned …"
    batches: int = 0

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def batches(papers: Sequence[ContextPaper], budget: int) -> list[list[ContextPaper]]:
    """Consecutive papers packed greedily into batches whose blocks fit ``budget`` characters (a paper that is
    longer than the budget on its own is a batch of one, its abstract cut to fit)."""
    out: list[list[ContextPaper]] = []
    size = 0
    for cp in papers:
        need = len(cp.paper.title) + len(cp.paper.abstract) + len(cp.paper.venue) + BLOCK_OVERHEAD
        if not out or size + need > budget:
            out.append([])
            size = 0
        out[-1].append(cp)
        size += need
    return out


def span(group: Sequence[ContextPaper]) -> str:
    return f"{group[0].n}–{group[-1].n}" if len(group) > 1 else str(group[0].n)


@dataclass
class Synthesis:
    model: BaseChatModel
    settings: LLMSettings
    meter: Meter
    language: str

    def stream(
        self, papers: Sequence[ContextPaper], question: str, english: str, run: Generation
    ) -> Iterator[str | Progress]:
        """The synthesis text as it is generated, with progress between (see the module text)."""
        budget = self.settings.context_chars
        groups = batches(papers, budget)
        run.batches = len(groups)
        if len(groups) == 1:
            one = {"context": format_context(papers, budget), "language": self.language, "question": question}
            yield from self._stream(answer_chain(self.model), one, run)
            return
        partials = yield from self._map(groups, len(papers), english, run)
        if not partials:
            raise NothingRead("; ".join(run.failed))
        yield Progress(f"Writing the answer from the notes on {len(partials)} batches", len(groups), len(groups))
        notes = "\n\n".join(f"Notes on papers [{span(groups[i])}]:\n{partials[i]}" for i in sorted(partials))
        inputs: dict[str, Any] = {"partials": notes, "total": len(papers), "language": self.language,
                                  "question": question}  # fmt: skip
        yield from self._stream(reduce_chain(self.model), inputs, run)

    def _map(
        self, groups: list[list[ContextPaper]], total: int, english: str, run: Generation
    ) -> Generator[Progress, None, dict[int, str]]:
        budget = self.settings.context_chars
        inputs = [
            {"context": format_context(g, budget), "first": g[0].n, "last": g[-1].n, "total": total,
             "question": english}
            for g in groups
        ]  # fmt: skip
        yield Progress(f"Reading {total} papers in {len(groups)} batches", 0, len(groups))
        partials: dict[int, str] = {}
        config: Any = {"max_concurrency": self.settings.max_concurrency, "callbacks": [self.meter]}
        finished = map_chain(self.model).batch_as_completed(inputs, config=config, return_exceptions=True)
        for done, (i, out) in enumerate(finished, 1):
            name = f"papers {span(groups[i])} (batch {i + 1} of {len(groups)})"
            if isinstance(out, Exception):
                run.failed.append(f"{name}: {describe_error(out, self.settings)}")
            elif not out.strip():
                run.failed.append(f"{name}: the model returned nothing")
            else:
                partials[i] = out
            yield Progress(f"Read papers {span(groups[i])} of {total} ({done} of {len(groups)} batches)", done,
                           len(groups))  # fmt: skip
        return partials

    def stream_one(self, inputs: dict[str, Any], run: Generation) -> Iterator[str]:
        """One streamed request of ``prompts/answer.md`` (a factoid's answer)."""
        yield from self._stream(answer_chain(self.model), inputs, run)

    def _stream(self, chain: Runnable[dict[str, Any], Any], inputs: dict[str, Any], run: Generation) -> Iterator[str]:
        for chunk in chain.stream(inputs, config={"callbacks": [self.meter]}):
            piece = chunk.content if isinstance(chunk.content, str) else ""
            if piece:
                run.pieces.append(piece)
                yield piece
            meta = getattr(chunk, "response_metadata", None) or {}
            run.finished = run.finished or bool(meta.get("finish_reason"))
