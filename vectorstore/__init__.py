"""Ingestion: corpus files → papers → chunks → embeddings → the Chroma store.

``from askpapers.vectorstore import ingest`` is the public entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askpapers.vectorstore.pipeline import ingest as ingest

# Refused under its old top-level name (this folder imported from a checkout's root): no module is ever
# loaded under two names.
if __name__ != "askpapers.vectorstore":
    raise ImportError(f"{__name__}: import askpapers.vectorstore (the top-level vectorstore is not this project)")

__all__ = ["ingest"]


def __getattr__(name: str) -> Any:
    if name == "ingest":
        from askpapers.vectorstore.pipeline import ingest

        return ingest
    raise AttributeError(name)
