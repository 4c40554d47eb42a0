"""Retrieval and answers: ``from rag import ask, search``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import AskPapers as AskPapers
    from .api import ask as ask
    from .api import ask_stream as ask_stream
    from .api import search as search
    from .types import Answer as Answer
    from .types import Citation as Citation
    from .types import Hit as Hit

__all__ = ["Answer", "AskPapers", "Citation", "Hit", "ask", "ask_stream", "search"]


def __getattr__(name: str) -> Any:
    if name in ("ask", "ask_stream", "search", "AskPapers"):
        from . import api

        return getattr(api, name)
    if name in ("Answer", "Citation", "Hit"):
        from . import types

        return getattr(types, name)
    raise AttributeError(name)
