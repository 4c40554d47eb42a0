"""Whether a text states a phrase, and which of its sentences show it: the surface-form tests the matcher
(:mod:`rag.decide.match`) and the snippets (:mod:`rag.decide.snippets`) decide with. Stems find the places, and
:func:`vectorstore.terms.same_term` checks the words there."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TypeVar

from askpapers.rag.decide.acronyms import acronym_core, short_acronym, worded_acronym
from askpapers.rag.read.cues import RELATIONAL
from askpapers.rag.settings import AnswerSettings
from askpapers.vectorstore.terms import SPLIT_MIN, derived_noun, same_term, spelling_forms
from askpapers.vectorstore.text import (
    STOPWORDS,
    contains_phrase,
    content_stems,
    phrase_forms,
    sentence_spans,
    stem,
    stems,
    tokens,
)

HALF = 0.5  # share of a topic's words one sentence must hold when the embedding alone is very close
T = TypeVar("T")
_COMPOUND = re.compile(r"\w[-\u2010\u2011]\w")
_JOIN = re.compile(r"(?<=\w)[-\u2010\u2011](?=\w)")


def best_sentence(abstract: str, terms: list[str], prefer_numbers: bool = False, within: str = "") -> str:
    """The sentence of ``abstract`` that covers the most of ``terms`` (verbatim).

    Ties go to the sentence inside ``within`` (the best-matching chunk), then to the earliest.
    """
    spans = sentence_spans(abstract)
    if not spans:
        return abstract
    want = set(terms)
    best, best_key = spans[0], (-1.0, 0, 0, 0)
    for i, ((s, e), (sent, words)) in enumerate(zip(spans, sentence_words(abstract), strict=True)):
        got = want & words
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
    return list(_topic_units(topic))


@lru_cache(maxsize=4096)
def _topic_units(topic: str) -> tuple[str, ...]:
    units: list[str] = []
    for word in topic.split():
        if _COMPOUND.search(word):
            if content_stems(word):
                units.append(word.strip(".,;:!?\"'()"))
        else:
            units.extend(content_stems(word))
    return tuple(dict.fromkeys(units))


def phrase_coverage(phrase: str, text: str, whole: bool = False, written: str = "") -> float:
    """:func:`coverage` of the phrase's :func:`topic_units`, counting a word only where ``written`` (the text whose
    words are looked up as written: ``text``, or the paper's title and abstract) holds a word of its family
    (:func:`_unstated`); but a phrase asked as a word of its own (one word, or ``whole``: see :func:`states`) with a
    derived noun in it is covered only where it is stated, in a noun form ("samples" covers no part of "sampling", as
    it states none of it). (A word is stated within a sentence: the text is read once, not each sentence again.)"""
    words = tokens(phrase)
    if (whole or len(words) == 1) and any(derived_noun(w) for w in words):
        return float(states(text, phrase, whole=True))
    return _coverage(tuple(topic_units(phrase)), text, _unstated(tuple(words), written or text))


@lru_cache(maxsize=4096)
def _unstated(words: tuple[str, ...], text: str) -> frozenset[str]:
    """The stems of the phrase's words that ``text`` holds only in words of another term of the family
    (:func:`~vectorstore.terms.same_term`): "generally" and "general" share the stem of "generalization", and state
    none of it. (Kept for the candidates of one question, as :func:`_coverage` is: the matcher asks per facet, then
    per facet's first spelling again for the membership features.)"""
    text_words, text_stems = _token_index(text)
    out = set()
    for w in words:
        if w in STOPWORDS or _COMPOUND.search(w):
            continue
        target = stem(w)
        found = [text_words[i] for i in _places(text_stems, target)]
        if found and not any(same_term(w, v) for v in found):
            out.add(target)
    return frozenset(out)


def coverage(units: Sequence[str], text: str) -> float:
    """Largest share of a topic's units (see :func:`topic_units`) found together in one sentence of ``text``.

    A compound such as "vision-language" counts only where the sentence states it as a phrase, so
    "language and vision tasks" does not cover it.
    """
    return _coverage(tuple(units), text)


@lru_cache(maxsize=4096)
def _coverage(units: tuple[str, ...], text: str, unstated: frozenset[str] = frozenset()) -> float:
    """:func:`coverage`, kept for the candidates of one question (the matcher asks it per facet, then per facet's
    first spelling again for the membership features)."""
    if not units:
        return 0.0
    best = 0.0
    for sentence, words in sentence_words(text):
        forms: set[str] | None = None
        found = 0
        for u in units:
            if _COMPOUND.search(u):
                forms = forms if forms is not None else phrase_forms(sentence)
                found += contains_phrase(forms, u)
            else:
                found += u in words and u not in unstated
        best = max(best, found / len(units))
    return best


SentenceWords = tuple[tuple[str, frozenset[str]], ...]
_given: dict[str, SentenceWords] = {}  # texts whose sentences' stems a caller had (see given_sentence_stems)
_GIVEN_MOST = 1024  # at most this many kept (then forgotten all at once)


def sentence_words(text: str) -> SentenceWords:
    """Each sentence of ``text`` (:func:`~vectorstore.text.sentence_spans`) with the set of its words' stems: the
    matcher tests every spelling of every facet against each candidate's sentences, one candidate after another, so
    a paper's are stemmed once, or never when the stems were derived at ingest (:func:`given_sentence_stems`)."""
    got = _given.get(text)
    return got if got is not None else _sentence_words(text)


@lru_cache(maxsize=1024)
def _sentence_words(text: str) -> SentenceWords:
    """(A few recent texts are enough for :func:`sentence_words`, and they are large: about 13 KB each.)"""
    return tuple((text[s:e], frozenset(stems(text[s:e]))) for s, e in sentence_spans(text))


def given_sentence_stems(text: str, sets: Sequence[frozenset[str]]) -> None:
    """Keep the stems of each sentence of ``text`` that a caller has (the reranker's per-paper data, derived at
    ingest: ``sets`` in the order of :func:`~vectorstore.text.sentence_spans`, the title's after them), so that
    :func:`sentence_words` reads them instead of stemming the text."""
    if text in _given:
        return
    spans = sentence_spans(text)
    if len(sets) < len(spans):  # (not this text's)
        return
    _keep(_given, text, tuple((text[s:e], sets[i]) for i, (s, e) in enumerate(spans)))


def _keep(given: dict[str, T], text: str, value: T) -> None:
    """Keep ``value`` for ``text``, forgetting every text kept before once :data:`_GIVEN_MOST` are."""
    if len(given) >= _GIVEN_MOST:
        given.clear()
    given[text] = value


TokenIndex = tuple[tuple[str, ...], tuple[str, ...]]
_given_words: dict[str, TokenIndex] = {}  # texts whose words' stems a caller had (see given_word_stems)


def _token_index(text: str) -> TokenIndex:
    """A text's lower-case words and their stems, in order (hyphenated words split)."""
    got = _given_words.get(text)
    return got if got is not None else _tokenised(text)


@lru_cache(maxsize=20_000)
def _tokenised(text: str) -> TokenIndex:
    words = tuple(tokens(text))
    return words, tuple(map(stem, words))


def given_word_stems(text: str, word_stems: Sequence[str]) -> None:
    """Keep the stems of the words of ``text`` that a caller has (the reranker's per-paper data, derived at ingest,
    in the order of :func:`~vectorstore.text.tokens`), so that the phrase tests read them instead of stemming."""
    if text in _given_words:
        return
    words = tuple(tokens(text))
    if len(words) != len(word_stems):  # (not this text's)
        return
    _keep(_given_words, text, (words, tuple(word_stems)))


def _places(stems: tuple[str, ...], target: str) -> Iterator[int]:
    """Where the stem ``target`` occurs in ``stems``, in order (``tuple.index`` scans in C: the matcher looks up a
    stem or two per candidate, so indexing every word of every candidate cost more than these scans)."""
    at = -1
    while True:
        try:
            at = stems.index(target, at + 1)
        except ValueError:
            return
        yield at


def one_words(forms: Sequence[str]) -> frozenset[str]:
    """The forms of a facet that are one word ("sampling"; "finetuning", the way the corpus writes "fine-tuning"):
    a form whose words, joined, are one of them is asked as a word of its own (:func:`states`' ``whole``)."""
    return frozenset(t[0] for f in forms if len(t := tokens(f)) == 1)


def as_one_word(phrase: str, words: frozenset[str]) -> bool:
    """Whether ``phrase``, its words joined, is one of ``words`` (:func:`one_words`)."""
    return "".join(tokens(phrase)) in words


def states(text: str, phrase: str, as_written: bool = False, whole: bool = False) -> bool:
    """Whether ``text`` states ``phrase``: its words in a row, each the same term as the phrase's word.

    Stems find the places; :func:`vectorstore.terms.same_term` checks the surface forms there, so "conformal
    prediction" is not found in "conformer prediction", while "differentially private" finds "differentially
    private models". A joined spelling ("metalearning" for "meta-learning", and the other way round) counts. An
    acronym is the word itself, alone, in the plural or in a compound, never a word it stems to ("ATS", defined by
    papers on time series, had met every paper with "at" in it): in any case when the user typed it ("Llama" for
    "LLaMA"), but only as written or in capitals when it is an English word in lower case
    (:func:`~rag.decide.acronyms.worded_acronym`: "CLIP", not "clip") or, with ``as_written``, when the papers
    define it (the matcher's forms, not the spelling asked: "NODEs", not "nodes"). A phrase of one word, or
    ``whole`` (one the corpus also writes as one word), is a word of its own: a derived noun in it takes only its
    noun forms (:func:`~vectorstore.terms.same_term`'s ``alone``: "sampling" is not stated by "samples", nor
    "relations" by "related").
    """
    if len(phrase) <= 3 and (core := short_acronym(phrase)):  # two capitals ("RL"): as written ("rl", "kg": any)
        return _short_in(core, text)
    if core := acronym_core(word := phrase.strip()):
        if as_written or worded_acronym(word):
            return _short_in(core, text) or _short_in(core.upper(), text)
        return _acronym_pattern(core, any_case=True).search(text) is not None
    want = tokens(phrase)
    if not want:
        return False
    one = whole or len(want) == 1
    words, at_stems = _token_index(text)
    for first in _first_stems(want[0]):  # (a British spelling may stem apart: "optimisation", "optimization")
        for start in _places(at_stems, first):
            if start + len(want) <= len(words) and all(same_term(w, words[start + j], one) for j, w in enumerate(want)):
                return True
    if len(want) > 1:
        joined = "".join(want)
        if any(same_term(joined, words[i], True) for i in _places(at_stems, stem(joined))):
            return True
    else:
        joined_index = _joined_index(text)
        if joined_index is not None:
            jw, jstems = joined_index
            if any(same_term(want[0], jw[i], True) for i in _places(jstems, stem(want[0]))):
                return True
        return _written_apart(words, want[0])
    return False


@lru_cache(maxsize=512)  # (the acronyms of recent questions, and those their papers define)
def _acronym_pattern(core: str, any_case: bool = False) -> re.Pattern[str]:
    """The acronym alone, in the plural or in a compound, as written (or in any case)."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(core)}s?(?![A-Za-z0-9])", re.IGNORECASE if any_case else 0)


def _short_in(acronym: str, text: str) -> bool:
    """Whether the text writes an acronym as given (a two-letter one: in capitals), alone, in the plural or in a
    compound ("RL", "RL-based", "NODEs")."""
    return _acronym_pattern(acronym).search(text) is not None


def _written_apart(words: tuple[str, ...], word: str) -> bool:
    """Whether two words in a row, each of at least :data:`~vectorstore.terms.SPLIT_MIN` letters, spell ``word``: the
    first its start, the two together the same term ("fine tuning", "fine tuned" of "finetuning"; "fine-tuning" is
    also found by joining the text's hyphenated words). (Each start of ``word`` is looked for by a scan in C: testing
    every pair of words in Python took a quarter of a first-time answer at 50k papers.)"""
    for n in range(SPLIT_MIN, len(word)):
        first = word[:n]
        for at in _places(words, first):
            if at + 1 < len(words) and len(words[at + 1]) >= SPLIT_MIN and same_term(word, first + words[at + 1], True):
                return True
    return False


@lru_cache(maxsize=20_000)
def _joined_index(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """:func:`_token_index` of the text with its hyphenated words joined ("meta-learning" → "metalearning"), or None
    when it has none. (Kept per text: the matcher tests each one-word spelling of each facet against each
    candidate, and joining a text anew each time cost a tenth of a first-time answer at 50k papers.)"""
    if not _JOIN.search(text):
        return None
    return _token_index(_JOIN.sub("", text))


@lru_cache(maxsize=4096)
def _first_stems(word: str) -> tuple[str, ...]:
    """The stems a word's spellings take (:func:`~vectorstore.terms.spelling_forms`), its own first."""
    return tuple(dict.fromkeys(stem(w) for w in spelling_forms(word)))


def holds_words(text: str, phrase: str, whole: bool = False) -> bool:
    """Whether ``text`` holds every content word of ``phrase`` (as the same term), anywhere; the second part of a
    relational compound need not be there ("language-guided" is held by "language"). A phrase of one word, or
    ``whole``, is a word of its own (as in :func:`states`)."""
    all_words = tokens(phrase)
    want = [w for w in all_words if w not in STOPWORDS and w not in RELATIONAL]
    if not want:
        return False
    one = whole or len(all_words) == 1
    words, at_stems = _token_index(text)
    return all(any(same_term(w, words[i], one) for s in _first_stems(w) for i in _places(at_stems, s)) for w in want)


def holds_words_together(text: str, phrase: str, whole: bool = False) -> bool:
    """Whether one sentence of ``text`` holds every content word of ``phrase`` (as :func:`holds_words` reads
    them): "code generation" is held by "we generate code", not by a paper on text generation that mentions code."""
    return holds_words(text, phrase, whole) and any(holds_words(t, phrase, whole) for t, _ in sentence_words(text))


def decide(phrase: bool, similarity: float, cover: float, rule: AnswerSettings) -> bool:
    """Whether a paper meets a topic: it states the phrase, or it is very close in embedding space and one
    sentence holds half the topic's words, or it is close and one sentence holds all of them."""
    return (
        phrase
        or (similarity >= rule.dense_alone and cover >= HALF)
        or (cover >= 1.0 and similarity >= rule.dense_with_terms)
    )
