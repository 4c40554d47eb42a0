"""The answerer interface: a request in, answer text streamed out, then the checked :class:`Answer`.

Like ai2-scholarqa-lib's small abstract bases with a name-to-class map: an answerer is chosen by name from
:data:`rag.answerers.ANSWERERS` (by the answer mode), and every answerer takes the same :class:`Request`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from askpapers.rag.types import Answer, Facet, Message, Progress, QueryPlan
from askpapers.vectorstore.types import Filters


@dataclass
class Request:
    """What an answerer needs to answer one question."""

    question: str  # validated, printable
    plan: QueryPlan  # how the question was read
    history: list[Message] = field(default_factory=list)
    filters: Filters = field(default_factory=Filters)
    k: int | None = None  # most papers to cite
    within: list[str] | None = None  # a follow-up's scope: the previous answer's papers (None: the whole corpus)
    previous: list[str] = field(default_factory=list)  # the previous answer's papers, for an LLM's context
    previous_question: str = ""  # the last question before this one (a follow-up's evidence is chosen for it)
    context: list[Facet] = field(default_factory=list)  # a follow-up's: the facets the previous answer's papers met
    notices: list[str] = field(default_factory=list)  # said before the answer's own notices
    started: float = 0.0  # time.perf_counter() when the question arrived


class Answerer(ABC):
    """Answers a :class:`Request`."""

    name: ClassVar[str]

    @abstractmethod
    def stream(self, request: Request) -> Iterator[str | Progress | Answer]:
        """Pieces of answer text as they are made (with :class:`Progress` between them on long work), then the
        final :class:`Answer` (always last)."""

    def answer(self, request: Request) -> Answer:
        final: Answer | None = None
        for item in self.stream(request):
            if isinstance(item, Answer):
                final = item
        if final is None:
            raise RuntimeError(f"the {self.name} answerer gave no answer")
        return final
