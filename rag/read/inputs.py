"""The query path's front door: every value a caller passes is validated and bounded here, once.

Whatever reaches planning and retrieval is short, typed and printable, so no later step can be made slow or
confused by its input: the question, the chat history (how many messages, how long each, how long in all),
the filters and ``k``. Bad values are :class:`QuestionError` s whose messages say what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from askpapers.rag.retrieve.index import PaperReads
from askpapers.rag.types import MAX_MESSAGE_CHARS, MAX_PAPER_IDS, Message
from askpapers.vectorstore.errors import QuestionError
from askpapers.vectorstore.text import printable
from askpapers.vectorstore.types import Filters, describe_validation

# A paper named by id: a 16-hex-digit id (the form askpapers gives papers) or "paper id X" where X has a digit.
_PAPER_ID = re.compile(
    r"(?<![\w-])([0-9a-f]{16})(?![\w-])|\bpaper[ _-]?id\s*[:=#]?\s*[\"'“‘`]?([\w.:/-]*\d[\w.:/-]*\w|\d)", re.IGNORECASE
)

MAX_QUESTION_CHARS = 2_000
MAX_HISTORY_MESSAGES = 50  # a long chat; only the last few answers matter to a follow-up
MAX_HISTORY_CHARS = 40_000  # all messages together (two 50-paper answers and their questions fit)
MODES = ("auto", "extractive", "llm")
MAX_K = MAX_PAPER_IDS  # papers one answer may cite: as many as a follow-up's message may carry

__all__ = ["MAX_HISTORY_CHARS", "MAX_HISTORY_MESSAGES", "MAX_K", "MAX_MESSAGE_CHARS", "MAX_QUESTION_CHARS", "Filters"]


def clean_question(question: Any) -> str:
    """The question as printable text (escape sequences and control characters dropped), within the limit."""
    if not isinstance(question, str):
        raise QuestionError("the question must be text")
    if len(question) > 4 * MAX_QUESTION_CHARS:  # before any work on it
        raise QuestionError(f"the question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}")
    q = printable(question).strip()
    if not q:
        raise QuestionError("the question is empty; ask something like “Which papers use information bottleneck?”")
    if len(q) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(q):,} characters long; the limit is {MAX_QUESTION_CHARS:,}")
    return q


def _content(value: Any) -> Any:
    """Message content as text: a string, or OpenAI/Gradio-style parts (``[{"type": "text", "text": …}]``)."""
    if isinstance(value, list):
        parts = [p.get("text", "") if isinstance(p, dict) else p for p in value[:MAX_HISTORY_MESSAGES]]
        if all(isinstance(p, str) for p in parts):
            return " ".join(parts)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return value


def history(messages: Any) -> list[Message]:
    """Validated chat history: user and assistant messages (system messages are ignored), within the bounds."""
    if messages is None:
        return []
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise QuestionError('the history must be a list of {"role", "content"} messages')
    if len(messages) > MAX_HISTORY_MESSAGES:
        raise QuestionError(f"the history has {len(messages):,} messages; the limit is {MAX_HISTORY_MESSAGES}")
    out: list[Message] = []
    total = 0
    for i, m in enumerate(messages, start=1):
        if isinstance(m, Message):
            msg = m
        else:
            if not isinstance(m, dict):
                raise QuestionError(f'history message {i} is not a {{"role", "content"}} object')
            if m.get("role") == "system":
                continue
            content = _content(m.get("content"))
            if isinstance(content, str) and len(content) > MAX_MESSAGE_CHARS:
                raise QuestionError(
                    f"history message {i} has {len(content):,} characters; the limit is {MAX_MESSAGE_CHARS:,}"
                )
            try:
                msg = Message(**{**m, "content": content})
            except ValidationError as e:
                raise QuestionError(f"history message {i}: {describe_validation(e)}") from None
        total += len(msg.content)
        if total > MAX_HISTORY_CHARS:
            raise QuestionError(
                f"the history holds more than {MAX_HISTORY_CHARS:,} characters; send only the recent messages"
            )
        out.append(msg)
    return out


def k_value(k: Any, most: int) -> int | None:
    """``k`` (papers to cite or return) as an integer in 1..``most``, or None for the default."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int | float | str):
        raise QuestionError(f"k must be a whole number from 1 to {most}")
    try:
        n = int(k) if not isinstance(k, float) or k.is_integer() else None
    except (ValueError, OverflowError):
        n = None
    if n is None or not 1 <= n <= most:
        raise QuestionError(f"k must be a whole number from 1 to {most} (got {str(k)[:20]!r})")
    return n


def mode_value(mode: Any, default: str) -> str:
    mode = default if mode is None else mode
    if mode not in MODES:
        raise QuestionError(f"unknown mode {str(mode)[:20]!r} (use auto, extractive or llm)")
    return str(mode)


def filters_value(filters: Any) -> Filters:
    return Filters.of(filters)


def recent(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest messages of a chat that fit the history bounds (older ones are left out), for a client that
    keeps the whole chat: the web app and ``askpapers chat``."""
    out: list[dict[str, Any]] = []
    total = 0
    for m in reversed(messages[-MAX_HISTORY_MESSAGES:]):
        content = str(m.get("content", ""))[:MAX_MESSAGE_CHARS]
        if total + len(content) > MAX_HISTORY_CHARS:
            break
        total += len(content)
        kept = {"role": m.get("role"), "content": content}
        if m.get("paper_ids") is not None:
            kept["paper_ids"] = m["paper_ids"]
        out.append(kept)
    return out[::-1]


def missing_ids(text: str, index: PaperReads) -> list[str]:
    """Paper ids the question names that are not in the store."""
    named = list(dict.fromkeys(a or b for a, b in _PAPER_ID.findall(text)))
    if not named:
        return []
    known = index.papers(list(dict.fromkeys(named + [n.lower() for n in named])))
    return [n for n in named if n not in known and n.lower() not in known]
