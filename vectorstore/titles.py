"""Display titles for papers that come without one, and code links found in abstracts.

A title is, in order of preference: the method the abstract names ("SoftBinary Coding (SBC)",
"WaterSIC"), else a short phrase from its first sentence. Titles are made unique per corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .text import one_line, sentences

_GITHUB = re.compile(r"https?://(?:www\.)?github\.com/[\w.-]+(?:/[\w.-]+)?", re.IGNORECASE)
_VERB = (
    r"(?:propose|proposes|proposed|introduce|introduces|introducing|present|presents|develop|develops|derive"
    r"|call|term|dub|name|design)"
)
# "Capitalised Words (ACRO)" - up to 8 words, each starting with a capital or a connector word.
_WORD = r"(?:[A-Z][\w’'-]*|of|for|and|with|in|on|via|to|the|a|module|framework|based)"
_NAMED_ACRONYM = re.compile(rf"\b((?:{_WORD}\s+){{0,8}}?[A-Z][\w’'-]*)\s+\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\)")
# A coined token: CamelCase, an inner capital or digit, or an acronym of 3+ letters.
_COINED = r"[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z]{3,}[\w-]*"
# The gap between the verb and the name is bounded: unbounded, a long sentence repeating a verb took quadratic time.
_AFTER_VERB = re.compile(rf"\b{_VERB}\b[^.;:]{{0,300}}?\b(?:termed|called|named|dubbed)?\s*[\"“*]*({_COINED})\b")
_TERMED = re.compile(r"\b(?:termed|called|named|dubbed|name\s+(?:the|our)\s+(?:\w+\s+){0,2})\s*[\"“*]*([A-Z][\w-]+)")
_CAPITALISED_NAME = re.compile(
    r"\b(?:introduce|propose|present|introducing)\s+((?:[A-Z][\w-]*\s+){1,5}[A-Z][\w-]*)\s*,"
)
_WE_PROPOSE = re.compile(
    r"\bwe\s+(?:propose|introduce|present|develop)\s+(?:(?:a|an|the)\s+)?(?:novel\s+|new\s+)?(.+)", re.IGNORECASE
)
_BOLD = re.compile(r"\*\*([^*]{2,80})\*\*")
_LEAD = re.compile(
    r"^(?:in this (?:paper|work),?\s*)?"
    r"(?:we\s+(?:study|investigate|consider|introduce|present|propose|analy[sz]e|examine|address)\s+)?"
    r"(?:(?:(?:the|a|an)\s+)?(?:problem|question|task|setting)\s+of\s+)?",
    re.IGNORECASE,
)
MAX_TITLE = 100  # characters of a derived title
_TRAILING = {"of", "the", "a", "an", "to", "in", "with", "and", "for", "on", "as", "is", "are", "by", "from", "at"}
_ACRONYM_STOP = {"LLM", "LLMS", "FL", "RL", "ML", "AI", "GNN", "VLM", "VLMS", "MLLM", "MLLMS", "KL", "GPU", "CPU"}


def code_urls(text: str) -> tuple[str, ...]:
    """GitHub links in ``text``, in order, without trailing punctuation or repeats."""
    seen: dict[str, None] = {}
    for m in _GITHUB.finditer(text):
        seen.setdefault(m.group(0).rstrip(".,;)"), None)
    return tuple(seen)


def _clean(name: str) -> str:
    name = name.replace("**", "").replace("*", "").strip(" \"“”'’.,:;")
    return one_line(name)


def _is_subsequence(needle: list[str], hay: str) -> bool:
    it = iter(hay)
    return len(needle) >= 2 and all(c in it for c in needle)


def _is_concept(token: str, abstract: str) -> bool:
    """A term the abstract defines in lower case, like "expected information gain (EIG)"."""
    return bool(re.search(rf"\b[a-z][\w-]*\s+\({re.escape(token)}\)", abstract))


def _acronym_fits(words: str, acro: str) -> bool:
    """Whether the acronym's letters can be read off the words' capitals/initials (loosely)."""
    initials = "".join(w[0] for w in re.split(r"[\s-]+", words) if w).upper()
    caps_of_acro = [c for c in acro if c.isupper()]
    if _is_subsequence(caps_of_acro, initials):
        return True
    letters = [c for c in acro.upper() if c.isalpha()]
    i = 0
    for c in initials:
        if i < len(letters) and c == letters[i]:
            i += 1
    caps = "".join(c for c in words if c.isupper())
    return i >= max(2, len(letters) - 2) or (len(letters) >= 2 and caps[: len(letters)] == "".join(letters))


def _named_method(abstract: str) -> str | None:
    sents = sentences(abstract)
    verb_sents = [s for s in sents if re.search(rf"\b{_VERB}\b", s, re.IGNORECASE) or "**" in s]
    for s in verb_sents:
        for m in _BOLD.finditer(s):
            inner = _clean(m.group(1))
            if re.search(r"[A-Z]", inner) and len(inner.split()) <= 10:
                return inner
        for m in _NAMED_ACRONYM.finditer(s.replace("**", "")):
            words, acro = m.group(1), m.group(2)
            words = re.sub(r"^(?:(?:the|a|an|of|for|and|with|in|on|via|to|module|framework|based)\s+)+", "", words)
            if acro.upper() in _ACRONYM_STOP or not _acronym_fits(words, acro):
                continue
            return f"{_clean(words)} ({acro})"
        m3 = _CAPITALISED_NAME.search(s.replace("**", ""))
        if m3:
            return _clean(m3.group(1))
        for rx in (_TERMED, _AFTER_VERB):
            m2 = rx.search(s.replace("**", ""))
            if not m2:
                continue
            token = m2.group(1)
            stem = re.split(r"[-_]", token)[0].upper()
            if stem in _ACRONYM_STOP or token.lower().endswith("-based") or _is_concept(token, abstract):
                continue
            return _clean(token)
    return None


def _phrase(abstract: str, max_words: int = 10) -> str:
    sents = sentences(abstract) or [abstract]
    first = sents[0]
    if not _LEAD.match(first).group(0):  # type: ignore[union-attr]
        for s in sents:
            m = _WE_PROPOSE.search(s)
            if m:
                first = m.group(1)
                break
    first = _LEAD.sub("", first.replace("**", "").replace("*", ""))
    clause = re.split(r",\s|;\s|:\s|\s(?:which|where|that|because|but|while|by|in which)\s", first)[0]
    words = clause.split()
    if len(words) < 2:
        words = first.split()
    words = words[:max_words]
    while len(words) > 2 and words[-1].lower() in _TRAILING:
        words.pop()
    phrase = " ".join(words).rstrip(" .,;:")  # (a space too: "a b ." once gave "a b ")
    return phrase[:1].upper() + phrase[1:] if phrase else "Untitled abstract"


def _shorten(title: str, limit: int = MAX_TITLE) -> str:
    """At most ``limit`` characters: cut at the last space that keeps half of it, and mark the cut with "…"."""
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def derive_title(abstract: str) -> str:
    """A meaningful display title for an abstract that has none (at most :data:`MAX_TITLE` characters)."""
    return _shorten(_named_method(abstract) or _phrase(abstract))


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
