"""Retrieval and answers: ``from rag import ask, search``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import AskPapers as AskPapers
    from .api import add_files as add_files
    from .api import ask as ask
    from .api import ask_stream as ask_stream
    from .api import corpus_map as corpus_map
    from .api import papers as papers
    from .api import search as search
    from .types import Answer as Answer
    from .types import Citation as Citation
    from .types import Hit as Hit

_API = ("AskPapers", "add_files", "ask", "ask_stream", "corpus_map", "papers", "search")
_TYPES = ("Answer", "Citation", "Hit")
__all__ = [*_API, *_TYPES]


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _TYPES:
        from . import types

        return getattr(types, name)
    raise AttributeError(name)
