"""Word families: when two words are one term ("transformers" and "transformer", "robot" and "robotic",
"optimisation" and "optimization"), and the other ways a phrase is written (a word as two, two as one, an acronym
defined inside it). The matcher, the pools and the question reader compare words through :func:`same_term`; the
word lists here are rows of docs/reading-table.md."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise

from askpapers.vectorstore.text import stem, tokens

# Two words are one term when they share a stem *and* differ only by an inflection or a meaning-preserving
# derivation: "differential" ~ "differentially", "privacy" ~ "private", "jailbreak" ~ "jailbreaks", "robot" ~
# "robotic". Words that only share a stem are different terms: "conformal" is not "conformer" or "conformation".
_INFLECTIONS = frozenset({"", "s", "es", "e", "ed", "d", "ing", "ings", "ly"})
_ADJECTIVAL = frozenset({"", "s", "ic", "ics", "ical", "ically"})  # robot, robotic, robotics
# a verb and its nouns: "hallucinate", "hallucination"; "predict", "prediction"; "quantize", "quantization";
# "simulate", "simulation", "simulator"; "collaborate", "collaborative"
_VERBAL = frozenset(
    {"", "e", "s", "es", "ed", "ing", "ate", "ates", "ated", "ating", "ation", "ations", "ion", "ions", "ator", "ators",
     "ative", "atively"}
)  # fmt: skip
# A derived noun asked as a word of its own ("sampling", "pretraining", "relations", "demonstrations"; "fine-tuning"
# where the corpus also writes "finetuning") is met only by its own noun forms, singular or plural: its verb and
# adjective forms are mostly another use ("samples", "pretrained models", "related work", "we demonstrate", "navigate
# a trade-off"). Inside a phrase the words before it pin the sense: "language models" state "language modeling",
# "Gaussian splats" "Gaussian splatting" (see same_term's ``alone``).
_NOUN_FORMS = {suffix: forms for forms in map(frozenset, [("ing", "ings"), ("ion", "ions"), ("ation", "ations")])
               for suffix in forms}  # fmt: skip
_SPELLING = (
    (re.compile(r"isation"), "ization"),
    (re.compile(r"is(e|ed|es|ing)$"), r"iz\1"),
    (re.compile(r"yse$"), "yze"),
    (re.compile(r"acy$"), "ate"),
    (re.compile(r"(?<=[aeiou])ll(ing|ed)$"), r"l\1"),
)


@lru_cache(maxsize=200_000)
def spelled(word: str) -> str:
    """British spellings and the -acy/-ate alternation mapped to one form ("optimisation" → "optimization")."""
    for pattern, repl in _SPELLING:
        word = pattern.sub(repl, word)
    return word


# the other way round: the British forms of an American spelling (each checked to map back with spelled)
_UNSPELLING = (
    (re.compile(r"ization"), "isation"),
    (re.compile(r"iz(e|ed|es|ing)$"), r"is\1"),
    (re.compile(r"yze$"), "yse"),
    (re.compile(r"(?<=[aeiou])l(ing|ed)$"), r"ll\1"),
)


def spelling_forms(word: str) -> list[str]:
    """The word and its other spellings that :func:`spelled` takes for the same word ("optimization",
    "optimisation"; "modelling", "modeling"): the word first. (The -acy/-ate alternation joins two words, not two
    spellings, and is left out.)"""
    base = spelled(word)
    out = [word, base]
    for pattern, repl in _UNSPELLING:
        other = pattern.sub(repl, base)
        if other != base and spelled(other) == base:
            out.append(other)
    return [w for w in dict.fromkeys(out) if spelled(w) == base and (w == word or not w.endswith(("acy", "ate")))]


RESPELLINGS = 3  # other spellings of a phrase searched ("bayesian optimisation"; more words, more choices)


def respelled(phrases: Sequence[str]) -> list[str]:
    """The phrases in their other spellings (:func:`spelling_forms` of each word: "bayesian
    optimisation" of "Bayesian optimization"), at most :data:`RESPELLINGS` of each; none for a phrase with no word
    spelled another way."""
    out: list[str] = []
    for phrase in phrases:
        words = tokens(phrase)
        forms = [spelling_forms(w) for w in words]
        if all(len(f) == 1 for f in forms):
            continue
        made = [""]
        for f in forms:
            made = [f"{m} {w}".strip() for m in made for w in f][: RESPELLINGS + 1]
        out += made[1:]  # (the first is the phrase's own words)
    return [p for p in dict.fromkeys(out) if p not in phrases]


SPLIT_MIN = 3  # letters of each part of a word written as two ("fine tuning", "multi agent"; not "sea son")


def splits(word: str) -> list[tuple[str, str]]:
    """The ways to write ``word`` as two words of at least :data:`SPLIT_MIN` letters each ("fine", "tuning")."""
    return [(word[:i], word[i:]) for i in range(SPLIT_MIN, len(word) - SPLIT_MIN + 1)]


def written_forms(words: Sequence[str], used: Callable[[str], bool]) -> list[str]:
    """A phrase's words written another way, as phrases: one word as two (:func:`splits`), or two adjacent words as
    one, where ``used`` says the corpus uses each new word ("multi agent reinforcement learning" of "multiagent
    reinforcement learning", and the other way round); or with the acronym of its first words defined inside it
    (:func:`inserted_acronyms`: "out of distribution ood detection", as "out-of-distribution (OOD) detection" reads)."""
    words = list(words)
    apart = [" ".join([*words[:i], a, b, *words[i + 1 :]]) for i, w in enumerate(words) for a, b in splits(w)
             if used(a) and used(b)]  # fmt: skip
    joined = [" ".join([*words[:i], j, *words[i + 2 :]]) for i in range(len(words) - 1)
              if used(j := words[i] + words[i + 1])]  # fmt: skip
    inserted = [" ".join([*words[:i], a, *words[i:]]) for i, a in inserted_acronyms(words) if used(a)]
    return apart + joined + inserted


def written_form_words(words: Sequence[str]) -> list[str]:
    """The words :func:`written_forms` may ask ``used`` about: each word's halves, each two adjacent words joined,
    and each acronym of its first words (:func:`inserted_acronyms`)."""
    halves = [x for w in words for ab in splits(w) for x in ab]
    joined = [a + b for a, b in pairwise(words)]
    return list(dict.fromkeys([*halves, *joined, *(a for _, a in inserted_acronyms(words))]))


def inserted_acronyms(words: Sequence[str]) -> list[tuple[int, str]]:
    """(n, acronym): the initials of the phrase's first ``n`` words (two or more, and a word after them), which its
    authors may define inside the phrase ("out-of-distribution (OOD) detection", "reinforcement learning (RL)
    agents")."""
    initials = "".join(w[:1] for w in words)
    return [(n, initials[:n]) for n in range(2, len(words)) if len(initials) == len(words)]


def term_stems(word: str) -> set[str]:
    """The stems of a word's forms that :func:`same_term` may take for it: its spellings (:func:`spelling_forms`)
    and the form :func:`spelled` maps it to."""
    return {stem(w) for w in [*spelling_forms(word), spelled(word)]}


def _suffix(word: str, root: str) -> str:
    """What ``word`` adds to its stem; a doubled final consonant counts once ("planning" → "ing")."""
    n = 0
    while n < min(len(word), len(root)) and word[n] == root[n]:
        n += 1
    if n < len(root) - 1:
        return "?" + word  # a stem that is no prefix of its word: no suffix rule applies
    rest = word[n:]
    return rest[1:] if n == len(root) and len(rest) > 1 and rest[0] == root[-1] else rest


_Y_FORMS = {"y": "", "es": "s", "ed": "d", "ying": "ing"}  # policy/policies, study/studied/studying


def _y_suffix(suffix: str, root: str) -> str:
    """A final -y that becomes -i- before a suffix ("polici" is the stem of both "policy" and "policies") read as
    part of the stem, so the inflections compare as they do for other words."""
    return _Y_FORMS.get(suffix, suffix) if root.endswith("i") else suffix


@lru_cache(maxsize=200_000)
def same_term(a: str, b: str, alone: bool = False) -> bool:
    """Whether two lower-case words are the same term (see the rules above). With ``alone`` (``a`` is asked as a
    word of its own), a derived noun ``a`` takes only its noun forms (:data:`_NOUN_FORMS`)."""
    if a == b:
        return True
    a, b = spelled(a), spelled(b)
    ra, rb = stem(a), stem(b)
    if ra != rb:
        return False
    sa, sb = _y_suffix(_suffix(a, ra), ra), _y_suffix(_suffix(b, rb), rb)
    if sa.startswith("iz") and sb.startswith("iz"):  # (a stem short of "-ize": "generalize", "generalization")
        sa, sb = sa[2:], sb[2:]
    if alone and sa in _NOUN_FORMS and sb not in _NOUN_FORMS[sa]:
        return False
    if sa == sb:
        return True
    pair = {sa, sb}
    return (
        pair <= _INFLECTIONS
        or pair <= _ADJECTIVAL
        or pair <= _VERBAL
        or any(longer == shorter + x for x in ("ly", "s", "es") for shorter, longer in ((sa, sb), (sb, sa)))
    )


def derived_noun(word: str) -> bool:
    """Whether a lower-case word is a derived noun (:data:`_NOUN_FORMS`: "sampling", "embeddings", "relations"),
    which :func:`same_term`'s ``alone`` keeps to its noun forms."""
    base = spelled(word)
    root = stem(base)
    return _y_suffix(_suffix(base, root), root) in _NOUN_FORMS
