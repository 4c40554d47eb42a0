"""Answerers, chosen by name: ``extractive`` (no model) and ``llm`` (any OpenAI-compatible endpoint)."""

from __future__ import annotations

from askpapers.rag.answerers.base import Answerer, Request
from askpapers.rag.answerers.extractive import ExtractiveAnswerer
from askpapers.rag.answerers.llm import LLMAnswerer
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.retrieval import FusionRetriever
from askpapers.rag.settings import Settings

ANSWERERS: dict[str, type[Answerer]] = {a.name: a for a in (ExtractiveAnswerer, LLMAnswerer)}

__all__ = ["ANSWERERS", "Answerer", "ExtractiveAnswerer", "LLMAnswerer", "Request", "answerers"]


def answerers(index: Index, retriever: FusionRetriever, settings: Settings, lexicon: Lexicon) -> dict[str, Answerer]:
    """One answerer of each kind, by name; the LLM answerer falls back to the extractive one."""
    extractive = ExtractiveAnswerer(index, retriever, settings.answer, lexicon)
    return {
        ExtractiveAnswerer.name: extractive,
        LLMAnswerer.name: LLMAnswerer(index, retriever, settings.llm, settings.answer, extractive, lexicon),
    }
