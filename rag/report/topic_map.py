"""The corpus as a 2-D map for the UI: a neighbourhood-keeping projection of the paper embeddings, k-means topics
named by c-TF-IDF.

* **Projection.** openTSNE (cosine distances) keeps papers next to their nearest neighbours, so a paper lands
  among the papers it is like; below :data:`TSNE_MIN` papers t-SNE has too few neighbours to work with and the
  first two principal components are used. A fit is deterministic (fixed seed) and is stored next to the store
  (:class:`ProjectionCache`), keyed by the store's revision and its papers, so it is computed once per revision.
* **Topics.** Cosine k-means on the embeddings; each cluster is named by two or three content words: its best
  c-TF-IDF terms (words and two- and three-word phrases of its abstracts' noun groups, weighed against the whole
  corpus). Terms come from the stretches of content words between function words, verbs and punctuation
  (:func:`vectorstore.key_phrases.noun_groups`), so a name is never a verb ("reduces") or a function word; a term must
  end on a word the corpus uses as a noun phrase's head (a single word: mostly so, and not common in general
  English by wordfreq, so "sparse", "deep" or "head" name nothing alone). Stop-words are dropped, and so are the
  corpus's own generic words: those in more than :data:`GENERIC_DF` of all abstracts. Links, e-mail addresses and
  code-like pieces (with ``/``, ``@``, ``_``, a dot inside or a digit) are not words.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from wordfreq import zipf_frequency

from askpapers.vectorstore.key_phrases import is_head, noun_groups
from askpapers.vectorstore.terms import same_term
from askpapers.vectorstore.text import STOPWORDS
from askpapers.vectorstore.types import Paper

log = logging.getLogger("askpapers")

TSNE_MIN = 15  # fewer papers than this are projected by PCA
GENERIC_DF = 0.25  # a word in more than this share of all abstracts names no topic ("learning", "propose", …)
GENERIC_MIN_DOCS = 5  # … and in a small corpus, it must also be in more than this many abstracts
MOST_TOPICS = 10
PHRASE_SHARE = 0.6  # a phrase names a topic instead of its word when it scores this share of the word
HEAD_SHARE = 0.25  # a word names a topic if it ends this share of the noun groups it is in ("networks", not "deep")
MODIFIER_SHARE = 0.1  # … and a word that names nothing alone by a phrase of it that scores this share of it
ALONE_SHARE = 0.4  # … and alone, if it ends this share: mostly a head ("dynamics"), not a modifier ("sparse")
COMMON_ZIPF = 5.0  # a word this common in general English (wordfreq's Zipf scale) names no topic alone ("head")


@dataclass
class MapPoint:
    paper_id: str
    title: str
    x: float
    y: float
    topic: str


@dataclass(frozen=True)
class MapView:
    """What the Map draws: a sample of the corpus (all of it when it is small) and the cited papers, and how many
    of each, so it can say what it shows."""

    points: list[MapPoint]  # the sample's, then the cited papers outside it
    total: int  # papers in the corpus
    sampled: int  # papers in the sample
    cited: int  # cited papers on the map (all of those the store holds)

    @property
    def is_sample(self) -> bool:
        return self.sampled < self.total

    def note(self) -> str:
        """The map's scope in words: "Showing 20,000 of 1,000,000 papers, a sample; the 12 cited papers are always
        shown." ("" when it shows every paper)."""
        if not self.is_sample:
            return ""
        cited = ""
        if self.cited:
            many = f"{self.cited:,} cited papers are" if self.cited > 1 else "cited paper is"
            cited = f"; the {many} always shown"
        return (
            f"Showing {self.sampled:,} of {self.total:,} papers, a sample (the same papers until the corpus "
            f"changes){cited}."
        )


def beside(
    sample: Sequence[MapPoint], sample_vectors: np.ndarray, papers: Sequence[Paper], vectors: np.ndarray
) -> list[MapPoint]:
    """Points for papers outside the sample (the cited ones): each next to its nearest sampled paper (cosine),
    with that paper's topic; the projection is not fitted again for them."""
    if not len(sample) or not len(papers):
        return []
    nearest = np.argmax(np.asarray(vectors, dtype=np.float32) @ np.asarray(sample_vectors, dtype=np.float32).T, axis=1)
    xs = np.array([p.x for p in sample], dtype=float)
    ys = np.array([p.y for p in sample], dtype=float)
    nudge = 0.01 * max(float(np.ptp(xs)), float(np.ptp(ys)), 1e-6)  # (beside it, not on top of it)
    out = []
    for k, p in enumerate(papers):
        near = sample[int(nearest[k])]
        out.append(MapPoint(p.paper_id, p.title, round(near.x + nudge, 4), round(near.y + nudge, 4), near.topic))
    return out


# -- the projection ---------------------------------------------------------------------------------------------
def pca(vectors: np.ndarray) -> np.ndarray:
    """2-D coordinates: the first two principal components."""
    out = np.zeros((len(vectors), 2), dtype=np.float32)
    if len(vectors) < 2:
        return out
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    out[:, : coords.shape[1]] = coords
    return out


def tsne(vectors: np.ndarray, threads: int = 1) -> np.ndarray:
    """2-D coordinates by openTSNE over cosine distances (deterministic)."""
    from openTSNE import TSNE  # imported on first use: it is only needed for the map

    n = len(vectors)
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3)))
    model = TSNE(perplexity=perplexity, metric="cosine", n_jobs=threads, random_state=0, verbose=False)
    return np.asarray(model.fit(np.asarray(vectors, dtype=np.float64)), dtype=np.float32)


def project(vectors: np.ndarray, threads: int = 1) -> np.ndarray:
    """2-D coordinates that keep neighbourhoods: t-SNE, or PCA for fewer than :data:`TSNE_MIN` papers."""
    if len(vectors) < TSNE_MIN:
        return pca(vectors)
    return tsne(vectors, threads)


class ProjectionCache:
    """A projection stored in one ``.npz`` file, valid for one key (the store revision and its papers).

    The file is written atomically; a data directory that cannot be written (read-only) only loses the cache.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def key(revision: str, paper_ids: Sequence[str]) -> str:
        h = hashlib.blake2b(revision.encode(), digest_size=16)
        for pid in paper_ids:
            h.update(b"\0" + pid.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def load(self, key: str, n: int) -> np.ndarray | None:
        try:
            with np.load(self.path, allow_pickle=False) as f:
                if str(f["key"]) != key or f["xy"].shape != (n, 2):
                    return None
                return np.asarray(f["xy"], dtype=np.float32)
        except (OSError, KeyError, ValueError):
            return None

    def save(self, key: str, xy: np.ndarray) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".map-", suffix=".npz")
            with os.fdopen(fd, "wb") as f:
                np.savez(f, key=np.array(key), xy=xy)
            os.replace(tmp, self.path)
        except OSError as e:
            log.info("askpapers: the map's projection is not cached (%s)", e)

    def projection(self, revision: str, paper_ids: Sequence[str], vectors: np.ndarray, threads: int = 1) -> np.ndarray:
        """The stored projection for this revision and these papers, or a new one (then stored)."""
        key = self.key(revision, paper_ids)
        xy = self.load(key, len(paper_ids))
        if xy is None:
            started = time.perf_counter()
            xy = project(vectors, threads)
            log.info("askpapers: projected %d papers in %.1f s", len(paper_ids), time.perf_counter() - started)
            self.save(key, xy)
        return xy


# -- topics -----------------------------------------------------------------------------------------------------
def kmeans(vectors: np.ndarray, k: int, iterations: int = 25, seed: int = 0) -> np.ndarray:
    """Cluster labels (cosine k-means with k-means++ seeding; deterministic)."""
    n = len(vectors)
    if n <= k:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    centres = [vectors[rng.integers(n)]]
    for _ in range(1, k):
        d = 1 - np.max(vectors @ np.array(centres).T, axis=1)
        d = np.clip(d, 0, None) ** 2
        centres.append(vectors[rng.choice(n, p=d / d.sum()) if d.sum() > 0 else rng.integers(n)])
    c = np.array(centres)
    labels = np.zeros(n, dtype=int)
    for _ in range(iterations):
        labels = np.argmax(vectors @ c.T, axis=1)
        for j in range(k):
            members = vectors[labels == j]
            if len(members):
                m = members.mean(axis=0)
                c[j] = m / max(float(np.linalg.norm(m)), 1e-12)
    return labels


def _is_word_piece(piece: str) -> bool:
    """False for a link, an address or a piece of code: it has ``/``, ``@``, ``_`` or a dot between letters."""
    if "/" in piece or "@" in piece or "_" in piece:
        return False
    inner = piece.strip(".,;:!?()[]{}\"'“”‘’")
    return "." not in inner


def _groups(text: str) -> list[list[str]]:
    """The text's noun groups (:func:`vectorstore.key_phrases.noun_groups`), lower case, links and code left out."""
    pieces = " ".join(p for p in text.split() if _is_word_piece(p))
    return [[w.lower() for w in g] for g in noun_groups(pieces)]


def _terms_of(groups: list[list[str]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for words in groups:
        ok = [len(w) >= 3 and w not in STOPWORDS and w.replace("-", "").isalpha() for w in words]
        for i, w in enumerate(words):
            if not ok[i]:
                continue
            out[w] += 1
            for n in (2, 3):
                if i + n <= len(words) and all(ok[i : i + n]):
                    out[" ".join(words[i : i + n])] += 1
    return out


def terms(text: str) -> Counter[str]:
    """The content words of a text (3+ letters) and the two- and three-word phrases inside its noun groups
    (:func:`vectorstore.key_phrases.noun_groups`: runs of content words cut at function words, verbs and
    punctuation), lower case, counted."""
    return _terms_of(_groups(text))


def head_counts(text: str) -> Counter[str]:
    """How often each word (lower case) of a text ends one of its noun groups: the heads of its noun phrases
    ("networks" of "graph neural networks"), unlike the modifiers before them ("deep", "neural")."""
    return Counter(g[-1] for g in _groups(text))


def generic_terms(docs: Sequence[Counter[str]]) -> set[str]:
    """The corpus's generic terms: in more than :data:`GENERIC_DF` of the documents (and :data:`GENERIC_MIN_DOCS`)."""
    df = Counter(t for d in docs for t in d)
    most = max(GENERIC_DF * len(docs), GENERIC_MIN_DOCS)
    return {t for t, n in df.items() if n > most}


def ctfidf(docs: Sequence[Counter[str]], labels: np.ndarray) -> dict[int, list[tuple[str, float]]]:
    """Each cluster's terms by c-TF-IDF, best first: the term's share of the cluster's words times
    ``log(1 + A / f)``, where ``f`` is how often the corpus uses the term and ``A`` the mean number of words in a
    cluster. Generic terms (:func:`generic_terms`) are left out, and so are terms of only one of the cluster's
    documents (when it has more)."""
    generic = generic_terms(docs)
    overall: Counter[str] = Counter()
    for d in docs:
        overall.update(d)
    clusters = sorted(set(labels.tolist()))
    mean_words = sum(overall.values()) / max(len(clusters), 1)
    out: dict[int, list[tuple[str, float]]] = {}
    for j in clusters:
        idx = np.flatnonzero(labels == j).tolist()
        tf: Counter[str] = Counter()
        df: Counter[str] = Counter()
        for i in idx:
            tf.update(docs[i])
            df.update(docs[i].keys())
        size = max(sum(tf.values()), 1)
        keep = [t for t in tf if t not in generic and (df[t] >= 2 or len(idx) == 1)]
        if not keep:
            keep = [t for t in tf if t not in generic]
        scored = [(t, (tf[t] / size) * math.log(1 + mean_words / overall[t])) for t in keep]
        out[j] = sorted(scored, key=lambda s: (-s[1], s[0]))
    return out


def _inside(term: str, phrase: str) -> bool:
    """Whether ``term`` is a shorter part of ``phrase``, word for word."""
    return len(phrase) > len(term) and f" {term} " in f" {phrase} "


def _name(ranked: list[tuple[str, float]], ends_on_a_head: Callable[[str], bool], words: int) -> str:
    """One cluster's name from its ranked c-TF-IDF terms: one or two terms, two to ``words`` words in all."""
    phrases = [(t, score) for t, score in ranked if " " in t and ends_on_a_head(t)]
    scores = dict(ranked)
    named: dict[str, float] = {}
    for t, score in ranked:
        # a word or phrase that mostly comes in a longer phrase is named by it ("neural networks", "amino acid
        # sequences"), at its own score; a modifier, by its best phrase that ends on a head ("protein binding",
        # not "protein"), at the geometric mean of the two scores
        head = ends_on_a_head(t)
        share = PHRASE_SHARE if head else MODIFIER_SHARE
        shown = t
        for _ in range(2):
            shown = next((ph for ph, sp in phrases if sp >= share * score and _inside(shown, ph)), shown)
        if ends_on_a_head(shown):  # (a modifier's phrase: between the two, "causal discovery" for "causal")
            value = score if head else math.sqrt(score * scores[shown])
            named[shown] = max(named.get(shown, 0.0), value)

    def weight(term: str) -> tuple[float, float, str]:  # (ties: the phrase of the cluster's likelier words)
        return (-named[term], -sum(scores.get(w, 0.0) for w in term.split()), term)

    chosen: list[str] = []
    used: list[str] = []
    for t in sorted(named, key=weight):
        parts = t.split()
        if any(same_term(a, b) for a in parts for b in used):  # "graphs" after "graph", "private" after "privacy"
            continue
        if len(used) + len(parts) > words:
            continue
        chosen.append(t)
        used += parts
        if len(used) >= 2:
            break
    return " · ".join(chosen)


def topic_names(papers: Sequence[Paper], labels: np.ndarray, words: int = 3) -> dict[int, str]:
    """Each cluster named by its best c-TF-IDF terms: two to ``words`` content words in all, as one or two terms
    that share no word, e.g. "information bottleneck · graphs". A term names a topic only if it ends on a word the
    corpus uses as a head at least :data:`HEAD_SHARE` of the time ("networks", not "deep" or "neural"), and a word
    is replaced by a phrase of it that scores nearly as high ("reinforcement learning")."""
    groups = [_groups(f"{p.title if not p.title_derived else ''}. {p.abstract}") for p in papers]
    docs = [_terms_of(g) for g in groups]
    heads = Counter(g[-1] for gs in groups for g in gs)
    said: Counter[str] = Counter()
    for d in docs:
        said.update({t: n for t, n in d.items() if " " not in t})

    def ends_on_a_head(term: str) -> bool:
        last = term.split()[-1]
        if " " in term:
            return is_head(last) and heads[last] >= HEAD_SHARE * said[last]
        alone = is_head(last) and heads[last] >= ALONE_SHARE * said[last]
        return alone and zipf_frequency(last, "en") < COMMON_ZIPF

    return {j: _name(ranked, ends_on_a_head, words) or f"topic {j + 1}" for j, ranked in ctfidf(docs, labels).items()}


def topic_count(n: int) -> int:
    return max(2, min(MOST_TOPICS, round(math.sqrt(n / 2))))


def build_map(papers: list[Paper], vectors: np.ndarray, xy: np.ndarray | None = None) -> list[MapPoint]:
    """Every paper as a point with its topic; ``xy`` is the projection (computed here when not given)."""
    if not papers:
        return []
    if xy is None:
        xy = project(vectors)
    labels = kmeans(vectors, min(topic_count(len(papers)), len(papers)))
    names = topic_names(papers, labels)
    return [
        MapPoint(p.paper_id, p.title, round(float(xy[i, 0]), 4), round(float(xy[i, 1]), 4), names[int(labels[i])])
        for i, p in enumerate(papers)
    ]
