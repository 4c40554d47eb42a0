"""The answer types: what ``search`` and ``ask`` return. ``--json`` is their plain serialisation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from askpapers.vectorstore.text import QUOTE_MOST, elide, trim
from askpapers.vectorstore.types import Filters, Paper

__all__ = ["Answer", "Citation", "Filters", "Hit", "Message", "Paper", "Progress"]

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
    weak: bool = False  # misses a topic of the query and is not close in meaning: only the nearest paper

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
    sentences: list[str] = field(default_factory=list)  # every evidence sentence (one per facet), verbatim
    authors: list[str] = field(default_factory=list)

    @classmethod
    def from_paper(
        cls, n: int, p: Paper, evidence: str | list[str], score: float, terms: Sequence[str] = ()
    ) -> Citation:
        """Citation ``[n]`` of a paper; its evidence (one sentence, or one per facet) is verbatim abstract text.

        A sentence longer than ``QUOTE_MOST`` characters is trimmed to the run of its words that holds the most of
        ``terms`` (query stems); the part kept is what is checked, stored and shown (see :meth:`quotes`)."""
        sentences = [evidence] if isinstance(evidence, str) else list(evidence)
        sentences = [trim(s, terms, QUOTE_MOST) for s in sentences]
        if not sentences or not all(s and s in p.abstract for s in sentences):
            raise ValueError("evidence must be verbatim sentences of the abstract")
        return cls(n=n, paper_id=p.paper_id, title=p.title, evidence=sentences[0], abstract=p.abstract,
                   score=round(score, 4), venue=p.venue, url=p.url, code_urls=list(p.code_urls),
                   year=p.year, sentences=sentences, authors=list(p.authors))  # fmt: skip

    def quotes(self) -> list[str]:
        """The evidence as shown: each sentence, with "…" where it was trimmed inside a longer sentence."""
        return [elide(self.abstract, s) for s in (self.sentences or [self.evidence])]

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
    usage: dict[str, int] = field(default_factory=dict)  # requests, input_tokens, output_tokens, total_tokens
    cost_usd: float | None = None  # estimated from ASKPAPERS_LLM_PRICE_IN / _OUT, when they are set
    latency_s: float = 0.0
    removed_markers: list[int] = field(default_factory=list)  # [n] markers dropped: not in the context
    draft: str = ""  # a generated answer that was cut off and replaced by the extractive one
    raw: str = ""  # the model's text exactly as it came (``text`` is it checked: markers renumbered)
    total: int = 0  # papers that match (a list answer cites at most ``k`` of them)
    plan: dict[str, Any] = field(default_factory=dict)  # how the question was read (rag.types.QueryPlan)
    matched_ids: list[str] = field(default_factory=list)  # every matching paper, best first (cited or not)

    @property
    def paper_ids(self) -> list[str]:
        """The ids to pass back with the answer for follow-ups: every matching paper (at most
        :data:`MAX_PAPER_IDS`), so that "which of those …" narrows the whole set, not the page shown."""
        cited = [c.paper_id for c in self.citations]
        return list(dict.fromkeys([*cited, *self.matched_ids]))[:MAX_PAPER_IDS]

    @property
    def more(self) -> int:
        """Papers that match but are not listed (a list answer shows at most ``k``)."""
        return max(0, self.total - len(self.citations)) if self.kind == "list" else 0

    def footer(self) -> str:
        """What the answer cost: "LLM (gpt-4.1-mini) · 7 requests · 12,345 tokens in, 456 out · ≈ $0.0031 · 4.2 s"."""
        parts = [f"LLM ({self.model})" if self.mode == "llm" else "extractive (no LLM)"]
        cited = len(self.citations)
        parts.append(f"{cited} of {self.total} cited" if self.total > cited else f"{cited} cited")
        if self.usage.get("requests"):
            n = self.usage["requests"]
            parts.append(f"{n} request{'s' if n != 1 else ''}")
            parts.append(f"{self.usage.get('input_tokens', 0):,} tokens in, {self.usage.get('output_tokens', 0):,} out")
        if self.cost_usd is not None:
            parts.append(f"≈ ${self.cost_usd:.4f}")
        parts.append(f"{self.latency_s:.2f} s")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "found": self.found,
            "kind": self.kind,
            "citations": [c.to_dict() for c in self.citations],
            "paper_ids": self.paper_ids,  # pass back with the answer for follow-ups: every matching paper
            "notices": self.notices,
            "unsupported": self.unsupported,
            "nearest": [{"paper_id": h.paper_id, "title": h.title, "score": h.score} for h in self.nearest],
            "model": self.model,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "latency_s": round(self.latency_s, 4),
            "removed_markers": self.removed_markers,
            "draft": self.draft,
            "raw_answer": self.raw,
            "total": self.total,
            "plan": self.plan,
        }


# -- how a question was read (rag.read.query.plan) ---------------------------------------------------------------------
Intent = Literal["set", "factoid", "count", "overview"]


@dataclass(frozen=True)
class Facet:
    """One thing every matching paper must be about: any one of its alternatives, each in any of its spellings."""

    alternatives: tuple[str, ...]
    spellings: tuple[tuple[str, ...], ...] = ()  # per alternative: the alternative first, then other spellings
    optional: bool = False  # ranks papers, but need not hold (not topical, or cut off a phrase never stated)
    weight: float = 1.0  # how likely it is a topic of the question (rag.read.topicality), not a word of the request

    def all_spellings(self) -> list[str]:
        out = [s for group in (self.spellings or tuple((a,) for a in self.alternatives)) for s in group]
        return list(dict.fromkeys(out))

    def groups(self) -> list[tuple[str, ...]]:
        return list(self.spellings or tuple((a,) for a in self.alternatives))


@dataclass
class QueryPlan:
    """How a question was read."""

    text: str  # the question as asked
    searched: str  # the question as searched: misspellings corrected
    intent: Intent = "set"
    followup: bool = False
    facets: list[Facet] = field(default_factory=list)  # every one must hold
    excluded: list[Facet] = field(default_factory=list)  # none may hold
    filters: Filters = field(default_factory=Filters)  # stated in words
    corrections: list[tuple[str, str]] = field(default_factory=list)  # (as typed, as searched)
    overview: str = ""  # summary | compare | new
    names: list[str] = field(default_factory=list)  # coined method names the question mentions
    framed: bool = True  # the topic is wrapped in a request (rag.read.cues.framed), not stated alone

    @property
    def kind(self) -> str:
        return "factoid" if self.intent == "factoid" else "list"

    @property
    def topic(self) -> str:
        return " and ".join(" or ".join(f.alternatives) for f in self.facets)

    @property
    def alternatives(self) -> list[str]:
        """Every spelling of every facet (the phrases a search may look for)."""
        return list(dict.fromkeys(s for f in self.facets for s in f.all_spellings()))

    def reading(self) -> str:
        """How the question was read, in Markdown: "*reinforcement learning* **and** *robotic manipulation*"."""
        parts = [" or ".join(f"*{md(a)}*" for a in f.alternatives) for f in self.facets]
        text = " **and** ".join(parts)
        if self.excluded:
            text += ", **excluding** " + " or ".join(f"*{md(a)}*" for f in self.excluded for a in f.alternatives)
        return text

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["filters"] = self.filters.model_dump(exclude_none=True)
        d["kind"] = self.kind
        return d


def md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


# -- the LLM path ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """Work under way, streamed between pieces of answer text: "Reading papers 13–24 of 51"."""

    text: str
    done: int = 0
    total: int = 0


MAX_QUERY_CHARS = 2_000
MAX_MODEL_FACETS = 6


class Condensed(BaseModel):
    """The condense step's output: the message as an English search, whatever language it was asked in."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    facets: list[list[str]] = Field(default_factory=list, max_length=MAX_MODEL_FACETS)
    language: str = Field(default="English", max_length=40)


class Verdict(BaseModel):
    """The judge's word on one borderline paper: a "yes" counts only with a quote found in its abstract."""

    paper: int
    match: str = "no"
    quote: str = Field(default="", max_length=2_000)

    @property
    def yes(self) -> bool:
        return self.match.strip().lower() in ("yes", "true", "y")


class Verdicts(BaseModel):
    verdicts: list[Verdict] = Field(default_factory=list, max_length=200)
