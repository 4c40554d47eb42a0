"""Expand: the spellings of each facet, the last of the reader's three stages (:mod:`.parse` → :mod:`.resolve` →
expand).

Each alternative of a facet carries its spellings: as typed, an acronym the question defines ("neural radiance
fields (NeRF)"), the form without a generic head when the corpus uses it as a term of its own ("jailbreak attacks"
~ "jailbreak"), and the corpus's words of the same family ("differential privacy" ~ "differentially private").
Alternatives that share a head are spelled whole ("backdoor attacks or defenses" → "backdoor defenses").

The matcher (:mod:`rag.decide.pools`) spells facets further from the papers it reads (the acronyms and long forms
they define, the shorter forms they use); the head it drops is the one :func:`headless` names here, shared by both.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from askpapers.rag.read.cues import GENERIC_HEADS, MODEL_HEADS, WORK_HEADS, is_name
from askpapers.rag.read.lexicon import Lexicon, is_term
from askpapers.rag.read.parse import Unit
from askpapers.rag.read.topicality import nominal
from askpapers.rag.types import Facet
from askpapers.vectorstore.terms import same_term, written_form_words, written_forms
from askpapers.vectorstore.text import stems, tokens

MAX_SPELLINGS = 12  # spellings tried per alternative


def headless(words: Sequence[str]) -> list[str] | None:
    """The phrase's words without its generic or model head ("jailbreak attacks" → "jailbreak", "diffusion models"
    → "diffusion"), or None when it has no such head (or no other word)."""
    if len(words) < 2 or words[-1] not in GENERIC_HEADS | MODEL_HEADS:
        return None
    return list(words[:-1])


def share_heads(group: list[Unit], lexicon: Lexicon) -> list[Unit]:
    """ "backdoor attacks or defenses" → "backdoor defenses": a one-word alternative takes the first one's
    modifier when it is a head of work ("defenses", "detection") or the corpus states the two as a term
    (:func:`~.lexicon.is_term`: "sparse attention or autoencoders" → "sparse autoencoders", 5 of the 9 papers
    holding both). A phrase the corpus only happens to hold is no reading of it: one paper of the conference pool
    writes "imitation manipulation", and "imitation learning and manipulation" had read as "imitation learning"
    or "imitation manipulation"."""
    if len(group) < 2:
        return group
    first = group[0]
    out = [first]
    for u in group[1:]:
        if len(u.words) == 1 and len(first.words) >= 2 and not is_name(u.shown[0]):  # (not "LoRA" of "like LoRA")
            shared = [*first.words[:-1], *u.words]
            if u.words[0] in WORK_HEADS or is_term(shared, first.words[:-1], u.words, lexicon):
                u = Unit(shared, [*first.shown[:-1], *u.shown], u.alias)
        out.append(u)
    return out


def head_forms(words: list[str], lexicon: Lexicon) -> list[str]:
    """The alternative without a generic head ("jailbreak attacks" → "jailbreak") when that is a term of its own."""
    rest = headless(words)
    if rest is None:
        return []
    short = " ".join(rest)
    coined = any("-" in w or is_name(w) for w in rest)
    if words[-1] in MODEL_HEADS:
        return [short] if coined else []
    full, alone = lexicon.phrase_df(" ".join(words)), lexicon.phrase_df(short)
    standalone = alone >= 1 and alone >= 2 * full
    # (a modifier left without its head names nothing: "efficient" of "efficient algorithms", which the dictionary
    # knows only as an adjective, had matched 583 papers of ICML 2024)
    adjective = rest[-1].endswith(("al", "ive", "ous", "ic", "ar", "ed")) or nominal(rest[-1]) == 0.0
    return [short] if coined or (standalone and not adjective) else []


def _family_forms(words: list[str], lexicon: Lexicon) -> list[str]:
    """The phrase with its words swapped for corpus words of the same family (the corpus's commonest forms
    first), where the corpus states it: "differential privacy" → "differentially private"."""
    options = [(lexicon.family(w) or [w])[:4] if len(w) > 3 and w.isalpha() else [w] for w in words]
    out = []
    for combo in itertools.islice(itertools.product(*options), 24):
        phrase = " ".join(combo)
        if combo != tuple(words) and lexicon.phrase_df(phrase) > 0:
            out.append(phrase)
    return out[:MAX_SPELLINGS]


def writings(words: Sequence[str], lexicon: Lexicon) -> list[str]:
    """The phrase and the other ways the corpus writes its words, a word as two or two as one, the most stated
    first (fewer words first on a tie); [] when there is no other way to write it. "multi-modal learning", "multi
    modal learning" and "multimodal learning" all give "multimodal learning" first, the corpus's writing, so a
    facet typed any of these ways is spelled, searched and embedded alike."""
    parts = tokens(" ".join(words))
    letters = "".join(parts)
    lexicon.prime(written_form_words(parts))
    forms = [f for f in written_forms(parts, lambda w: lexicon.df(w) > 0) if "".join(tokens(f)) == letters]
    if not forms:
        return []
    every = list(dict.fromkeys([" ".join(parts), *forms]))
    # (those the corpus writes: not "learn ing", two words it uses but never so; the phrase as typed if none is)
    every = [f for f in every if lexicon.written_df(f) > 0] or every[:1]
    return sorted(every, key=lambda f: (-lexicon.written_df(f), len(tokens(f)), f))


def _spellings(unit: Unit, lexicon: Lexicon) -> tuple[str, tuple[str, ...]]:
    shown = " ".join(unit.shown)
    written = [] if unit.alias else writings(unit.words, lexicon)
    if written and tokens(written[0]) != tokens(" ".join(unit.words)):  # (a rarer writing: as the corpus writes it)
        unit = Unit(written[0].split(), written[0].split())
        spellings = [written[0]]
    else:
        spellings = [shown]
    if unit.alias:
        tail = unit.shown[unit.long :] if unit.long else []
        spellings.append(" ".join([unit.alias, *tail]))
        if tail and tail[-1].lower() in GENERIC_HEADS | MODEL_HEADS:  # "MoE models" is also "MoE"
            spellings += [" ".join(unit.shown[: unit.long]), unit.alias]
    for form in [*head_forms(unit.words, lexicon), *_family_forms(unit.words, lexicon)]:
        if not any(stems(form) == stems(s) for s in spellings):  # (the phrase search compares stems already)
            spellings.append(form)
    return (f"{shown} ({unit.alias})" if unit.alias else shown), tuple(dict.fromkeys(spellings))


def same_phrase(a: str, b: str) -> bool:
    wa, wb = a.lower().split(), b.lower().split()
    return len(wa) == len(wb) and all(same_term(x, y) for x, y in zip(wa, wb, strict=True))


def build(group: list[Unit], lexicon: Lexicon, optional: bool = False) -> Facet:
    pairs = [_spellings(u, lexicon) for u in share_heads(group, lexicon)]
    return Facet(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), optional)
