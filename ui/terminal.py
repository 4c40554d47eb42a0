"""Answers and search results for a terminal: Markdown read into rich ``Text`` (never rich markup), wrapped, with
bold titles; plain text when stdout is not a terminal.

Everything shown is text: the answer's Markdown is parsed (markdown-it, HTML and entities off) only to resolve its
escapes and emphasis, so a quote prints exactly as the abstract has it (``$\\times$``, not ``$\\\\times$``), and
"[bold]" or an escape sequence in an abstract is shown (or, for control characters, dropped) but never obeyed.
Links print as their text and address; rich's hyperlink escapes are never written.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from askpapers.rag import printable
from askpapers.ui.render import emphasised, latex_text

_MD = MarkdownIt("commonmark", {"html": False}).disable("entity")  # "&amp;" in an abstract stays "&amp;"
BOLD = Style(bold=True)
ITALIC = Style(italic=True)
DIM = Style(dim=True)
WIDTH_MOST = 100  # wrap at the terminal's width, but no wider (long lines are hard to read)


def safe(text: str) -> str:
    """Text from the corpus or a model, for one line of a terminal: escape sequences and controls dropped."""
    return printable(text, newlines=False)


@dataclass
class Block:
    """One paragraph of output: its text, a list marker ("1.", "•") or quote bar, and how deep it is nested."""

    text: Text
    marker: str = ""
    depth: int = 0
    gap: bool = True  # a blank line before it


def title_text(title: str) -> str:
    """A paper's title for one line of a terminal: its LaTeX (``$\\ell_2$``) as Unicode text (``ℓ₂``), as the web app's
    tables show it. Only titles: quotes from abstracts stay exactly as the abstract has them."""
    return latex_text(safe(title))


def _inline(tok: Token, titles: Collection[str] = ()) -> Text:
    out = Text()
    styles: list[Style] = []
    href: list[str] = []
    strong: list[int] = []  # where each open **…** began in ``out``
    for child in emphasised(tok.children or []):  # a quote's own **emphasis** shows as emphasis (as on the web)
        style = Style.combine(styles) if styles else None
        if child.type == "text":
            out.append(safe(child.content), style)
        elif child.type == "code_inline":
            out.append(safe(child.content), Style(bold=True) if style is None else style)
        elif child.type == "softbreak":
            out.append(" ")
        elif child.type == "hardbreak":
            out.append("\n")
        elif child.type in ("strong_open", "em_open"):
            styles.append(BOLD if child.type == "strong_open" else ITALIC)
            if child.type == "strong_open":
                strong.append(len(out.plain))
        elif child.type in ("strong_close", "em_close") and styles:
            styles.pop()
            start = strong.pop() if child.type == "strong_close" and strong else -1
            if start >= 0 and out.plain[start:] in titles:  # a cited paper's title (never a quote): its math as text
                shown = title_text(out.plain[start:])
                out = out[:start]
                out.append(shown, Style.combine([*styles, BOLD]))
        elif child.type == "link_open":
            href.append(str(child.attrs.get("href", "")))
        elif child.type == "link_close" and href:
            url = href.pop()
            if url and url not in out.plain[-len(url) :]:
                out.append(f" ({safe(url)})", DIM)
        elif child.type == "image":
            alt = "".join(c.content for c in child.children or []) or child.content
            out.append(safe(f"{alt} ({child.attrs.get('src', '')})"))
        else:  # anything else a parser may add is shown as its source text
            out.append(safe(child.content), style)
    return out


def blocks(markdown: str, titles: Collection[str] = ()) -> list[Block]:
    """The paragraphs, list items, headings and quotes of ``markdown`` as styled text; a bold span that is one of
    ``titles`` (the cited papers') shows its LaTeX as text."""
    titles = {safe(t) for t in titles}
    out: list[Block] = []
    markers: list[str] = []  # per open list item: the marker its first paragraph takes ("" once taken)
    depth = quote = 0
    heading = False
    for tok in _MD.parse(markdown):
        if tok.type in ("heading_open", "heading_close"):
            heading = tok.type == "heading_open"
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open":
            markers.append(f"{tok.info}{tok.markup}" if tok.info else "•")
        elif tok.type == "list_item_close" and markers:
            markers.pop()
        elif tok.type == "blockquote_open":
            quote += 1
        elif tok.type == "blockquote_close":
            quote -= 1
        elif tok.type in ("inline", "code_block", "fence", "html_block"):
            if tok.type == "inline":
                text = _inline(tok, titles)
                if heading:
                    text.stylize(BOLD)
            else:
                text = Text("\n".join(safe(line) for line in tok.content.rstrip("\n").split("\n")))
            marker = "│" if quote else ""
            if markers and markers[-1]:
                marker, markers[-1] = markers[-1], ""
            in_list = bool(depth)
            gap = not (in_list and out and out[-1].marker not in ("", "│") and marker)  # list items run on
            out.append(Block(text, marker, max(depth - 1, 0) if marker else depth, gap))
    return out


def plain(markdown: str) -> str:
    """The Markdown as plain text, one line per paragraph or list item (what a pipe or a file gets)."""
    lines: list[str] = []
    for b in blocks(markdown):
        if b.gap and lines:
            lines.append("")
        indent = "   " * b.depth
        lines.append(f"{indent}{b.marker + ' ' if b.marker else ''}{b.text.plain}")
    return "\n".join(lines)


def source_line(c: Any) -> Text:
    """A citation in the Sources block: "Title — Venue Year", then its address and code links (dim)."""
    line = Text(title_text(c.title), BOLD)
    year = str(c.year) if c.year and str(c.year) not in c.venue else ""
    where = " ".join(safe(x) for x in (c.venue, year) if x)
    if where:
        line.append(f" — {where}")
    details = [safe(c.url)] if c.url else []
    if c.code_urls:
        details.append("code: " + ", ".join(safe(u) for u in c.code_urls))
    if details:
        line.append(" · " + " · ".join(details), DIM)
    return line


class Screen:
    """Where the CLI prints: a terminal gets wrapped, styled text; anything else gets plain lines."""

    def __init__(self, file: IO[str] | None = None, terminal: bool | None = None) -> None:
        self.file = file or sys.stdout
        self.terminal = self.file.isatty() if terminal is None else terminal
        width = None
        if self.terminal:
            probe = Console(file=self.file)
            width = min(probe.width, WIDTH_MOST)
        self.console = Console(
            file=self.file, width=width, highlight=False, markup=False, emoji=False,
            force_terminal=self.terminal, no_color=not self.terminal, soft_wrap=not self.terminal,
        )  # fmt: skip

    def text(self, text: Text | str = "", gap: bool = False) -> None:
        """One paragraph: wrapped on a terminal, one line elsewhere."""
        if gap:
            self.console.print()
        item = text if isinstance(text, Text) else Text(safe(text))
        if self.terminal:
            self.console.print(item, overflow="fold")
        else:
            self.console.file.write(item.plain + "\n")

    def markdown(self, markdown: str, titles: Collection[str] = ()) -> None:
        """Markdown shown as text: list items hang under their markers; ``titles`` as :func:`blocks` shows them."""
        first = True
        for b in blocks(markdown, titles):
            if b.gap and not first:
                self.text()
            first = False
            if not b.marker and not b.depth:
                self.text(b.text)
            else:
                self.hanging(b.marker, b.text, 3 * b.depth)

    def hanging(self, marker: str, text: Text, indent: int = 0) -> None:
        """``marker`` then ``text`` (``indent`` spaces in), wrapped lines hanging under the text."""
        if not self.terminal:
            self.console.file.write(f"{' ' * indent}{marker + ' ' if marker else ''}{text.plain}\n")
            return
        grid = Table.grid(padding=(0, 1, 0, 0))
        cells: list[Text] = []
        if indent:
            grid.add_column(width=indent - 1, no_wrap=True)
            cells.append(Text())
        if marker:
            grid.add_column(no_wrap=True, justify="right")
            cells.append(Text(marker, DIM) if marker == "│" else Text(marker))
        grid.add_column(overflow="fold")
        grid.add_row(*cells, text)
        self.console.print(grid)


class Draft:
    """An answer's text shown live as it is generated, then erased when the checked answer is printed in its place.

    Only on a terminal (``Screen.terminal``), and only for text that comes in more than one piece (an LLM writing
    it; an extractive answer comes whole). Every piece is :func:`printable` before it is kept, so an escape sequence
    or control character a model writes is dropped and what is left is shown as text. The view is a dim note and
    the text's last lines, never taller than the screen, so that it can be erased exactly; the only escape
    sequences written are rich's own, to redraw and erase it.
    """

    NOTE = "writing the answer… (a draft: the checked answer replaces it)"

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.text = ""
        self.pieces = 0
        self.live: Live | None = None

    def add(self, piece: str) -> None:
        """One piece of the answer's text: the view starts with the second piece that holds text."""
        if not piece:
            return
        self.text += printable(piece)  # (a string assigned whole: the refresh thread reads one or the other)
        self.pieces += bool(piece.strip())
        if self.live is None and self.pieces > 1 and self.screen.terminal:
            self.live = Live(get_renderable=lambda: _Tail(self), console=self.screen.console, transient=True,
                             refresh_per_second=8, redirect_stdout=True, redirect_stderr=True)  # fmt: skip
            self.live.start()

    def close(self) -> None:
        """Erase the view (the checked answer is printed next)."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def __enter__(self) -> Draft:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class _Tail:
    """The draft as rich renders it: the note, then as many of the text's last lines as fit under it."""

    def __init__(self, draft: Draft) -> None:
        self.draft = draft

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = Text(self.draft.text.strip("\n"))
        lines = console.render_lines(text, options.update(height=None), pad=False)
        room = max(1, options.size.height - 2)  # the note, and one line for the cursor
        yield Segment(Draft.NOTE, DIM)
        yield Segment.line()
        for line in lines[-room:]:
            yield from line
            yield Segment.line()
