"""Titles for papers that come without one, written by the configured LLM once per paper at ingest.

Each reply is checked against its abstract (:func:`vectorstore.titles.checked_title`: one short line whose
content words all occur in the abstract); a reply that fails, or a request that fails, keeps the offline title.
The title is stored marked as derived, like the offline one, and a paper is titled again only when it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from askpapers.rag.answerers.chain import _prompt, _whole, build_llm
from askpapers.rag.settings import LLMSettings
from askpapers.vectorstore.pipeline import Titler
from askpapers.vectorstore.titles import checked_title
from askpapers.vectorstore.types import Paper

log = logging.getLogger(__name__)
CONCURRENCY = 4  # requests at a time


def llm_titler(settings: LLMSettings) -> Titler:
    """A titler for :func:`vectorstore.pipeline.ingest` that asks the model for each paper's title."""
    from langchain_core.output_parsers import StrOutputParser

    chain = _prompt("title") | _whole(build_llm(settings)) | StrOutputParser()

    def titles(papers: Sequence[Paper]) -> list[str | None]:
        if not papers:
            return []
        replies = chain.batch(
            [{"question": p.abstract} for p in papers], config={"max_concurrency": CONCURRENCY}, return_exceptions=True
        )
        out: list[str | None] = []
        for p, reply in zip(papers, replies, strict=True):
            title = checked_title(reply, p.abstract) if isinstance(reply, str) else None
            if title is None:
                why = "request failed" if not isinstance(reply, str) else "title not grounded in the abstract"
                log.info("paper %s keeps its offline title (%s)", p.paper_id, why)
            out.append(title)
        return out

    return titles
