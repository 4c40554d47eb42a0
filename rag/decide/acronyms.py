"""The acronyms and long forms the papers define ("GNNs" for "graph neural networks"), read from their abstracts:
the other spellings the matcher (:mod:`rag.decide.match`) finds a facet by."""

from __future__ import annotations

from functools import lru_cache

from askpapers.rag.read.cues import is_acronym
from askpapers.rag.read.lexicon import english_words
from askpapers.vectorstore.text import acronym_definitions, stems

# a long form the text defines, its acronym, the long form's stems and the acronym's (joined)
Defined = tuple[str, str, tuple[str, ...], str]


@lru_cache(maxsize=8192)
def _defined(text: str) -> tuple[Defined, ...]:
    """The (long form, acronym) pairs a text defines (:func:`~vectorstore.text.acronym_definitions`), with their
    stems. (Kept per text: each facet of a question reads the same candidates' texts, and questions share papers;
    reading them took a tenth of a warm extractive answer.)"""
    return tuple((long, acro, tuple(stems(long)), " ".join(stems(acro))) for long, acro in acronym_definitions(text))


def spellings(alternatives: list[str], texts: list[str]) -> dict[str, list[str]]:
    """Each alternative with the acronym or long form the texts define for it ("GNNs" ↔ "graph neural networks"),
    and the acronyms they define for a kind of it: a phrase of two words or more with one modifier more, in front
    ("LLMs", defined as "large language models", for "language models") or inside ("RNNs" for "recurrent
    networks")."""
    defs: dict[str, set[str]] = {}
    kinds: dict[str, set[str]] = {}
    for text in texts:
        for long, acro, key_long, key_acro in _defined(text):
            defs.setdefault(" ".join(key_long), set()).add(acro)
            defs.setdefault(key_acro, set()).add(long)
            for i in range(len(key_long) - 1 if len(key_long) > 2 else 0):
                kinds.setdefault(" ".join(key_long[:i] + key_long[i + 1 :]), set()).add(acro)
    out: dict[str, list[str]] = {}
    for alt in alternatives:
        extra = sorted(defs.get(" ".join(stems(alt)), set()) | kinds.get(" ".join(stems(alt)), set()))
        out[alt] = [alt, *(e for e in extra if len(e) > 2 or len(stems(alt)) == 1)]
    return out


def short_acronym(acronym: str) -> str:
    """The two capitals of a two-letter acronym as written ("RL", "LMs" -> "LM"), or "" for any other word."""
    core = acronym[:-1] if acronym.endswith("s") else acronym
    return core if len(core) == 2 and core.isalpha() and core.isupper() else ""


def acronym_core(acronym: str) -> str:
    """An acronym (one word with two capitals or more) without a plural "s" ("NODEs" -> "NODE", "ATS" -> "ATS"),
    or "" for any other spelling."""
    if not is_acronym(acronym):
        return ""
    return acronym[:-1] if acronym.endswith("s") else acronym


def worded_acronym(acronym: str) -> str:
    """:func:`acronym_core`, when in lower case the acronym is an English word ("nodes", "rag", "clip":
    :func:`~rag.read.lexicon.english_words`), or "" for any other spelling. Read in any case, it would be that
    word: "neural ordinary differential equations (NODEs)" had made every paper on graph nodes meet "neural ODEs"."""
    core = acronym_core(acronym)
    words = english_words()
    return core if core and (acronym.lower() in words or core.lower() in words) else ""


def short_acronyms(alternatives: list[str], texts: list[str]) -> dict[str, list[str]]:
    """The two-letter acronyms the texts define for each alternative of two words or more ("RL" for "reinforcement
    learning"). :func:`spellings` leaves them out, since two letters have many meanings; the matcher takes one only
    where the corpus defines it as this alternative (:meth:`~rag.decide.pools.FacetPools.short_forms`)."""
    defs: dict[str, set[str]] = {}
    for text in texts:
        for _, acro, key_long, _ in _defined(text):
            if short := short_acronym(acro):
                defs.setdefault(" ".join(key_long), set()).add(short)
    out: dict[str, list[str]] = {}
    for alt in alternatives:
        key = stems(alt)
        if len(key) > 1 and (found := defs.get(" ".join(key))):
            out[alt] = sorted(found)
    return out


def definitions_of(acronym: str, texts: list[str]) -> list[str]:
    """What the texts define a two-letter acronym as (each long form's stems, once per text)."""
    out: list[str] = []
    for text in texts:
        out += sorted({" ".join(key) for _, acro, key, _ in _defined(text) if short_acronym(acro) == acronym})
    return out


def maybe_acronym(spelling: str) -> bool:
    """One word that may be an acronym however it is typed: capitals, a digit, or at most six letters ("llms")."""
    word = spelling.strip()
    return " " not in word and (is_acronym(word) or any(c.isdigit() for c in word) or len(word.rstrip("s")) <= 6)


def long_forms(acronyms: list[str], texts: list[str]) -> tuple[list[str], dict[str, str]]:
    """The long forms the texts define for the acronyms, commonest first: those defined by at least a quarter as
    many texts as the commonest one (a stray definition of the same letters is not one); and how the texts
    write each acronym (by its stems: "llm" -> "LLMs")."""
    keys = {" ".join(stems(a)) for a in acronyms}
    counts: dict[str, int] = {}
    shown: dict[str, str] = {}
    written: dict[str, str] = {}
    for text in texts:
        seen = set()
        for long, acro, key_long, key_acro in _defined(text):
            key = " ".join(key_long)
            if key_acro in keys and key not in keys and is_acronym(acro):
                seen.add(key)
                shown.setdefault(key, long.lower())
                written.setdefault(key_acro, acro)
        for key in seen:
            counts[key] = counts.get(key, 0) + 1
    top = max(counts.values(), default=0)
    return [shown[k] for k in sorted(counts, key=lambda k: -counts[k]) if 4 * counts[k] >= top], written
