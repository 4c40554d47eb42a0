"""The LLM answer path, built with LangChain LCEL and ``langchain_openai.ChatOpenAI``.

condense (follow-ups) → context of numbered, fenced abstracts → prompt (``prompts/answer.md``) → streamed answer.
The citation check (:mod:`rag.citations`) runs on the finished text. Nothing here downloads anything: the
context is budgeted in characters, so no tokenizer encoding files are ever fetched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable

from vectorstore.resources import package_dir

from .citations import ContextPaper
from .settings import LLMSettings
from .types import Message

_FENCE = re.compile(r"</?\s*(?:abstract|paper|papers|system|instructions?)\b[^>]*>", re.IGNORECASE)


@lru_cache(maxsize=8)
def load_prompt(name: str) -> str:
    """A prompt template from ``prompts/NAME.md`` (package data, so an installed wheel has it too)."""
    return (package_dir("rag.prompts", "prompts") / f"{name}.md").read_text(encoding="utf-8")


def build_llm(s: LLMSettings) -> BaseChatModel:
    """A ChatOpenAI for any OpenAI-compatible endpoint.

    ``max_tokens`` is sent as ``max_completion_tokens`` by langchain-openai; servers such as llama.cpp's
    ignore that name, so non-OpenAI endpoints also get ``max_tokens`` in the body.
    """
    from langchain_openai import ChatOpenAI

    key = s.api_key.get_secret_value() if s.api_key else "not-needed"
    extra: dict[str, Any] = {}
    if s.base_url and "api.openai.com" not in s.base_url:
        extra["max_tokens"] = s.max_tokens
    return ChatOpenAI(
        model=s.model,
        api_key=key,  # type: ignore[arg-type]
        base_url=s.base_url or None,
        temperature=s.temperature,
        timeout=s.timeout,
        max_retries=s.max_retries,
        max_tokens=s.max_tokens,  # type: ignore[call-arg]
        streaming=True,
        stream_usage=True,
        extra_body=extra or None,
    )


def answer_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], Any]:
    """prompt → model; stream it to get message chunks."""
    prompt = ChatPromptTemplate.from_messages([("system", load_prompt("answer")), ("human", "{question}")])
    return prompt | llm


def condense_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], str]:
    """history + follow-up → one standalone question."""
    prompt = ChatPromptTemplate.from_messages([("human", load_prompt("condense"))])
    return prompt | llm | StrOutputParser()


def format_history(history: Sequence[Message], max_chars: int = 4000) -> str:
    """The conversation for the condense prompt: its last ``max_chars`` characters."""
    text = "\n".join(f"{m.role}: {m.content.strip()}" for m in history if m.content.strip())
    return text[-max_chars:]


def fence(text: str) -> str:
    """Abstract text as inert data: tags that could close or open our fences are neutralised."""
    return _FENCE.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), text)


def format_context(papers: Sequence[ContextPaper], budget_chars: int) -> str:
    """Numbered papers, each fenced in an <abstract> element, within a character budget."""
    parts: list[str] = []
    used = 0
    for cp in papers:
        p = cp.paper
        venue = f" — {p.venue}" if p.venue else ""
        body = fence(p.abstract)
        room = budget_chars - used - len(p.title) - 64
        if room < 200:
            break
        if len(body) > room:
            body = body[:room].rsplit(" ", 1)[0] + " …"
        block = f'[{cp.n}] {fence(p.title)}{venue}\n<abstract n="{cp.n}">\n{body}\n</abstract>'
        parts.append(block)
        used += len(block) + 2
    return "\n\n".join(parts)


def describe_error(e: BaseException, s: LLMSettings) -> str:
    """A one-line reason for the user; never contains the API key."""
    import openai

    status = getattr(e, "status_code", None)
    if isinstance(e, openai.AuthenticationError):
        reason = "the endpoint rejected the API key (401); check OPENAI_API_KEY"
    elif isinstance(e, openai.PermissionDeniedError):
        reason = "the endpoint refused access (403)"
    elif isinstance(e, openai.NotFoundError):
        reason = f"model '{s.model}' was not found at the endpoint (404); check ASKPAPERS_LLM_MODEL"
    elif isinstance(e, openai.RateLimitError):
        reason = f"the endpoint is rate-limiting requests (429) after {s.max_retries} retries"
    elif isinstance(e, openai.APITimeoutError):
        reason = f"the endpoint did not answer within {s.timeout:g}s"
    elif isinstance(e, openai.APIConnectionError):
        reason = "the endpoint could not be reached"
    elif isinstance(e, openai.APIStatusError):
        reason = f"the endpoint returned an error ({status})"
    elif isinstance(e, openai.APIResponseValidationError | ValueError):
        reason = "the endpoint sent a malformed response"
    else:
        reason = f"the request failed ({type(e).__name__})"
    return redact(reason, s)


def redact(text: str, s: LLMSettings) -> str:
    key = s.api_key.get_secret_value() if s.api_key else ""
    return text.replace(key, "***") if len(key) >= 4 else text
