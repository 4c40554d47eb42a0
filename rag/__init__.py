"""Retrieval and answers: ``from askpapers.rag import ask, search``.

This package's top is its public facade: the web app, the CLI and the benchmarks import from here (and from
``rag.types`` and ``rag.settings``), never from the query path's parts; ``lint-imports`` holds them to it. The
facade also re-exports what a caller needs from the storage layer: the user-facing errors and the text helpers
that make stored text safe to show.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askpapers.rag.api import AskPapers as AskPapers
    from askpapers.rag.api import add_files as add_files
    from askpapers.rag.api import ask as ask
    from askpapers.rag.api import ask_stream as ask_stream
    from askpapers.rag.api import corpus_map as corpus_map
    from askpapers.rag.api import default_app as default_app
    from askpapers.rag.api import papers as papers
    from askpapers.rag.api import search as search
    from askpapers.rag.api import stop_ingests as stop_ingests
    from askpapers.rag.decide.snippets import clip as clip
    from askpapers.rag.evaluation.evaluate import default_cache as default_cache
    from askpapers.rag.evaluation.evaluate import detect as detect
    from askpapers.rag.evaluation.evaluate import eval_beir as eval_beir
    from askpapers.rag.evaluation.evaluate import eval_conference as eval_conference
    from askpapers.rag.evaluation.evaluate import eval_dev as eval_dev
    from askpapers.rag.evaluation.evaluate import eval_phrasings as eval_phrasings
    from askpapers.rag.read.inputs import MAX_K as MAX_K
    from askpapers.rag.read.inputs import clean_question as clean_question
    from askpapers.rag.read.inputs import recent as recent_messages
    from askpapers.rag.report.catalogue import SORTS as SORTS
    from askpapers.rag.report.catalogue import PaperPage as PaperPage
    from askpapers.rag.report.citation_export import to_bibtex as to_bibtex
    from askpapers.rag.report.citation_export import to_csv as to_csv
    from askpapers.rag.report.citation_export import to_markdown as to_markdown
    from askpapers.rag.report.latex import latex_text as latex_text
    from askpapers.rag.report.topic_map import MapPoint as MapPoint
    from askpapers.rag.report.topic_map import MapView as MapView
    from askpapers.rag.runtime import settle as settle
    from askpapers.rag.types import Answer as Answer
    from askpapers.rag.types import Citation as Citation
    from askpapers.rag.types import Hit as Hit
    from askpapers.rag.types import Progress as Progress
    from askpapers.vectorstore.errors import AskPapersError as AskPapersError
    from askpapers.vectorstore.errors import BadLinesError as BadLinesError
    from askpapers.vectorstore.errors import InputError as InputError
    from askpapers.vectorstore.errors import QuestionError as QuestionError
    from askpapers.vectorstore.text import BIDI_CONTROLS as BIDI_CONTROLS
    from askpapers.vectorstore.text import printable as printable
    from askpapers.vectorstore.types import Paper as Paper

# Refused under its old top-level name (this folder imported from a checkout's root): no module is ever
# loaded under two names.
if __name__ != "askpapers.rag":
    raise ImportError(f"{__name__}: import askpapers.rag (the top-level rag is not this project)")

# name -> the module that defines it (loaded on first use: `import askpapers.rag` stays cheap)
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
        "askpapers.rag.api",
    ),
    **dict.fromkeys(("Answer", "Citation", "Hit", "Progress"), "askpapers.rag.types"),
    **dict.fromkeys(("MAX_K", "clean_question"), "askpapers.rag.read.inputs"),
    "recent_messages": "askpapers.rag.read.inputs",  # (as rag.read.inputs.recent)
    "clip": "askpapers.rag.decide.snippets",
    **dict.fromkeys(("to_bibtex", "to_csv", "to_markdown"), "askpapers.rag.report.citation_export"),
    **dict.fromkeys(
        ("default_cache", "detect", "eval_beir", "eval_conference", "eval_dev", "eval_phrasings"),
        "askpapers.rag.evaluation.evaluate",
    ),
    **dict.fromkeys(("MapPoint", "MapView"), "askpapers.rag.report.topic_map"),
    **dict.fromkeys(("PaperPage", "SORTS"), "askpapers.rag.report.catalogue"),
    "latex_text": "askpapers.rag.report.latex",
    "settle": "askpapers.rag.runtime",
    **dict.fromkeys(("AskPapersError", "BadLinesError", "InputError", "QuestionError"), "askpapers.vectorstore.errors"),
    **dict.fromkeys(("BIDI_CONTROLS", "printable"), "askpapers.vectorstore.text"),
    "Paper": "askpapers.vectorstore.types",
}
__all__ = [
    "BIDI_CONTROLS",
    "MAX_K",
    "SORTS",
    "Answer",
    "AskPapers",
    "AskPapersError",
    "BadLinesError",
    "Citation",
    "Hit",
    "InputError",
    "MapPoint",
    "MapView",
    "Paper",
    "PaperPage",
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
    "latex_text",
    "papers",
    "printable",
    "recent_messages",
    "search",
    "settle",
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
