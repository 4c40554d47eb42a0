"""Which units of a question are its topic: a learned, calibrated decision from corpus and general-English
statistics, not a list of phrasings.

A researcher wraps a topic in words of a request, a purpose, a judgement or chat ("Has anyone here *worked* on
federated learning?", "… for a *related-work section*", "the *state-of-the-art* in X"). Such a unit can rank
papers, but it must never decide which papers belong to the answer. Each facet of a plan gets a probability of
being topical from a small model (:data:`FEATURES`, trees in ``rag/ranker/topicality.txt``, trained on the dev
questions, generated two-facet topics and generated frames by ``python -m bench.topicality``):

- how specific its words are to the corpus: the share of papers using a word against its frequency in general
  English (``wordfreq``, bundled data) — "federated" is far commoner in papers than in English, "worked" is not;
- how common it is in English at all, and in the corpus (a word in most papers narrows nothing);
- whether the corpus states it as a term (a phrase of several words, three papers or more), or it is a name or
  an acronym ("WaterSIC", "LLMs");
- how strongly it goes with the question's other facets: topics asked together co-occur in papers far more than
  chance ("reinforcement learning" and "robotic manipulation"), a word of the request does not ("worked" and
  "federated learning");
- how far it falls behind the most topical facet of the question;
- whether it can head a noun phrase: a dictionary of English word classes (``lemminflect``, bundled data) knows
  "improve", "worked" and "recent" only as a verb or an adjective, "safety" and "transformers" as nouns (a word it
  does not know, "interpretability", "WaterSIC", counts as a noun: jargon and names are).

The model is a small gradient-boosted forest (LightGBM, monotone in the features whose direction is plain: more
specific to the corpus, a term, a name, a noun head, going with the other facets is never less topical), stored in
LightGBM's text format (``rag/ranker/topicality.txt``) and evaluated with numpy
(:class:`askpapers.rag.retrieve.forest.Forest`). A linear model could not weigh a common noun beside a term
("*safety* of language models", "*privacy* in federated learning") apart from a word of the request beside one.

A facet below one half only ranks; the most topical facet of a question always gates.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from askpapers.rag.read.lexicon import Lexicon, word_classes, zipf
from askpapers.rag.retrieve.forest import Forest
from askpapers.vectorstore.text import STOPWORDS

FEATURES = [
    "keyness_max", "keyness_min", "zipf_max", "zipf_min", "log_share", "n_words", "term", "name", "lift_max",
    "keyness_gap", "share_gap", "head_noun", "verbal_share",
]  # fmt: skip
# the direction each feature may move the probability in (LightGBM's monotone constraints; 0: either)
MONOTONE = [1, 1, -1, -1, 0, 1, 1, 1, 1, -1, 0, 1, -1]
TOPICAL = 0.5  # a facet at this probability or above gates; below it only ranks
TERM_PAPERS = 3  # a phrase of several words that this many papers state is a term of the corpus
SMOOTH = 0.5  # added to counts before taking logs
MIN_PAPERS = 30  # in a smaller store a unit's share of the papers says nothing: every unit counts as topical


def model_path() -> Path:
    """The trees (LightGBM's text format); their features are listed beside them, in ``topicality.json``."""
    return Path(str(resources.files("askpapers.rag") / "ranker" / "topicality.txt"))


def content_words(phrase: str) -> list[str]:
    words = [w.strip(".,;:!?\"'()[]") for w in phrase.lower().split()]
    return [w for w in words if w and w not in STOPWORDS]


def keyness(word: str, lexicon: Lexicon) -> float:
    """log10 of the word's share of papers against its frequency in English (an unknown English word counts as
    one per billion)."""
    size = max(lexicon.size, 1)
    share = (lexicon.df(word) + SMOOTH) / size
    z = zipf(word)
    english = 10 ** ((z if z > 0 else 1.0) - 9)
    return math.log10(share) - math.log10(english)


def _is_name(word: str) -> bool:
    return any(c.isdigit() for c in word) or sum(c.isupper() for c in word) >= 2


def nominal(word: str) -> float:
    """Whether a (lower-case) word can head a noun phrase: 1 when the dictionary knows it as a noun or does not
    know it (jargon, names), 0.5 for the "-ing" form of a verb (a gerund names an activity: "unlearning"), 0 when it
    knows it only as a verb, an adjective or an adverb ("improve", "worked", "recent")."""
    classes = word_classes(word)
    if not classes or "NOUN" in classes or "PROPN" in classes:
        return 1.0
    return 0.5 if word.endswith("ing") else 0.0


def verbal(word: str) -> bool:
    """Whether the dictionary knows a (lower-case) word only as a verb or an adverb ("worked", "improve", "asap"; not
    an adjective: "sudden death", "ventricular arrhythmias" are terms)."""
    classes = word_classes(word)
    return bool(classes) and classes <= {"VERB", "ADV"}


@dataclass
class Model:
    """The trees over :data:`FEATURES`; a row's probability is the logistic of their summed score."""

    forest: Forest

    @classmethod
    def load(cls, path: Path | None = None) -> Model:
        path = path or model_path()
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if meta.get("features") != FEATURES:
            raise ValueError("the topicality model was trained on other features; run python -m bench.topicality")
        return cls(Forest.load(path))

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        raw = self.forest.predict(np.array(rows, dtype=np.float64))
        return [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, float(z))))) for z in raw]


@lru_cache(maxsize=1)
def shipped_model() -> Model | None:
    """The shipped model, or None when it is not there (every facet then counts as topical)."""
    return Model.load() if model_path().exists() else None


def features(units: Sequence[str], lexicon: Lexicon) -> list[list[float]]:
    """The feature rows of a question's facets, each given by its first alternative as typed."""
    size = max(lexicon.size, 1)
    base: list[dict[str, float]] = []
    for unit in units:
        words = content_words(unit) or [unit.lower()]
        keys = [keyness(w, lexicon) for w in words]
        zipfs = [zipf(w) for w in words]
        df = lexicon.phrase_df(unit)
        head = nominal(words[-1])
        base.append({
            "keyness_max": max(keys), "keyness_min": min(keys), "zipf_max": max(zipfs), "zipf_min": min(zipfs),
            "log_share": math.log10((df + SMOOTH) / size), "n_words": float(len(words)),
            "term": float(len(words) > 1 and df >= TERM_PAPERS), "name": float(any(_is_name(w) for w in unit.split())),
            "head_noun": head, "verbal_share": sum(verbal(w) for w in words) / len(words),
        })  # fmt: skip
    rows = []
    top_key = max((b["keyness_max"] for b in base), default=0.0)
    top_share = min((b["log_share"] for b in base), default=0.0)
    for i, (unit, b) in enumerate(zip(units, base, strict=True)):
        lifts = []
        for j, other in enumerate(units):
            if j != i:
                both = lexicon.both_df(unit, other)
                a, c = lexicon.phrase_df(unit), lexicon.phrase_df(other)
                lifts.append(math.log10((both + SMOOTH) * size / ((a + SMOOTH) * (c + SMOOTH))))
        b["lift_max"] = max(lifts, default=0.0)
        b["keyness_gap"] = top_key - b["keyness_max"]
        b["share_gap"] = b["log_share"] - top_share
        rows.append([b[f] for f in FEATURES])
    return rows


def topicality(units: Sequence[str], lexicon: Lexicon, model: Model | None = None) -> list[float]:
    """The probability that each unit is a topic of the question (see the module text)."""
    if not units:
        return []
    m = model or shipped_model()
    if m is None or lexicon.size < MIN_PAPERS:
        return [1.0] * len(units)
    return [round(p, 4) for p in m.probabilities(features(units, lexicon))]
