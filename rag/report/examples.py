"""Example questions made from the corpus in the store, so every example has an answer in that corpus.

Topics are two-word phrases the abstracts state (adjacent words, neither a stop-word nor a generic paper word
first), ranked by how many abstracts state them, weighted up when titles state them too (titles name topics,
not filler such as "extensive experiments"). A method example names a coined name (:func:`rag.read.cues.is_name`)
that one paper's title and abstract both carry.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from askpapers.rag.answerers.groups import GENERIC
from askpapers.rag.read.cues import TOKEN, is_name
from askpapers.vectorstore.text import STOPWORDS, tokens
from askpapers.vectorstore.types import Paper

MOST_READ = 5_000  # papers read for the statistics (of a larger corpus, the first the store yields)
TOPICS = 3  # topic examples; one method example follows


def _phrases(text: str) -> set[str]:
    words = tokens(text)
    return {
        f"{a} {b}"
        for a, b in itertools.pairwise(words)
        if a not in STOPWORDS | GENERIC and b not in STOPWORDS and len(a) > 2 and len(b) > 2 and a.isalpha()
        and b.isalpha()
    }  # fmt: skip


def topics(papers: Sequence[Paper], n: int = TOPICS) -> list[str]:
    """The corpus's most stated topic phrases, no two starting with the same word."""
    stated, titled = Counter[str](), Counter[str]()
    for p in papers[:MOST_READ]:
        stated.update(_phrases(p.abstract))
        titled.update(_phrases(p.title))
    ranked = sorted((ph for ph, df in stated.items() if df >= 2), key=lambda ph: (-stated[ph] * (1 + titled[ph]), ph))
    chosen: list[str] = []
    for ph in ranked:
        if all(ph.split()[0] != c.split()[0] for c in chosen):
            chosen.append(ph)
        if len(chosen) == n:
            break
    return chosen


def _coined(name: str) -> bool:
    """A name in camel case ("WaterSIC", "InfoGlobe"), not a hyphenated phrase ("Granular-Ball")."""
    return name.isalnum() and any(a.islower() and b.isupper() for a, b in itertools.pairwise(name))


def method(papers: Sequence[Paper]) -> str:
    """A coined name one paper's title and abstract carry and no other abstract does (the longest; "" if none)."""
    found = Counter[str]()
    for p in papers[:MOST_READ]:
        found.update({m.group(0) for m in TOKEN.finditer(p.abstract) if is_name(m.group(0))})
    names = {
        m.group(0)
        for p in papers[:MOST_READ]
        for m in TOKEN.finditer(p.title)
        if is_name(m.group(0)) and m.group(0) in p.abstract and _coined(m.group(0))
    }
    unique = [name for name in names if found[name] == 1]
    return min(unique, key=lambda name: (-len(name), name)) if unique else ""


def example_questions(papers: Sequence[Paper]) -> list[str]:
    """Up to four questions that the corpus answers: three topics (a list, a list, a count) and one method."""
    forms = ["Which papers use {}?", "Which papers are about {}?", "How many papers study {}?"]
    out = [form.format(t) for form, t in zip(forms, topics(papers), strict=False)]
    name = method(papers)
    if name:
        out.append(f"What does {name} achieve?")
    return out
