"""What the corpus says about words and phrases: the statistics the planner reads questions with.

The planner never decides from a list of phrasings. It asks the corpus: how many papers use a word
(:meth:`Lexicon.df`), how many state a phrase (:meth:`Lexicon.phrase_df`), which of its words are the same
term as a word of the question (:meth:`Lexicon.family`), which venues it holds, and whether an unknown word is
a typo of a word it uses (:meth:`Lexicon.correct`). :class:`CorpusLexicon` answers from the store's derived
BM25 index; tests use small hand-made lexicons with the same interface.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from askpapers.rag.retrieve.index import LexicalStats
from askpapers.rag.retrieve.recent import Recent
from askpapers.vectorstore.embed import MODEL_DIR
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.terms import RESPELLINGS, respelled, same_term, term_stems, written_form_words, written_forms
from askpapers.vectorstore.text import STOPWORDS, tokens
from askpapers.vectorstore.types import Filters

log = logging.getLogger("askpapers")
PHRASE_CACHE = 4096  # phrase counts kept per store revision
# a word at least this frequent in general English (wordfreq's Zipf scale: once per million words) is a real word,
# never a misspelling to correct, even when neither the corpus nor the embedder's vocabulary has it ("pointers")
KNOWN_ZIPF = 3.0
# letters of a word in "-ed" the dictionary does not know that is read as a participle (see _lemmas)
PARTICIPLE_LETTERS = 6
COHESION_PAPERS = 30  # the cohesion of a phrase fewer papers state is not measured (too few to tell from chance)
COHESION_SAMPLE = 200  # papers stating a phrase whose vectors are read (spread evenly over them)
COHESION_BASE = 1000  # papers whose vectors give the corpus's mean
TERM = 0.35  # units joined by a link are one term when this share of the rarer unit's papers state the whole
# … or when this share of the papers holding both units state them linked ("theory of mind": 7 of 8, "structure from
# motion" 6 of 23), while two topics asked together are rarely written linked ("bias in LLMs" 3 of 20, "foundation
# models in robotics" 3 of 33; bench.links)
TERM_SHARE = 0.2
MIN_TERM_PAPERS = 3  # … and at least this many papers state it
COMMON = 0.15  # a word in at least this share of papers carries no topic on its own ("learning", "model")


class Lexicon(Protocol):
    """Corpus statistics for reading questions."""

    @property
    def size(self) -> int:
        """Papers in the corpus."""

    def df(self, word: str) -> int:
        """Papers that use the (lower-case) word."""

    def prime(self, words: Iterable[str]) -> None:
        """Look the document frequencies of ``words`` up at once (before asking :meth:`df` about each)."""

    def phrase_df(self, phrase: str) -> int:
        """Papers that state the phrase (consecutive words, compared on stems)."""

    def written_df(self, phrase: str) -> int:
        """Papers that state the phrase written so (:meth:`phrase_df` also counts a phrase no paper writes so as the
        corpus writes it)."""

    def both_df(self, a: str, b: str) -> int:
        """Papers that state both phrases."""

    def family(self, word: str) -> list[str]:
        """The corpus's words that are the same term as ``word`` (itself included when the corpus uses it)."""

    def known(self, word: str) -> bool:
        """Whether a lower-case word is a real word: one the corpus uses, or an English word."""

    def correct(self, word: str) -> str | None:
        """The known word an unknown word most likely misspells, or None."""

    def near_words(self, word: str) -> list[str]:
        """The corpus's words one edit from ``word`` (a transposition counting as one), most used first."""

    def venues(self) -> list[str]:
        """The venues of the corpus's papers."""

    def cohesion(self, phrase: str, least: int | None = None) -> float | None:
        """How much closer to one another the papers stating the phrase are than as many papers drawn at random
        (None when it cannot be told; with ``least``, when fewer papers than that state it in any form of its
        words)."""


class PhraseVectors(Protocol):
    """What :meth:`CorpusLexicon.cohesion` reads besides the statistics: the papers stating a phrase, and their
    vectors."""

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...


@lru_cache(maxsize=1)
def _zipf() -> object:
    from wordfreq import zipf_frequency

    return zipf_frequency


def zipf(word: str) -> float:
    """The word's frequency in general English on the Zipf scale (3: once per million words; 0: unknown)."""
    fn = _zipf()
    return float(fn(word, "en"))  # type: ignore[operator]


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """The lemmas the dictionary of English word forms (``lemminflect``, bundled data) gives a (lower-case) word,
    by word class (UPOS tag); empty when it does not know it. (Kept: read the result, never change it.) A word it
    does not know that ends in "-ed" and that general English uses (``wordfreq``) is the participle of a verb
    (:data:`PARTICIPLE_LETTERS`): "repurposed", "tokenized" are verbs the dictionary lacks, and English nouns in
    "-ed" are short or known ("bed", "hundred", "infrared")."""
    from lemminflect import getAllLemmas, getAllLemmasOOV

    known = dict(getAllLemmas(word))
    if not known and len(word) >= PARTICIPLE_LETTERS and word.endswith("ed") and zipf(word) > 0:
        return dict(getAllLemmasOOV(word, "VERB"))
    return known


def word_classes(word: str) -> frozenset[str]:
    """The word classes (UPOS tags) the dictionary knows a (lower-case) word in; empty when it does not know it."""
    return frozenset(_lemmas(word))


@lru_cache(maxsize=8192)
def past_participles(lemma: str) -> tuple[str, ...]:
    """The past participles the dictionary of English word forms (``lemminflect``, bundled data) inflects a verb
    to ("make": "made", "drive": "driven", "put": "put")."""
    from lemminflect import getInflection

    return tuple(getInflection(lemma, "VBN"))


def verb_lemmas(word: str) -> tuple[str, ...]:
    """The lemmas the dictionary gives a (lower-case) word as a verb ("comparing": "compare"); empty when it knows
    it as no verb."""
    return _lemmas(word).get("VERB", ())


def plural_noun(word: str) -> bool:
    """Whether the dictionary knows a (lower-case) word as the plural of a noun ("applications", "variants"; not
    "bias", "robustness" or "series")."""
    lemmas = _lemmas(word).get("NOUN", ())
    return bool(lemmas) and word not in lemmas


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Whole English words of the embedder's WordPiece vocabulary (about 21,000): the planner's dictionary."""
    with (MODEL_DIR / "vocab.txt").open(encoding="utf-8") as fh:
        return frozenset(w for w in (line.strip() for line in fh) if w.isalpha() and w.islower() and len(w) > 1)


def max_typo_distance(word: str) -> int:
    """Edits a misspelling may be away from its word: one for short words, two from eight letters on."""
    return 1 if len(word) < 8 else 2


def typo_distance(word: str, other: str) -> int:
    """Edits from one word to the other, a transposition counting as one (as :func:`closest` counts them)."""
    from rapidfuzz.distance import OSA

    return int(OSA.distance(word, other))


def closest(word: str, candidates: Iterable[tuple[str, int]]) -> str | None:
    """The candidate fewest edits (a transposition counts as one) from ``word``, the most frequent on a tie."""
    from rapidfuzz.distance import OSA

    limit = max_typo_distance(word)
    best: tuple[int, int, str] | None = None
    for cand, df in candidates:
        if abs(len(cand) - len(word)) > limit or (cand[:1] != word[:1] and cand[1:2] != word[1:2]):
            continue
        d = OSA.distance(word, cand, score_cutoff=limit)
        if d <= limit and (best is None or (d, -df) < (best[0], -best[1])):
            best = (d, df, cand)
    return best[2] if best else None


class CorpusLexicon:
    """A :class:`Lexicon` over the :class:`~rag.retrieve.index.LexicalStats` of an index, cached until the store
    changes."""

    def __init__(
        self, index: LexicalStats, extra_words: Iterable[str] = (), vectors: PhraseVectors | None = None
    ) -> None:
        self.index = index
        self.vectors = vectors  # (without them, no cohesion is measured)
        self.extra = frozenset(extra_words)  # request words: known, and candidates for corrections
        self._lock = threading.Lock()
        self._revision = ""
        self._df: dict[str, int] = {}
        self._phrases: Recent[int] = Recent(PHRASE_CACHE)
        self._cohesion: Recent[tuple[float | None]] = Recent(PHRASE_CACHE)
        self._mean: np.ndarray | None = None
        self._by_length: dict[int, list[tuple[str, int]]] | None = None
        self._venues: list[str] | None = None
        self._size = 0

    def _fresh(self) -> None:
        self.index.refresh()  # (one check per question: the caller pins the index while it plans)
        revision = self.index.seen_revision
        if revision != self._revision:
            with self._lock:
                self._revision = revision
                self._df.clear()
                self._phrases.clear()
                self._cohesion.clear()
                self._mean = None
                self._by_length = None
                self._venues = None
                self._size = self.index.size()

    @property
    def size(self) -> int:
        self._fresh()
        return self._size

    def prime(self, words: Iterable[str]) -> None:
        """Look the document frequencies of ``words`` up in one query."""
        self._fresh()
        todo = [w for w in dict.fromkeys(words) if w not in self._df]
        if todo:
            found = self.index.word_df(todo)
            with self._lock:
                self._df.update({w: found.get(w, 0) for w in todo})

    def df(self, word: str) -> int:
        self.prime([word])
        return self._df.get(word, 0)

    def phrase_df(self, phrase: str) -> int:
        self._fresh()
        key = " ".join(phrase.lower().split())
        parts = tokens(key)
        # (a hyphenated word is a phrase: "zero-shot" as "zero shot"; a range such as "1-1" is no compound)
        if " " not in key and (len(parts) < 2 or not all(p.isalpha() for p in parts)):
            return self.df(key)
        n = self._phrases.get(key)
        if n is None:  # (in any spelling: "bayesian optimisation" is stated as often as "bayesian optimization")
            other = respelled([key])
            n = self.index.facet_count([[key, *other]]) if other else self.index.phrase_count(key)
            if n == 0 and (apart := self._written(key)):  # (a phrase never written so, as the corpus writes it:
                n = self.index.facet_count([apart])  # "multiagent reinforcement learning", "multi-agent ...")
            self._phrases.put(key, n)
        return n

    def written_df(self, phrase: str) -> int:
        self._fresh()
        key = " ".join(tokens(phrase))
        n = self._phrases.get("\0" + key)
        if n is None:
            n = self.index.phrase_count(key) if " " in key else self.df(key)
            self._phrases.put("\0" + key, n)
        return int(n)

    def _written(self, phrase: str) -> list[str]:
        """The phrase with a word written as two the corpus uses ("multi agent" of "multiagent"), or two words
        written as one it uses ("multiagent" of "multi agent"), at most :data:`~vectorstore.terms.RESPELLINGS`."""
        words = tokens(phrase)
        self.prime(written_form_words(words))
        return written_forms(words, lambda w: self.df(w) > 0)[:RESPELLINGS]

    def both_df(self, a: str, b: str) -> int:
        self._fresh()
        key = " ".join(a.lower().split()) + "\0" + " ".join(b.lower().split())
        n = self._phrases.get(key)
        if n is None:
            n = self.index.facet_count([[a], [b]])
            self._phrases.put(key, n)
        return n

    def family(self, word: str) -> list[str]:
        self._fresh()
        words = self.index.words_with_stems(sorted(term_stems(word)))
        return [w for w, _ in sorted(words, key=lambda x: -x[1]) if same_term(word, w)]

    def known(self, word: str) -> bool:
        return word in self.extra or word in english_words() or self.df(word) > 0 or zipf(word) >= KNOWN_ZIPF

    def _buckets(self) -> dict[int, list[tuple[str, int]]]:
        """The corpus's words and their document frequencies by length (the request words the likeliest)."""
        self._fresh()
        with self._lock:
            if self._by_length is None:
                by_length: dict[int, list[tuple[str, int]]] = {}
                for w, df in self.index.vocabulary(min_df=1):
                    if w.isalpha():
                        by_length.setdefault(len(w), []).append((w, df))
                for w in self.extra:
                    by_length.setdefault(len(w), []).append((w, 10**6))  # request words are the likeliest
                self._by_length = by_length
            return self._by_length

    def near_words(self, word: str) -> list[str]:
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        lengths = (len(word) - 1, len(word), len(word) + 1)  # (the request words, at 10**6, are none of them)
        pool = [(w, df) for n in lengths for w, df in self._buckets().get(n, []) if df < 10**6 and w != word]
        near = process.extract(word, [w for w, _ in pool], scorer=OSA.distance, score_cutoff=1, limit=None)
        return [w for w, _ in sorted((pool[i] for _, _, i in near), key=lambda x: (-x[1], x[0]))]

    def correct(self, word: str) -> str | None:
        buckets = self._buckets()
        limit = max_typo_distance(word)
        pool = [c for n in range(len(word) - limit, len(word) + limit + 1) for c in buckets.get(n, [])]
        return closest(word, pool)

    def venues(self) -> list[str]:
        self._fresh()
        if self._venues is None:
            self._venues = self.index.venues()
        return self._venues

    def cohesion(self, phrase: str, least: int | None = None) -> float | None:
        """How much closer to one another the papers stating ``phrase`` are than as many papers drawn at random:
        the squared length of the mean of their (unit) paper vectors, less what a random draw of as many gives on
        average (``|m|² + (1 - |m|²) / n``, ``m`` the corpus's mean vector). The papers on a topic are close to one
        another ("language models" 0.11 in ICML 2024, "neural networks" 0.08); those stating a phrase of the
        writing are spread over every topic ("state of the art" 0.006, "extensive experiments" 0.02). Read over at
        most :data:`COHESION_SAMPLE` of them; None when fewer than :data:`COHESION_PAPERS` state it (too few to tell
        from chance) or the index has no vectors. With ``least``, the floor is that many papers stating it in any
        form of its words (a verb alone is measured over its family: "prune" over the papers on pruning too)."""
        self._fresh()
        key = " ".join(phrase.lower().split())
        kept = key if least is None else f"{least}\0{key}"
        got = self._cohesion.get(kept)
        if got is None:
            try:
                got = (self._measure(key, least),)
            except StoreError as e:  # (a measure that only weighs: the question is read without it, not failed)
                log.warning("askpapers: the cohesion of %r could not be read: %s", phrase, e)
                return None
            self._cohesion.put(kept, got)
        return got[0]

    def _measure(self, phrase: str, least: int | None) -> float | None:
        if self.vectors is None or (least is None and self.phrase_df(phrase) < COHESION_PAPERS):
            return None
        ids = sorted(self.vectors.phrase_ids([phrase]))
        if len(ids) < (COHESION_PAPERS if least is None else least):
            return None
        ids = ids[:: max(1, len(ids) // COHESION_SAMPLE)][:COHESION_SAMPLE]
        mean = self._corpus_mean()
        found = _unit_mean(self.vectors.vectors(ids))
        if mean is None or found is None:
            return None
        n = found[1]
        base = float(mean @ mean)
        return float(found[0] @ found[0]) - base - (1.0 - base) / n

    def _corpus_mean(self) -> np.ndarray | None:
        """The mean of the unit vectors of :data:`COHESION_BASE` papers (chosen by a hash of their ids), per
        revision."""
        if self._mean is None and self.vectors is not None:
            got = _unit_mean(self.vectors.vectors(self.index.sample_ids(COHESION_BASE)))
            self._mean = got[0] if got is not None else None
        return self._mean


def _unit_mean(vectors: dict[str, np.ndarray]) -> tuple[np.ndarray, int] | None:
    """The mean of these vectors, each scaled to length 1, and how many there were (None for none)."""
    rows = [v / n for v in vectors.values() if (n := float(np.linalg.norm(v))) > 0]
    return (np.mean(np.stack(rows), axis=0), len(rows)) if rows else None


def common_unit(unit: list[str], lexicon: Lexicon) -> bool:
    """A unit made only of words too frequent to carry a topic ("learning", "model", "data")."""
    size = max(lexicon.size, 1)
    return all(lexicon.df(w) >= COMMON * size for w in unit if w not in STOPWORDS)


def assoc(whole: str, left: str, right: str, lexicon: Lexicon) -> float:
    """The share of the rarer part's papers that state the whole."""
    n = lexicon.phrase_df(whole)
    if n == 0:
        return 0.0
    return n / max(1, min(lexicon.phrase_df(left), lexicon.phrase_df(right)))


def is_term(whole: list[str], left: list[str], right: list[str], lexicon: Lexicon) -> bool:
    """Whether ``whole`` ("left", maybe a link such as "of", "right") is one term in this corpus: stated by
    :data:`MIN_TERM_PAPERS` papers or more, and either a part is too common to be a topic of its own, or the whole
    holds a :data:`TERM` share of the rarer part's papers, or a :data:`TERM_SHARE` of the papers holding both. A word
    linked to itself is one ("sequence to sequence", "image to image"): no question asks for a topic and the same
    topic again."""
    n = lexicon.phrase_df(" ".join(whole))
    if n < MIN_TERM_PAPERS:
        return False
    if common_unit(left, lexicon) or common_unit(right, lexicon) or left[-1:] == right[:1]:
        return True
    return held_as_term(" ".join(whole), " ".join(left), " ".join(right), lexicon)


def held_as_term(whole: str, left: str, right: str, lexicon: Lexicon) -> bool:
    """Whether the corpus writes ``whole`` (its parts ``left`` and ``right``) as a term, by the shares of
    :func:`is_term`: a :data:`TERM` share of the rarer part's papers, or a :data:`TERM_SHARE` of the papers holding
    both parts, state the whole."""
    if assoc(whole, left, right, lexicon) >= TERM:
        return True
    return lexicon.phrase_df(whole) >= TERM_SHARE * max(1, lexicon.both_df(left, right))
