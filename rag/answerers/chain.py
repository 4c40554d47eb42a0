"""The LLM steps, built with LangChain LCEL and ``langchain_openai.ChatOpenAI``, one prompt file each:

condense (any message → English query, facets and language; JSON mode with a validated fallback) → judge
(borderline papers, JSON) → map (cited notes per batch of papers) → reduce (one streamed answer), or answer (one
request when everything fits). The citation check (:mod:`rag.decide.citations`) runs on the finished text. Nothing
here downloads anything: contexts are budgeted in characters, so no tokenizer files are ever fetched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from askpapers.rag.decide.citations import ContextPaper
from askpapers.rag.settings import LLMSettings
from askpapers.rag.types import Condensed, Message, Verdicts
from askpapers.vectorstore.resources import package_dir

if TYPE_CHECKING:  # LangChain is imported when a model is first used: extractive answers never load it
    from langchain_core.language_models import BaseChatModel
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import Runnable

M = TypeVar("M", Condensed, Verdicts)
MAX_JSON_CHARS = 50_000  # a model's JSON reply read at most this long (a longer one is not a valid reply)

_FENCE = re.compile(r"</?\s*(?:abstract|paper|papers|system|instructions?)\b[^>]*>", re.IGNORECASE)


@lru_cache(maxsize=8)
def load_prompt(name: str) -> str:
    """A prompt template from ``prompts/NAME.md`` (package data, so an installed wheel has it too)."""
    return (package_dir("askpapers.prompts", "prompts") / f"{name}.md").read_text(encoding="utf-8")


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


def _prompt(name: str) -> ChatPromptTemplate:
    """The prompt file as the system message; the question as the human message."""
    from langchain_core.prompts import ChatPromptTemplate

    return ChatPromptTemplate.from_messages([("system", load_prompt(name)), ("human", "{question}")])


def prompt_variables(name: str) -> set[str]:
    return set(_prompt(name).input_variables)


def answer_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], Any]:
    """One request over every paper (streamed): message chunks."""
    return _prompt("answer") | llm


def _whole(llm: BaseChatModel) -> BaseChatModel:
    """The model answering in one response rather than a stream: for steps whose output is only used whole (the
    notes of a batch, JSON), so a broken response is one clear error."""
    return llm.model_copy(update={"streaming": False}) if getattr(llm, "streaming", False) else llm


def map_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], str]:
    """Cited notes on one batch of papers."""
    from langchain_core.output_parsers import StrOutputParser

    return _prompt("map") | _whole(llm) | StrOutputParser()


def reduce_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], Any]:
    """The batches' notes merged into one answer (streamed): message chunks."""
    return _prompt("reduce") | llm


def condense_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], Any]:
    """message (+ history) → {"parsed": Condensed | None, "raw": AIMessage, "parsing_error": …}."""
    return _prompt("condense") | _whole(llm).with_structured_output(Condensed, method="json_mode", include_raw=True)


def judge_chain(llm: BaseChatModel) -> Runnable[dict[str, Any], Any]:
    """borderline papers → {"parsed": Verdicts | None, "raw": AIMessage, …}."""
    return _prompt("judge") | _whole(llm).with_structured_output(Verdicts, method="json_mode", include_raw=True)


def structured(out: Any, schema: type[M]) -> M | None:
    """The validated object of a structured-output reply; failing that, the first JSON object in the raw text
    (models often wrap it in prose or a code fence), validated the same way; None when there is none."""
    parsed = out.get("parsed") if isinstance(out, dict) else None
    if isinstance(parsed, schema):
        return parsed
    raw = out.get("raw") if isinstance(out, dict) else None
    text = raw.content if raw is not None and isinstance(getattr(raw, "content", None), str) else ""
    text = text[:MAX_JSON_CHARS]
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return schema.model_validate(json.loads(text[start : end + 1]))
    except ValueError:  # json.JSONDecodeError and pydantic.ValidationError are both ValueErrors
        return None


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
