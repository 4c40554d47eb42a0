"""The corpus as a table and as a 2-D map (PCA of paper embeddings, k-means topics) for the UI."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from vectorstore.text import STOPWORDS
from vectorstore.types import Paper

_WORD = re.compile(r"[a-z][a-z-]{3,}")
_GENERIC = STOPWORDS | {
    "model", "models", "method", "methods", "propose", "proposed", "results", "show", "learning", "based",
    "approach", "data", "performance", "existing", "novel", "problem", "framework", "paper", "demonstrate",
    "experiments", "while", "which", "their", "these", "such", "across", "first", "into", "well", "however",
    "tasks", "task", "training", "network", "networks", "neural", "deep", "large", "state-of-the-art", "often",
    "analysis", "derive", "introduces", "introduce", "outperforms", "achieves", "achieve", "using", "provide",
    "provides", "study", "studies", "shows", "enables", "leverages", "address", "addresses", "under",
    "significantly", "both", "remains", "without", "through", "standard", "recent", "strong", "work",
    "empirical", "theoretical", "benchmarks", "baselines", "efficient", "effective", "improves", "further", "sparse",
}  # fmt: skip


@dataclass
class MapPoint:
    paper_id: str
    title: str
    x: float
    y: float
    topic: str


def project(vectors: np.ndarray) -> np.ndarray:
    """2-D coordinates: the first two principal components."""
    if len(vectors) < 2:
        return np.zeros((len(vectors), 2), dtype=np.float32)
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    coords: np.ndarray = centred @ vt[:2].T
    return coords


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


def topic_names(papers: list[Paper], labels: np.ndarray) -> dict[int, str]:
    """Name each cluster by the two words most over-represented in its abstracts."""
    docs = [set(_WORD.findall(p.abstract.lower())) - _GENERIC for p in papers]
    overall = Counter(w for d in docs for w in d)
    names: dict[int, str] = {}
    for j in sorted(set(labels.tolist())):
        idx = np.flatnonzero(labels == j)
        local = Counter(w for i in idx for w in docs[i])
        if len(idx) > 2:
            local = Counter({w: c for w, c in local.items() if c >= 2}) or local
        scored = sorted(local, key=lambda w: (-(local[w] / len(idx)) * np.log(1 + len(papers) / overall[w]), w))
        names[j] = f"{j + 1}: " + " · ".join(scored[:2]) if scored else f"topic {j + 1}"
    return names


def build_map(papers: list[Paper], vectors: np.ndarray) -> list[MapPoint]:
    if not papers:
        return []
    k = max(2, min(10, round((len(papers) / 2) ** 0.5)))
    labels = kmeans(vectors, min(k, len(papers)))
    names = topic_names(papers, labels)
    xy = project(vectors)
    return [
        MapPoint(p.paper_id, p.title, round(float(xy[i, 0]), 4), round(float(xy[i, 1]), 4), names[int(labels[i])])
        for i, p in enumerate(papers)
    ]
