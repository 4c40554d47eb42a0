"""The pieces of the page a handler returns: chat messages as the app keeps them, the sources panel (abstracts
with their evidence marked), the notice under an answer, the filters."""

from __future__ import annotations

import html
from typing import Any

from askpapers.rag import MAX_K
from askpapers.rag.types import Answer
from askpapers.ui.render import inline_html, message_html, text_html


def chat_view(convo: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["html"]} for m in convo]


def turn(role: str, content: str, paper_ids: list[str] | None = None) -> dict[str, Any]:
    """One chat message as the app keeps it: its text, the papers it cited, and its safe rendering."""
    return {
        "role": role,
        "content": content,
        "paper_ids": paper_ids,
        "html": message_html(role, content, len(paper_ids or [])),
    }


def highlight(abstract: str, evidence: str) -> str:
    """The abstract as text (its Markdown emphasis shown) with the evidence marked."""
    i = abstract.find(evidence) if evidence else -1
    if i < 0:
        return inline_html(abstract)
    j = i + len(evidence)
    return inline_html(abstract[:i]) + "<mark>" + inline_html(evidence) + "</mark>" + inline_html(abstract[j:])


def showing_html(answer: Answer) -> str:
    """ "Showing 50 of 139 papers" over the sources when the answer lists fewer papers than match."""
    if not answer.more:
        return ""
    rest = "“Show all” lists the rest" if answer.total <= MAX_K else f"“Show {MAX_K}” lists more"
    return f"<p class='meta showing'>Showing {len(answer.citations)} of {answer.total} papers; {rest}.</p>"


def sources_html(answer: Answer | None) -> str:
    if answer is None:
        return "<p class='meta'>Cited papers appear here.</p>"
    parts = [showing_html(answer)]
    if not answer.citations:
        parts.append("<p class='meta'>No paper is cited.</p>")
        for h in answer.nearest:
            parts.append(f"<p class='meta'>Nearest, <b>not matching</b>: {text_html(h.title)}</p>")
    for c in answer.citations:
        venue = f" · {text_html(c.venue)}" if c.venue else ""
        code = "".join(
            f" · <a href='{html.escape(u, quote=True)}' target='_blank' rel='noopener noreferrer'>code</a>"
            for u in c.code_urls
            if u.startswith("https://")
        )
        parts.append(
            f"<details id='source-{c.n}' class='source'><summary>[{c.n}] {text_html(c.title)}</summary>"
            f"<div class='meta'>score {c.score:.4f}{venue}{code}</div>"
            f"<p class='evidence'>“{inline_html(c.quotes()[0])}”</p>"
            f"<p class='abstract'>{highlight(c.abstract, c.evidence)}</p></details>"
        )
    if answer.unsupported:
        items = "".join(f"<li>{text_html(s)}</li>" for s in answer.unsupported)
        parts.append(f"<div class='flag'><b>Not supported by the cited papers:</b><ul>{items}</ul></div>")
    return "\n".join(p for p in parts if p)


def notice_md(answer: Answer | None) -> str:
    if answer is None:
        return ""
    lines = [f"**Answer mode:** {text_html(answer.footer())}"]
    lines += [f"⚠️ {text_html(n)}" for n in answer.notices]
    return "  \n".join(lines)


def filters(venue: str, year: float | str | None, has_code: bool) -> dict[str, Any]:
    """The filter controls as the API takes them (it validates them)."""
    return {"venue": venue or None, "year": year or None, "has_code": bool(has_code) or None}
