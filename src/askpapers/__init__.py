"""askpapers: cited answers about research papers. ``from askpapers import ask, search, add_files``.

The one installed package. Its parts keep their own folders in a checkout and appear under this name through the
symlinks beside this file: ``askpapers.rag`` (retrieval and answers; ``rag/``), ``askpapers.vectorstore``
(ingestion and the store; ``vectorstore/``), ``askpapers.ui`` (the web app and the CLI; ``ui/``), and the data
packages ``askpapers.prompts`` (``prompts/``) and ``askpapers.bundled`` (the bundled corpus, ``data/``).

The names here are :mod:`askpapers.rag`'s public facade, re-exported and loaded on first use (``import askpapers``
stays cheap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from askpapers.rag import __all__ as __all__

if TYPE_CHECKING:
    from askpapers.rag import *  # noqa: F403


def __getattr__(name: str) -> Any:
    if name in __all__:
        from askpapers import rag

        return getattr(rag, name)
    raise AttributeError(f"module 'askpapers' has no attribute {name!r}")
