"""Answerers, chosen by name: ``extractive`` (no model) and ``llm`` (any OpenAI-compatible endpoint)."""

from __future__ import annotations

from ..read.lexicon import Lexicon
from ..retrieve.index import Index
from ..retrieve.retrieval import FusionRetriever
from ..settings import Settings
from .base import Answerer, Request
from .extractive import ExtractiveAnswerer
from .llm import LLMAnswerer

ANSWERERS: dict[str, type[Answerer]] = {a.name: a for a in (ExtractiveAnswerer, LLMAnswerer)}

__all__ = ["ANSWERERS", "Answerer", "ExtractiveAnswerer", "LLMAnswerer", "Request", "answerers"]


def answerers(index: Index, retriever: FusionRetriever, settings: Settings, lexicon: Lexicon) -> dict[str, Answerer]:
    """One answerer of each kind, by name; the LLM answerer falls back to the extractive one."""
    extractive = ExtractiveAnswerer(index, retriever, settings.answer)
    return {
        ExtractiveAnswerer.name: extractive,
        LLMAnswerer.name: LLMAnswerer(index, retriever, settings.llm, settings.answer, extractive, lexicon),
    }
