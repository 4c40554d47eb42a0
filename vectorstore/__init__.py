"""Ingestion: corpus files → papers → chunks → embeddings → the Chroma store.

``from vectorstore import ingest`` is the public entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pipeline import ingest as ingest

__all__ = ["ingest"]


def __getattr__(name: str) -> Any:
    if name == "ingest":
        from .pipeline import ingest

        return ingest
    raise AttributeError(name)
