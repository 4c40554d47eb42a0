"""Papers in groups by approach: clusters of their embeddings, each named by its distinctive terms.

Names come from class-based TF-IDF (c-TF-IDF, as in BERTopic): a term scores high for a group when it is frequent
in that group's abstracts and rare in the other groups'. Stop-words, generic paper words ("propose", "results")
and the question's own words are left out, so the names say how the groups differ, not what they share.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from askpapers.vectorstore.text import STOPWORDS, stem, tokens

GENERIC = STOPWORDS | frozenset(
    """
    model models method methods propose proposed proposes results show shows shown learning based approach approaches
    data performance existing novel problem problems framework frameworks paper demonstrate demonstrates experiments
    experiment while which their these such across first into well however tasks task training network networks
    neural deep large state art often analysis derive introduce introduces outperforms achieves achieve using provide
    provides study studies enables leverages leverage address addresses under significantly both remains without
    through standard recent strong work empirical theoretical benchmarks benchmark baselines efficient effective
    improves improve improved further new can also use used uses we our this that than more most its it has have
    how what when where many two three one several different various given thus may can via each other https http
    github com www code available org html source establishes establish enable enables input inputs output outputs
    set sets allows allow require requires yields yield obtain obtains leads lead make makes takes take given key
    additionally furthermore moreover specifically particular particularly finally overall thereby
    """.split()  # noqa: SIM905
)
_YEARS = re.compile(r"(?:19|20)\d{2}")


def group_count(n: int, most: int = 6) -> int:
    """How many groups n papers make: about the square root of n/2, at least 2 and at most ``most``."""
    return max(2, min(most, round(math.sqrt(n / 2)))) if n >= 4 else 1


def cluster(vectors: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Group labels for the (L2-normalised) vectors: k-means with a fixed seed, so the groups are repeatable."""
    if k <= 1 or len(vectors) <= k:
        return np.zeros(len(vectors), dtype=int) if k <= 1 else np.arange(len(vectors))
    from sklearn.cluster import KMeans

    labels: np.ndarray = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(vectors)
    return labels


def _terms(text: str, skip: set[str]) -> list[str]:
    words = [w for w in tokens(text) if len(w) > 2 and not w.isdigit() and w not in GENERIC and stem(w) not in skip]
    bigrams = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    return words + bigrams


def names(groups: Sequence[Iterable[str]], exclude: Iterable[str] = (), top: int = 2) -> list[str]:
    """A name for each group of texts: its ``top`` most distinctive terms by c-TF-IDF, joined with " · "."""
    skip = {stem(w) for w in tokens(" ".join(exclude))}
    counts = [Counter(t for text in texts for t in set(_terms(text, skip))) for texts in groups]
    sizes = [max(1, sum(1 for _ in texts)) for texts in groups]
    total = Counter[str]()
    for c in counts:
        total.update(c)
    mean_size = sum(sum(c.values()) for c in counts) / max(1, len(counts))
    out = []
    for c, size in zip(counts, sizes, strict=True):
        scored = []
        for term, tf in c.items():
            if tf < 2 and size > 2:  # a term of one paper names no group
                continue
            idf = math.log(1 + mean_size / total[term])
            bonus = 1.2 if " " in term else 1.0  # a phrase says more than either of its words
            scored.append((tf / size * idf * bonus, term))
        chosen: list[str] = []
        for _, term in sorted(scored, key=lambda x: (-x[0], x[1])):
            if any(term in t or t in term for t in chosen):  # "graph" and "graph neural": keep one
                continue
            chosen.append(term)
            if len(chosen) == top:
                break
        out.append(" · ".join(chosen) if chosen else "other")
    return out
