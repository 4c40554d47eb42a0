"""The matcher: every paper that meets a topic, each with a verbatim evidence sentence.

A paper matches a topic when its abstract (or real title) states the topic phrase, in one of its spellings
(acronyms defined in the corpus, hyphenated and joined forms, stems), or, failing that, when its best chunk is
close enough in embedding space and one sentence covers the topic's words (:func:`decide`). The matcher reads
papers only through :class:`~rag.index.PaperIndex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vectorstore.text import acronym_definitions, contains_phrase, content_stems, phrase_forms, sentence_spans, stems
from vectorstore.types import Filters, Paper

from .index import PaperIndex
from .settings import AnswerSettings

_COMPOUND = re.compile(r"\w[-\u2010\u2011]\w")
HALF = 0.5  # share of a topic's words one sentence must hold when the embedding alone is very close


@dataclass
class Match:
    paper: Paper
    score: float
    evidence: str
    phrase: bool
    similarity: float


def best_sentence(abstract: str, terms: list[str], prefer_numbers: bool = False, within: str = "") -> str:
    """The sentence of ``abstract`` that covers the most of ``terms`` (verbatim).

    Ties go to the sentence inside ``within`` (the best-matching chunk), then to the earliest.
    """
    spans = sentence_spans(abstract)
    if not spans:
        return abstract
    want = set(terms)
    best, best_key = spans[0], (-1.0, 0, 0, 0)
    for i, (s, e) in enumerate(spans):
        sent = abstract[s:e]
        got = want & set(stems(sent))
        key = (
            len(got) / max(len(want), 1),
            int(prefer_numbers and bool(re.search(r"\d", sent))),
            int(bool(within) and sent in within),
            -i,
        )
        if key > best_key:
            best, best_key = (s, e), key
    return abstract[best[0] : best[1]]


def topic_units(topic: str) -> list[str]:
    """The parts of a topic a sentence must state: content words, and hyphenated compounds kept whole."""
    units: list[str] = []
    for word in topic.split():
        if _COMPOUND.search(word):
            if content_stems(word):
                units.append(word.strip(".,;:!?\"'()"))
        else:
            units.extend(content_stems(word))
    return list(dict.fromkeys(units))


def coverage(units: list[str], text: str) -> float:
    """Largest share of a topic's units (see :func:`topic_units`) found together in one sentence of ``text``.

    A compound such as "vision-language" counts only where the sentence states it as a phrase, so
    "language and vision tasks" does not cover it.
    """
    if not units:
        return 0.0
    best = 0.0
    for s, e in sentence_spans(text):
        sentence = text[s:e]
        words = set(stems(sentence))
        forms: set[str] | None = None
        found = 0
        for u in units:
            if _COMPOUND.search(u):
                forms = forms if forms is not None else phrase_forms(sentence)
                found += contains_phrase(forms, u)
            else:
                found += u in words
        best = max(best, found / len(units))
    return best


def _forms(p: Paper) -> set[str]:
    return phrase_forms(p.abstract if p.title_derived else f"{p.title}. {p.abstract}")


def decide(phrase: bool, similarity: float, cover: float, rule: AnswerSettings) -> bool:
    """Whether a paper meets a topic: it states the phrase, or it is very close in embedding space and one
    sentence holds half the topic's words, or it is close and one sentence holds all of them."""
    return (
        phrase
        or (similarity >= rule.dense_alone and cover >= HALF)
        or (cover >= 1.0 and similarity >= rule.dense_with_terms)
    )


def match_topic(
    index: PaperIndex,
    alternatives: list[str],
    rule: AnswerSettings,
    filters: Filters | None = None,
    within: list[str] | None = None,
) -> list[Match]:
    """Every paper that matches any of the alternative phrasings of a topic, best first."""
    sims: dict[str, tuple[float, str]] = {}
    for alt in alternatives[: rule.dense_spellings]:
        if within is not None:
            dense = index.best_chunks_within(alt, within)
        else:
            dense = index.best_chunks(alt, rule.dense_topic_chunks, filters)
        for pid, hit in dense.items():
            if pid not in sims or hit.similarity > sims[pid][0]:
                sims[pid] = (hit.similarity, hit.text)
    # Only two kinds of paper can pass the rule: those that state a spelling of the topic (found by an FTS5
    # phrase query) and those whose best chunk is close enough; nothing else needs to be read.
    if within is not None:
        ids = list(within)
    else:
        ids = [pid for pid, _ in index.phrase_search(alternatives, 5 * rule.max_list, filters)]
        ids += [pid for pid, (sim, _) in sims.items() if sim >= rule.dense_with_terms and pid not in set(ids)]
    papers = index.papers(ids)
    variants = spellings(alternatives, [p.abstract for p in papers.values()])
    matches: list[Match] = []
    for pid, p in papers.items():
        forms = _forms(p)
        sim, chunk = sims.get(pid, (0.0, ""))
        best: Match | None = None
        for alt in alternatives:
            terms = content_stems(alt)
            phrase = any(contains_phrase(forms, v) for v in variants[alt])
            cov = coverage(topic_units(alt), p.abstract)
            if not decide(phrase, sim, cov, rule):
                continue
            score = (1.0 if phrase else 0.0) + cov * 0.5 + sim
            if best is None or score > best.score:
                best = Match(p, score, best_sentence(p.abstract, terms, within=chunk), phrase, sim)
        if best is not None:
            matches.append(best)
    matches.sort(key=lambda m: (-m.score, m.paper.title))
    return matches[: rule.max_list]


def spellings(alternatives: list[str], texts: list[str]) -> dict[str, list[str]]:
    """Each alternative with the acronym or long form the texts define for it ("GNNs" ↔ "graph neural networks")."""
    defs: dict[str, set[str]] = {}
    for text in texts:
        for long, acro in acronym_definitions(text):
            key_long, key_acro = " ".join(stems(long)), " ".join(stems(acro))
            defs.setdefault(key_long, set()).add(acro)
            defs.setdefault(key_acro, set()).add(long)
    out: dict[str, list[str]] = {}
    for alt in alternatives:
        extra = sorted(defs.get(" ".join(stems(alt)), set()))
        out[alt] = [alt, *(e for e in extra if len(e) > 2 or len(stems(alt)) == 1)]
    return out
