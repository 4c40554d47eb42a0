"""Records that flow through ingestion: papers, chunks and the ingest report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


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

    @property
    def has_code(self) -> bool:
        return bool(self.code_urls)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("embedding", None)
        d.pop("embedded_with", None)
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
        rate = (self.added + self.updated) / self.seconds if self.seconds > 0 else 0.0
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.skipped} skipped; {self.chunks} chunks written in {self.seconds:.1f}s "
            f"({rate:.1f} abstracts/s); store holds {self.total_papers} papers"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
