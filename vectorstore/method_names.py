"""The method an abstract names: "we propose SoftBinary Coding (SBC)", "… termed WaterSIC", a bolded name, a name
in apposition ("we present Lumen, a …"); the first part of a derived title (:mod:`vectorstore.titles`)."""

from __future__ import annotations

import re

from askpapers.vectorstore.key_phrases import FUNCTION_WORDS
from askpapers.vectorstore.text import (
    acronym_definitions,
    one_line,
    sentences,
    tokens,
)

_VERB = (
    r"(?:propose|proposes|proposed|introduce|introduces|introducing|present|presents|develop|develops|derive"
    r"|call|term|dub|name|design)"
)
# "Capitalised Words (ACRO)" - up to 8 words, each starting with a capital or a connector word.
_WORD = r"(?:[A-Z][\w’'-]*|of|for|and|with|in|on|via|to|the|a|module|framework|based)"
# The last word may be a lower-case head noun: "U-shaped Multilevel Attention module (UMA)".
_NAMED_ACRONYM = re.compile(
    rf"\b((?:{_WORD}\s+){{0,8}}?[A-Z][\w’'-]*(?:\s+[a-z][\w-]*)?)\s+\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\)"
)
# A coined token: CamelCase, an inner capital or digit, an acronym after a hyphen ("Rob-FCP"), or one of 3+ letters.
_COINED = r"[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z][a-z]*-[A-Z]{2,}[\w-]*|[A-Z]{3,}[\w-]*"
# The gap between the verb and the name is bounded: unbounded, a long sentence repeating a verb took quadratic time.
# (a name starts a word: "CNN" of "G-CNN" and "FCP" of "Rob-FCP" are not names)
_AFTER_VERB = re.compile(
    rf"\b{_VERB}\b[^.;:]{{0,300}}?\b(?:termed|called|named|dubbed)?\s*[\"“*]*(?<![\w-])({_COINED})\b"
)
# (the name runs on over capitalised words: "called Thought Rollback (TR)", not "Thought")
_TERMED = re.compile(
    r"\b(?:termed|called|named|dubbed|name\s+(?:the|our)\s+(?:\w+\s+){0,2})\s*[\"“]*([A-Z][\w-]+(?:\s+[A-Z][\w-]+){0,6})"
    r"(?:\s+\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\))?"
)
_CAPITALISED_NAME = re.compile(
    r"\b(?:introduce|propose|present|introducing)\s+((?:[A-Z][\w-]*\s+){1,5}[A-Z][\w-]*)\s*,"
)
# one capitalised word in apposition: "we propose Quest, a query-aware ..." (capitalised mid-sentence: a name)
_APPOSED_NAME = re.compile(
    r"\b(?:introduce|propose|present|introducing|develop)\s+([A-Z][\w-]+)\s*(?:,\s+(?:a|an|the)\b|:\s+[a-z])"
)
_BOLD = re.compile(r"\*\*([^*]{2,80})\*\*")
_ACRONYM_STOP = {"LLM", "LLMS", "FL", "RL", "ML", "AI", "GNN", "VLM", "VLMS", "MLLM", "MLLMS", "KL", "GPU", "CPU"}


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


_VERB_RX = re.compile(rf"\b{_VERB}\b", re.IGNORECASE)
_NAMING = frozenset({"termed", "called", "named", "dubbed", "coined", "namely"})
# After one of these, a name is what the new work builds on or is about ("we propose a method for tuning LoRA").
_ATTACHING = frozenset(
    "of for to with on in by from via using such as based like than that which into over between within".split()  # noqa: SIM905
)


def _introduced(sentence: str, start: int) -> bool:
    """Whether the name at ``start`` of ``sentence`` is what its proposing verb introduces: the verb's object
    ("we propose a U-shaped ... (UMA)", "we introduce X, a ...", "a method called X"), not a name mentioned in a
    prepositional phrase after it ("we propose a method for tuning CLIP")."""
    if set(tokens(sentence[:start])[-3:]) & _NAMING:  # 'a novel algorithm, termed "WaterSIC", is proposed'
        return True
    verbs = [m for m in _VERB_RX.finditer(sentence, 0, start) if not m.group(0).lower().endswith("ed")]
    if not verbs:  # (the "recently proposed" methods are others')
        return False
    gap = tokens(sentence[verbs[-1].end() : start])
    named = [i for i, w in enumerate(gap) if w in _NAMING]
    if named:
        gap = gap[named[-1] + 1 :]
    return len(gap) <= 8 and not set(gap) & _ATTACHING


def _modifies(token: str, abstract: str) -> bool:
    """Whether the abstract puts ``token`` before a lower-case content word ("KV cache", "CNN layers")."""
    after = re.findall(rf"(?<![\w-]){re.escape(token)}\s+([a-z][\w-]+)", abstract)
    return any(w not in FUNCTION_WORDS for w in after)


def named_method(abstract: str) -> str | None:
    sents = sentences(abstract)
    verb_sents = [s for s in sents if _VERB_RX.search(s) or "**" in s]
    for s in verb_sents:
        for m in _BOLD.finditer(s):
            inner = _clean(m.group(1))
            if s[m.start() - 1 : m.start()].isalnum() or s[m.end() : m.end() + 1].isalnum():
                continue  # letters marked inside a word ("norm-**Di**sentangled")
            if re.search(r"[A-Z]", inner) and len(inner.split()) <= 10:
                return inner
        plain = s.replace("*", "")  # (markdown emphasis: "named *Correlated Dense Associative Memory* (CDAM)")
        for m in _NAMED_ACRONYM.finditer(plain):
            words, acro = m.group(1), m.group(2)
            words = re.sub(r"^(?:(?:the|a|an|of|for|and|with|in|on|via|to|module|framework|based)\s+)+", "", words)
            if acro.upper() in _ACRONYM_STOP or not _acronym_fits(words, acro):
                continue
            if not _introduced(plain, m.start(1) + m.group(1).index(words)):
                continue
            return f"{_clean(words)} ({acro})"
        m3 = _CAPITALISED_NAME.search(plain)
        if m3:
            return _clean(m3.group(1))
        m4 = _APPOSED_NAME.search(plain)
        if m4 and m4.group(1).upper() not in _ACRONYM_STOP:
            return _clean(m4.group(1))
        for rx in (_TERMED, _AFTER_VERB):
            m2 = rx.search(plain)
            if not m2:
                continue
            token = m2.group(1)
            stem = re.split(r"[-_]", token)[0].upper()
            if stem in _ACRONYM_STOP or token.lower().endswith("-based") or _is_concept(token, abstract):
                continue
            if token.isupper() and len(token) <= 3 and _modifies(token, abstract):
                continue  # an acronym used as a modifier ("KV cache"): a term, not the paper's name
            if not _introduced(plain, m2.start(1)):
                continue
            long_forms = {a: long for long, a in acronym_definitions(abstract)}
            if token in long_forms:  # an acronym the abstract spells out somewhere: "Mirror Descent (MD)"
                return f"{long_forms[token][:1].upper()}{long_forms[token][1:]} ({token})"
            if rx is _TERMED and m2.group(2):
                return f"{_clean(token)} ({m2.group(2)})"
            return _clean(token)
    for s in verb_sents:  # else a long form in lower case: "we propose a path-guided sampling (PGS) method"
        plain = s.replace("**", "")
        for long, acro in acronym_definitions(plain):
            at = plain.find(f"{long} ({acro}")
            if sum(c.isupper() for c in acro) < 3 or acro.upper() in _ACRONYM_STOP:
                continue  # (two letters name common concepts: "neural network (NN)")
            if at >= 0 and _introduced(plain, at):
                return f"{long[:1].upper()}{long[1:]} ({acro})"
    return None
