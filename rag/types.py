"""The answer types: what ``search`` and ``ask`` return. ``--json`` is their plain serialisation."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vectorstore.types import Filters, Paper

__all__ = ["Answer", "Citation", "Filters", "Hit", "Message", "Paper"]

MAX_MESSAGE_CHARS = 20_000  # one chat message (a 50-paper answer with its evidence is about 15,000)
MAX_PAPER_IDS = 1_000  # paper ids an assistant message may carry


class Message(BaseModel):
    """One chat message, OpenAI-style. An assistant message may carry the ids of the papers it cited, so a
    follow-up narrows exactly those (without re-deriving them from the text)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_MESSAGE_CHARS)
    paper_ids: tuple[str, ...] | None = Field(default=None, max_length=MAX_PAPER_IDS)


@dataclass
class Hit:
    """A paper found by search: its fused score and the chunk that matched best."""

    paper_id: str
    title: str
    score: float
    snippet: str
    abstract: str
    venue: str = ""
    year: int | None = None
    url: str = ""
    code_urls: list[str] = field(default_factory=list)
    similarity: float = 0.0  # best chunk's cosine similarity to the query

    @classmethod
    def from_paper(cls, p: Paper, score: float, snippet: str = "", similarity: float = 0.0) -> Hit:
        return cls(paper_id=p.paper_id, title=p.title, score=round(score, 6), snippet=snippet or p.abstract[:300],
                   abstract=p.abstract, venue=p.venue, year=p.year, url=p.url, code_urls=list(p.code_urls),
                   similarity=round(similarity, 4))  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Citation:
    """A numbered reference in an answer. ``evidence`` occurs verbatim in ``abstract``."""

    n: int
    paper_id: str
    title: str
    evidence: str
    abstract: str
    score: float
    venue: str = ""
    url: str = ""
    code_urls: list[str] = field(default_factory=list)
    year: int | None = None

    @classmethod
    def from_paper(cls, n: int, p: Paper, evidence: str, score: float) -> Citation:
        """Citation ``[n]`` of a paper; ``evidence`` must be a verbatim part of its abstract."""
        if not evidence or evidence not in p.abstract:
            raise ValueError("evidence must be a verbatim sentence of the abstract")
        return cls(n=n, paper_id=p.paper_id, title=p.title, evidence=evidence, abstract=p.abstract,
                   score=round(score, 4), venue=p.venue, url=p.url, code_urls=list(p.code_urls),
                   year=p.year)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Answer:
    """An answer in Markdown with [n] markers, and the papers those markers cite."""

    question: str
    text: str
    citations: list[Citation]
    mode: Literal["extractive", "llm"] = "extractive"
    found: bool = False
    kind: str = "list"
    notices: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    nearest: list[Hit] = field(default_factory=list)  # shown when nothing matched; never cited
    model: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    removed_markers: list[int] = field(default_factory=list)  # [n] markers dropped: not in the context
    draft: str = ""  # a generated answer that was cut off and replaced by the extractive one
    raw: str = ""  # the model's text exactly as it came (``text`` is it checked: markers renumbered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "found": self.found,
            "kind": self.kind,
            "citations": [c.to_dict() for c in self.citations],
            "paper_ids": [c.paper_id for c in self.citations],  # pass back with the answer for follow-ups
            "notices": self.notices,
            "unsupported": self.unsupported,
            "nearest": [{"paper_id": h.paper_id, "title": h.title, "score": h.score} for h in self.nearest],
            "model": self.model,
            "usage": self.usage,
            "latency_s": round(self.latency_s, 4),
            "removed_markers": self.removed_markers,
            "draft": self.draft,
            "raw_answer": self.raw,
        }
