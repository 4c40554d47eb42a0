"""Records that flow through ingestion: papers, chunks and the ingest report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from askpapers.vectorstore.errors import QuestionError


class Listed(NamedTuple):
    """A paper as the Papers tab sorts and filters it, read from the derived lexical index, not the store: its
    title as shown (derived from the abstract when it had none), venue and year."""

    paper_id: str
    title: str
    venue: str
    year: int | None


@dataclass(frozen=True)
class Paper:
    """One paper: its abstract plus whatever metadata the input carried or we derived."""

    paper_id: str
    title: str
    abstract: str
    venue: str = ""
    year: int | None = None
    url: str = ""
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    code_urls: tuple[str, ...] = ()
    title_derived: bool = False
    source: str = ""
    # precomputed chunk vectors (one vector: the whole abstract is one chunk), and the embedder that made them
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)
    embedded_with: str = field(default="", repr=False, compare=False)
    # the chunks' (start, end) offsets in the abstract, as the store wrote them ((): not known, as in a store
    # written before they were recorded): a chunk's text is then read from the BM25 index, not from Chroma
    spans: tuple[tuple[int, int], ...] = field(default=(), repr=False, compare=False)

    @property
    def has_code(self) -> bool:
        return bool(self.code_urls)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("embedding", None)
        d.pop("embedded_with", None)
        d.pop("spans", None)
        return d


@dataclass(frozen=True)
class Chunk:
    """A window of consecutive sentences of one abstract, small enough for the embedder."""

    chunk_id: str
    paper_id: str
    position: int
    text: str
    start: int  # character offset of the window in the abstract
    end: int


@dataclass(frozen=True)
class ChunkHit:
    """A chunk returned by a vector query: its paper, its text and its cosine similarity to the query."""

    paper_id: str
    text: str
    similarity: float
    position: int = 0


@dataclass
class IngestReport:
    """What one ingest did."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    chunks: int = 0
    seconds: float = 0.0
    files: int = 0
    total_papers: int = 0
    messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if not (self.added or self.updated):  # a re-run: no rate to speak of
            done = (
                f"all {self.unchanged} papers are already indexed" if self.unchanged else "the input holds no new paper"
            )
            skipped = f" ({self.skipped} skipped)" if self.skipped else ""
            return f"nothing to do: {done}{skipped}; store holds {self.total_papers} papers"
        rate = (self.added + self.updated) / self.seconds if self.seconds > 0 else 0.0
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.skipped} skipped; {self.chunks} chunks written in {self.seconds:.1f}s "
            f"({rate:.1f} abstracts/s); store holds {self.total_papers} papers"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Filters(BaseModel):
    """Which papers a search or answer may use: by venue, year and whether they link code.

    The one filter type: the API validates callers' values into it once, and the store and the BM25 index
    translate from it. ``has_code`` False (or unset) means no filter on code.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    venue: str | None = Field(default=None, max_length=200, description="exact venue, e.g. 'ICML 2026'")
    year: int | None = Field(default=None, ge=1000, le=2999, description="publication year")
    has_code: bool | None = Field(default=None, description="only papers with a code link")

    @field_validator("venue", mode="before")
    @classmethod
    def _blank_venue(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = " ".join(v.split())
            return v or None
        return v

    @field_validator("year", mode="before")
    @classmethod
    def _blank_year(cls, v: Any) -> Any:
        if v == "" or v == 0:
            return None
        return v

    @property
    def empty(self) -> bool:
        return self.venue is None and self.year is None and not self.has_code

    def merged(self, other: Filters | None) -> Filters:
        """These filters, with ``other``'s values where it sets one."""
        if other is None:
            return self
        return Filters(**{**self.model_dump(exclude_none=True), **other.model_dump(exclude_none=True)})

    @classmethod
    def of(cls, value: Filters | dict[str, Any] | None) -> Filters:
        """Validate a caller's filters; a bad name or value is a :class:`QuestionError` that says which."""
        if value is None:
            return cls()
        if isinstance(value, Filters):
            return value
        if not isinstance(value, dict):
            raise QuestionError("filters must be a mapping of venue, year and has_code")
        try:
            return cls(**value)
        except ValidationError as e:
            raise QuestionError(f"invalid filters: {describe_validation(e)}") from None
        except TypeError:
            raise QuestionError("invalid filters: names must be venue, year or has_code") from None


def describe_validation(e: ValidationError) -> str:
    """A pydantic error as one short line: "year: Input should be a valid integer; k: …"."""
    parts = []
    for err in e.errors()[:5]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "value"
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            msg = "unknown name"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)
