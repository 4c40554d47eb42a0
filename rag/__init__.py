"""Retrieval and answers: ``from rag import ask, search``.

This package's top is its public facade: the web app, the CLI and the benchmarks import from here (and from
``rag.types`` and ``rag.settings``), never from the query path's parts; ``lint-imports`` holds them to it. The
facade also re-exports what a caller needs from the storage layer: the user-facing errors and the text helpers
that make stored text safe to show.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vectorstore.errors import AskPapersError as AskPapersError
    from vectorstore.errors import BadLinesError as BadLinesError
    from vectorstore.errors import InputError as InputError
    from vectorstore.errors import QuestionError as QuestionError
    from vectorstore.text import BIDI_CONTROLS as BIDI_CONTROLS
    from vectorstore.text import printable as printable
    from vectorstore.types import Paper as Paper

    from .api import AskPapers as AskPapers
    from .api import add_files as add_files
    from .api import ask as ask
    from .api import ask_stream as ask_stream
    from .api import corpus_map as corpus_map
    from .api import default_app as default_app
    from .api import papers as papers
    from .api import search as search
    from .api import stop_ingests as stop_ingests
    from .decide.snippets import clip as clip
    from .evaluation.evaluate import default_cache as default_cache
    from .evaluation.evaluate import detect as detect
    from .evaluation.evaluate import eval_beir as eval_beir
    from .evaluation.evaluate import eval_conference as eval_conference
    from .evaluation.evaluate import eval_dev as eval_dev
    from .evaluation.evaluate import eval_phrasings as eval_phrasings
    from .read.inputs import MAX_K as MAX_K
    from .read.inputs import clean_question as clean_question
    from .read.inputs import recent as recent_messages
    from .report.citation_export import to_bibtex as to_bibtex
    from .report.citation_export import to_csv as to_csv
    from .report.citation_export import to_markdown as to_markdown
    from .report.topic_map import MapPoint as MapPoint
    from .types import Answer as Answer
    from .types import Citation as Citation
    from .types import Hit as Hit
    from .types import Progress as Progress

# name -> the module that defines it (loaded on first use: `import rag` stays cheap)
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "AskPapers",
            "add_files",
            "ask",
            "ask_stream",
            "corpus_map",
            "default_app",
            "papers",
            "search",
            "stop_ingests",
        ),
        "rag.api",
    ),
    **dict.fromkeys(("Answer", "Citation", "Hit", "Progress"), "rag.types"),
    **dict.fromkeys(("MAX_K", "clean_question"), "rag.read.inputs"),
    "recent_messages": "rag.read.inputs",  # (named apart from rag.read.inputs.recent, which reads the history)
    "clip": "rag.decide.snippets",
    **dict.fromkeys(("to_bibtex", "to_csv", "to_markdown"), "rag.report.citation_export"),
    **dict.fromkeys(
        ("default_cache", "detect", "eval_beir", "eval_conference", "eval_dev", "eval_phrasings"),
        "rag.evaluation.evaluate",
    ),
    "MapPoint": "rag.report.topic_map",
    **dict.fromkeys(("AskPapersError", "BadLinesError", "InputError", "QuestionError"), "vectorstore.errors"),
    **dict.fromkeys(("BIDI_CONTROLS", "printable"), "vectorstore.text"),
    "Paper": "vectorstore.types",
}
__all__ = [
    "BIDI_CONTROLS",
    "MAX_K",
    "Answer",
    "AskPapers",
    "AskPapersError",
    "BadLinesError",
    "Citation",
    "Hit",
    "InputError",
    "MapPoint",
    "Paper",
    "Progress",
    "QuestionError",
    "add_files",
    "ask",
    "ask_stream",
    "clean_question",
    "clip",
    "corpus_map",
    "default_app",
    "default_cache",
    "detect",
    "eval_beir",
    "eval_conference",
    "eval_dev",
    "eval_phrasings",
    "papers",
    "printable",
    "recent_messages",
    "search",
    "stop_ingests",
    "to_bibtex",
    "to_csv",
    "to_markdown",
]
assert sorted(__all__) == sorted(_EXPORTS)


_RENAMED = {"recent_messages": "recent"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), _RENAMED.get(name, name))
    raise AttributeError(name)
