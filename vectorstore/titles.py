"""Display titles for papers that come without one, and code links found in abstracts.

A title is the method the abstract names ("SoftBinary Coding (SBC)", "WaterSIC"), with the abstract's best key
phrase after a short name ("FedFit: Federated learning"), if any, else the abstract's best key phrases ("Expected
information gain and intractable estimators"). Key phrases are noun-phrase-like spans
of the abstract (see :func:`key_phrases`), so a title is never a clause or a cut sentence. Titles are made unique
per corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from askpapers.vectorstore.key_phrases import FUNCTION_WORDS, SHORT_PHRASE, key_phrases
from askpapers.vectorstore.method_names import named_method
from askpapers.vectorstore.text import (
    content_stems,
    one_line,
    printable,
)

_GITHUB = re.compile(r"https?://(?:www\.)?github\.com/[\w.-]+(?:/[\w.-]+)?", re.IGNORECASE)
LONG_NAME = 4  # words of a method's name that say what it is by themselves: no phrase is added after it
DESCRIBING = 5  # key phrases looked at for the one that follows a short name ("WaterSIC: ...")
MAX_TITLE = 100  # characters of a derived title


def code_urls(text: str) -> tuple[str, ...]:
    """GitHub links in ``text``, in order, without trailing punctuation or repeats."""
    seen: dict[str, None] = {}
    for m in _GITHUB.finditer(text):
        seen.setdefault(m.group(0).rstrip(".,;)"), None)
    return tuple(seen)


def _shorten(title: str, limit: int = MAX_TITLE) -> str:
    """At most ``limit`` characters: cut at the last space that keeps half of it, and mark the cut with "…"."""
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def _fits(parts: list[str], limit: int = MAX_TITLE) -> bool:
    return len("".join(parts)) <= limit


def derive_title(abstract: str) -> str:
    """A display title for an abstract that has none (at most :data:`MAX_TITLE` characters).

    The method the abstract names, if any, followed by its best key phrase that shares no word with the name when
    the name is short ("WaterSIC: Possible covariance matrices of input activations"; a name of
    :data:`LONG_NAME` words or more says what the method is by itself); else its best key phrase, and the next one
    when that is short ("Expected information gain and intractable estimators"). Parts are whole phrases: one that
    does not fit is left out, never cut."""
    name = named_method(abstract)
    phrases = key_phrases(abstract, DESCRIBING)  # (the best first: its first three are key_phrases(abstract))
    if name:
        own = set(content_stems(name))
        rest = [ph for ph in phrases if not set(content_stems(ph)) & own and len(content_stems(ph)) >= 2]
        if rest and len(re.sub(r"\s*\(.*\)$", "", name).split()) < LONG_NAME and _fits([name, ": ", rest[0]]):
            return f"{name}: {rest[0][:1].upper()}{rest[0][1:]}"
        return _shorten(name)
    if not phrases:
        return "Untitled abstract"
    parts = [phrases[0][:1].upper() + phrases[0][1:]]
    if len(phrases[0].split()) < SHORT_PHRASE and len(phrases) > 1 and _fits([*parts, " and ", phrases[1]]):
        parts += [" and ", phrases[1]]
    return _shorten("".join(parts))


def unique_titles(titles: Iterable[tuple[str, str]], taken: set[str] | None = None) -> dict[str, str]:
    """Map each (key, title) to a title no other key has, adding a numeric suffix if needed."""
    used = set(taken or ())
    first_free: dict[str, int] = {}  # per title, the suffix to try first: all below it are used already
    out: dict[str, str] = {}
    for key, title in titles:  # (without the memo, n papers with one title took n² steps)
        n = first_free.get(title, 1)
        candidate = title if n == 1 else f"{title} ({n})"
        while candidate.lower() in used:
            n += 1
            candidate = f"{title} ({n})"
        first_free[title] = n + 1
        used.add(candidate.lower())
        out[key] = candidate
    return out


def checked_title(candidate: str, abstract: str) -> str | None:
    """``candidate`` (a model's title for ``abstract``) as a display title, or None when it is not one.

    It must be one short line of at most :data:`MAX_TITLE` characters, not end on a function word, and every
    content word of it must occur in the abstract: a title that names anything the abstract does not is rejected.
    """
    first = next((line for line in printable(candidate).splitlines() if line.strip()), "")
    title = one_line(first).strip(" \"'“”‘’*`").rstrip(" .;:,")
    words = title.split()
    if not 2 <= len(words) <= 16 or len(title) > MAX_TITLE:
        return None
    if words[-1].lower().strip("()") in FUNCTION_WORDS:
        return None
    said = set(content_stems(abstract))
    own = content_stems(title)
    if not own or any(s not in said for s in own):
        return None
    return title
