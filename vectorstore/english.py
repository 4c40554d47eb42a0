"""Statistics of general English and of research abstracts that derived titles and topic names read: word
rarity, the words English mostly uses as verbs or participles (from symspellpy's word and bigram counts), and how
generic a word is in the bundled corpus's abstracts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from askpapers.vectorstore.text import (
    STOPWORDS,
    stem,
    tokens,
)

# --- key-phrase titles -----------------------------------------------------------------------------------------------
# A title built from noun-phrase-like spans of the abstract: runs of content words bounded by function words,
# punctuation and verbs, optionally joined to the next run by one preposition ("collapse of the expected
# information gain"). A span is scored by how often its words recur in the abstract and how rare they are in
# general English (symspellpy's word counts); verbs are told apart by the words general English puts before them
# ("to transform", "we admit") against those it puts before nouns ("the data").

VERB_BEFORE = (
    "to",
    "we",
    "they",
    "it",
    "he",
    "she",
    "also",
    "can",
    "will",
    "would",
    "could",
    "should",
    "may",
    "might",
    "must",
    "cannot",
)
PARTICIPLE_BEFORE = ("is", "are", "was", "were", "by", "while", "when", "also", "thereby")
NOUN_BEFORE = ("the", "a", "an", "this", "these", "its", "their", "our", "his", "her")
VERBAL_SHARE = 0.1  # a word said after "to"/"we"/a modal this share as often as after an article is verbal


@dataclass(frozen=True)
class English:
    """Statistics of general English: each word's rarity (-log share); the words that are mostly verbs; the common
    two-word terms whose second word is such a verb ("Fourier transform"); the words it also uses as verbs
    ("limit", "match"); and the -ing words it never puts after an article ("leveraging", "demonstrating", unlike
    "learning" or "sampling"): participles, which do not stand inside a title's noun phrase; and the words it puts after
    an article at all."""

    rarity: dict[str, float]
    verbs: frozenset[str]
    compounds: frozenset[tuple[str, str]]
    verbal: frozenset[str]
    participles: frozenset[str]
    nominal: frozenset[str]  # the words it puts after an article or a possessive ("the data")


@lru_cache(maxsize=1)
def english_statistics() -> English:
    """General-English statistics from the word lists symspellpy ships (see :class:`English`)."""
    base = Path(str(files("symspellpy")))
    counts: dict[str, int] = {}
    with (base / "frequency_dictionary_en_82_765.txt").open(encoding="utf-8") as f:
        for line in f:
            word, _, count = line.partition(" ")
            counts[word] = int(count)
    total = sum(counts.values())
    rarity = {w: math.log(total / n) for w, n in counts.items()}
    before_verb, before_noun, before_participle = set(VERB_BEFORE), set(NOUN_BEFORE), set(PARTICIPLE_BEFORE)
    verb_ctx: dict[str, int] = {}
    noun_ctx: dict[str, int] = {}
    participle_ctx: dict[str, int] = {}
    bigrams = base / "frequency_bigramdictionary_en_243_342.txt"
    with bigrams.open(encoding="utf-8") as f:
        for line in f:
            a, _, rest = line.partition(" ")
            b, _, n = rest.partition(" ")
            if a in before_verb:
                verb_ctx[b] = verb_ctx.get(b, 0) + int(n or 0)
            elif a in before_noun:
                noun_ctx[b] = noun_ctx.get(b, 0) + int(n or 0)
            if a in before_participle and b.endswith("ing"):
                participle_ctx[b] = participle_ctx.get(b, 0) + int(n or 0)
    verbs = frozenset(w for w, n in verb_ctx.items() if n > 2 * noun_ctx.get(w, 0))
    # words general English also uses as verbs ("limit", "lack", "match"): after a plural noun, a verb
    verbal = frozenset(w for w, n in verb_ctx.items() if n >= VERBAL_SHARE * noun_ctx.get(w, 0))
    with bigrams.open(encoding="utf-8") as f:  # (a second pass: keeping every pair took 40 MB)
        pairs = (line.split(" ", 2)[:2] for line in f)
        compounds = frozenset((a, b) for a, b in pairs if b in verbs and a not in STOPWORDS and not b.endswith("ed"))
    participles = frozenset(w for w, n in participle_ctx.items() if n and not noun_ctx.get(w) and w in counts)
    return English(rarity, verbs, compounds, verbal, participles, frozenset(noun_ctx))


@lru_cache(maxsize=1)
def common_in_papers() -> dict[str, float]:
    """The share of the bundled corpus's abstracts that use each (stemmed) word: how generic a word is in
    research abstracts ("model", "method", "information"), which general English does not tell."""
    from askpapers.vectorstore.resources import bundled_corpus

    docs: list[set[str]] = []
    for path in sorted(bundled_corpus().glob("*.txt")):
        for para in path.read_text(encoding="utf-8").split("\n\n"):
            if len(para) > 300:
                docs.append({stem(t) for t in tokens(para)})
    counts: dict[str, int] = {}
    for d in docs:
        for w in d:
            counts[w] = counts.get(w, 0) + 1
    return {w: n / len(docs) for w, n in counts.items()} if docs else {}
