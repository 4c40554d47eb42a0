"""Answer text to HTML that cannot load anything: safe by construction, whatever the model wrote.

An answer (ours, or a model's that may obey a hostile abstract) is Markdown. It is rendered by markdown-it-py
with raw HTML off, images off and link references off, so ``<img …>``, ``![…](…)`` and ``[x]: url`` stay text.
Links survive only as text-bearing ``<a>`` elements: a citation marker ``[n]`` links to its source (``#source-n``),
an http(s) link shows its own URL as its text, and any other link becomes plain text. The HTML then passes an
allow-list sanitiser (nh3): a fixed set of tags, no ``src``, ``style``, ``background``, ``srcset`` or event
attributes at all, and only ``href`` values of those two shapes. Every partial render while an answer streams
goes through the same two steps.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

from askpapers.rag import latex_text, printable

__all__ = ["answer_html", "emphasised", "inline_html", "latex_text", "message_html", "text_html"]

MARKER = re.compile(r"\[(\d{1,4})\]")
_SOURCE_HREF = re.compile(r"#source-\d{1,4}")
TAGS = {
    "p", "br", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "a", "table", "thead", "tbody", "tr", "th", "td", "del", "s", "span", "sup", "sub",
}  # fmt: skip
ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
CLASSES = {"a": {"cite", "url"}, "span": {"math"}}


def _is_web(href: str) -> bool:
    return href.startswith(("http://", "https://")) and " " not in href


def _href_filter(tag: str, attr: str, value: str) -> str | None:
    if tag == "a" and attr == "href":
        return value if _SOURCE_HREF.fullmatch(value) or _is_web(value) else None
    return value


def _text(content: str) -> Token:
    t = Token("text", "", 0)
    t.content = content
    return t


def _link(href: str, label: str, cls: str) -> list[Token]:
    open_ = Token("link_open", "a", 1)
    open_.attrs = {"href": href, "class": cls}
    return [open_, _text(label), Token("link_close", "a", -1)]


def emphasised(children: list[Token]) -> list[Token]:
    """Text that quotes Markdown emphasis (an abstract's ``**SymSpectra**``, escaped so it stays text) shown as
    emphasis: each text token is read again by the emphasis-only parser."""
    out: list[Token] = []
    for tok in children:
        if tok.type == "text" and ("*" in tok.content or "_" in tok.content):
            out.extend(_emphasis().parseInline(tok.content)[0].children or [tok])
        else:
            out.append(tok)
    return out


def _rewrite_inline(children: list[Token], sources: int) -> list[Token]:
    """Links made safe (see the module text) and ``[n]`` markers linked to their sources."""
    out: list[Token] = []
    i = 0
    while i < len(children):
        tok = children[i]
        if tok.type == "link_open":
            depth, j = 1, i + 1
            while j < len(children) and depth:
                depth += {"link_open": 1, "link_close": -1}.get(children[j].type, 0)
                j += 1
            inner = children[i + 1 : j - 1]
            href = str(tok.attrs.get("href", ""))
            if _is_web(href):
                out.extend(_link(href, href, "url"))  # the URL itself is what the reader sees
            else:
                out.extend(_rewrite_inline(inner, sources))  # javascript:, relative, data: … become text
            i = j
            continue
        if tok.type == "text" and sources and "[" in tok.content:
            pos = 0
            for m in MARKER.finditer(tok.content):
                n = int(m.group(1))
                if 1 <= n <= sources:
                    if m.start() > pos:
                        out.append(_text(tok.content[pos : m.start()]))
                    out.extend(_link(f"#source-{n}", f"[{n}]", "cite"))
                    pos = m.end()
            if pos:
                if pos < len(tok.content):
                    out.append(_text(tok.content[pos:]))
                i += 1
                continue
        out.append(tok)
        i += 1
    return out


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True})
    md.enable(["table", "strikethrough"])
    md.disable(["image", "reference", "html_inline", "html_block"])
    return md


@lru_cache(maxsize=1)
def _emphasis() -> MarkdownIt:
    """Markdown that knows only ``*emphasis*`` and ``**strong**``: no links, no HTML, no escapes, nothing else."""
    return MarkdownIt("zero", {"html": False, "linkify": False, "typographer": False}).enable(["emphasis"])


@lru_cache(maxsize=1)
def _cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=TAGS,
        attributes=ATTRIBUTES,
        attribute_filter=_href_filter,
        allowed_classes=CLASSES,
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def answer_html(text: str, sources: int = 0) -> str:
    """Safe HTML for an answer in Markdown whose ``[1]``…``[sources]`` markers link to the sources panel."""
    md = _parser()
    tokens = md.parse(printable(text))
    for tok in tokens:
        if tok.type == "inline" and tok.children:
            tok.children = _rewrite_inline(emphasised(tok.children), sources)
    return str(_cleaner().clean(md.renderer.render(tokens, md.options, {})))


def text_html(text: str) -> str:
    """Plain text (a question, a title, an abstract) as HTML text: escaped, printable, never markup."""
    return html.escape(printable(text, newlines=False))


def inline_html(text: str) -> str:
    """Plain text (an abstract, its evidence) as HTML text whose Markdown emphasis shows as emphasis; every other
    character, ``<`` and ``[x](…)`` included, stays text."""
    return str(_cleaner().clean(_emphasis().renderInline(printable(text, newlines=False))))


def message_html(role: str, text: str, sources: int = 0) -> str:
    """A chat bubble: the user's own words as text, an answer as safe Markdown."""
    return answer_html(text, sources) if role == "assistant" else f"<p>{text_html(text)}</p>"
