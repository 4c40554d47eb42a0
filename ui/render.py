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

from askpapers.rag import printable

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


# -- LaTeX in titles as plain text ------------------------------------------------------------------------------
_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ", "infty": "∞",
    "sqrt": "√", "times": "×", "cdot": "·", "pm": "±", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠",
    "approx": "≈", "sim": "∼", "in": "∈", "to": "→", "rightarrow": "→", "leftarrow": "←", "partial": "∂",
    "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫", "log": "log", "exp": "exp", "min": "min", "max": "max",
    "star": "⋆", "ast": "∗", "circ": "∘", "dagger": "†", "mid": "|", "ldots": "…", "dots": "…", "cdots": "⋯",
}  # fmt: skip
MATH_DEPTH = 8  # ^{…{…}} nested deeper than this stays as typed
LATEX_MOST = 500  # a longer text is no title: it is left as it is
_SUPER = dict(zip("0123456789+-=()nijkTtpx*", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵀᵗᵖˣ*", strict=True))
_SUB = dict(zip("0123456789+-=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """``text`` raised or lowered with Unicode characters when each has one, else ``^text`` / ``_text``."""
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    return mark + text


def _math_text(src: str, depth: int = 0) -> str:
    """One ``$…$`` span as text: symbols and Greek letters as Unicode, font commands and braces dropped."""
    if depth > MATH_DEPTH:
        return src
    out: list[str] = []
    i, n = 0, len(src)

    def group() -> str:  # the argument after ^ or _: one {…} group, one command or one character
        nonlocal i
        while i < n and src[i] == " ":
            i += 1
        if i >= n:
            return ""
        if src[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(src[j], 0)
                j += 1
            inner, i = src[i + 1 : j - 1], j
            return _math_text(inner, depth + 1)
        if src[i] == "\\":
            j = i + 1
            while j < n and src[j].isalpha():
                j += 1
            word, i = src[i + 1 : j], max(j, i + 2)
            if not word:
                return src[i - 1]
            return _SYMBOLS[word] if word in _SYMBOLS else group()  # \textrm{Flow}: a style of its argument
        i += 1
        return src[i - 1]

    while i < n:
        ch = src[i]
        if ch == "\\":
            j = i + 1
            while j < n and src[j].isalpha():
                j += 1
            word = src[i + 1 : j]
            if not word:  # an escaped character: \# \% \{ \, (a thin space) …
                if j < n and src[j] not in ",;:! ":
                    out.append(src[j])
                i = j + 1
                continue
            out.append(_SYMBOLS.get(word, ""))  # \mathcal, \bf, \textrm … only style what follows
            while j < n and src[j] == " ":  # (a control word swallows the spaces after it)
                j += 1
            i = j
        elif ch in "^_":
            i += 1
            out.append(_script(group(), _SUPER if ch == "^" else _SUB, ch))
        elif ch in "{}":
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def latex_text(text: str) -> str:
    """A title's ``$…$`` spans as plain Unicode text (``$\\ell_2$`` → ``ℓ₂``, ``$\\bf{\\Phi}_\\textrm{Flow}$`` →
    ``Φ_Flow``); text outside them, and a lone ``$``, stay as they are. The result is text, never markup."""
    if text.count("$") < 2 or len(text) > LATEX_MOST:
        return text
    parts = text.split("$")
    out = [parts[0]]
    for k in range(1, len(parts)):
        if k % 2 == 1 and k < len(parts) - 1:
            out.append(_math_text(parts[k]))
        else:
            out.append(("$" if k % 2 == 1 else "") + parts[k])
    return "".join(out)
