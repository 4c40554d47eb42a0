"""Which candidates belong to an answer set: a learned, calibrated decision over the ranked pool.

Every list, count and overview draws its candidates from one place (:meth:`rag.decide.match.FacetMatcher.candidates`):
the papers that state a spelling of every required facet (so the count is complete), the near misses, and the
top of the fused, reranked search for the question (the same search :func:`rag.api.search` runs). For each
candidate the matcher measures, per facet, how the paper meets it (a stated phrase, all its words in one
sentence, its words anywhere, a shorter form, embedding similarity). :data:`FEATURES` turn that evidence, each
facet's topicality weight and the reranker's rank into one row, and a small LightGBM model
(``rag/ranker/membership.txt``, trained on the dev questions and generated wordings of them by
``python -m bench.membership train``, evaluated with numpy by :class:`rag.retrieve.forest.Forest`) gives the probability
that the paper answers the question. A paper is in the set at :data:`CUT` or above (chosen by cross-validation
for F1, written beside the model). A facet that is not topical, or a paper that misses one facet but is close to
it, lowers a probability; no single word empties an answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from askpapers.rag.retrieve.forest import Forest

FEATURES = [
    # the question
    "n_facets", "log_strict", "min_weight",
    # per-facet evidence, aggregated over the required facets
    "met_share", "weighted_met", "unmet_weight", "phrase_share", "loose_share", "min_cover", "mean_cover",
    "min_sim", "mean_sim", "unmet_sim", "unmet_cover", "optional_met", "strict",
    # the ranked pool
    "log_rank", "score_gap", "q_sim",
]  # fmt: skip
_AT = {f: i for i, f in enumerate(FEATURES)}
NEAR_SIMILARITY = 0.45  # a facet a paper does not state is nearly met at this cosine (the matcher's dense_with_terms)
RANKED = 100  # candidates taken from the top of the reranked search, beside those that state every facet
CUT = 0.5  # default probability cut (the shipped model carries its own, chosen by cross-validation)


@dataclass
class FacetEvidence:
    """How one paper meets one facet: ``met`` by the matcher's rule (stated phrase, or close with its words), how
    (``phrase``, ``loose``: its words only somewhere), the best one-sentence cover of its words and the embedding
    similarity; ``evidence`` is the verbatim sentence that shows it (empty when not met)."""

    met: bool
    phrase: bool
    loose: bool
    cover: float
    similarity: float
    weight: float
    evidence: str = ""


@dataclass
class Ranked:
    """A candidate's place in the reranked search (absent: rank 0)."""

    rank: int = 0
    score_gap: float = 0.0
    similarity: float = 0.0


@dataclass
class CandidateEvidence:
    paper_id: str
    facets: list[FacetEvidence]
    optional: list[FacetEvidence]
    ranked: Ranked
    score: float  # the matcher's own score (for ties)
    sentences: list[str] = field(default_factory=list)
    pooled: bool = True  # found by the facets' own searches (every paper stating them), not only by the ranking


def features(c: CandidateEvidence, n_strict: int) -> list[float]:
    """The row of :data:`FEATURES` for one candidate (``n_strict``: candidates meeting every facet)."""
    fs = c.facets or [FacetEvidence(False, False, False, 0.0, 0.0, 1.0)]
    weights = [f.weight for f in fs]
    met = [f for f in fs if f.met]
    unmet = [f for f in fs if not f.met]
    total_w = sum(weights) or 1.0
    r = c.ranked
    return [
        float(len(fs)), math.log1p(n_strict), min(weights),
        len(met) / len(fs), sum(f.weight for f in met) / total_w, max((f.weight for f in unmet), default=0.0),
        sum(f.phrase for f in fs) / len(fs), sum(f.loose for f in fs) / len(fs),
        min(f.cover for f in fs), sum(f.cover for f in fs) / len(fs),
        min(f.similarity for f in fs), sum(f.similarity for f in fs) / len(fs),
        max((f.similarity for f in unmet), default=1.0), max((f.cover for f in unmet), default=1.0),
        (sum(f.met for f in c.optional) / len(c.optional)) if c.optional else 0.0, float(not unmet),
        math.log2(1 + (r.rank or 4 * RANKED)), r.score_gap if r.rank else 10.0, r.similarity,
    ]  # fmt: skip


def eligible(row: Sequence[float]) -> bool:
    """Whether a candidate may be in the set at all: it meets every facet, or, in a question of several facets,
    all but one, and that one nearly (a close embedding, or all its words in one sentence). A question of one
    facet is answered by the papers that meet it; the model then only orders and prunes them."""
    n = row[_AT["n_facets"]]
    unmet = round(n - row[_AT["met_share"]] * n)
    if unmet == 0:
        return True
    return n >= 2 and unmet == 1 and (row[_AT["unmet_sim"]] >= NEAR_SIMILARITY or row[_AT["unmet_cover"]] >= 1.0)


def decided(probability: float, row: Sequence[float]) -> float:
    """The probability a candidate is in the set: 1 for a paper that meets every facet ("which papers use X"
    means all of them, however many), 0 for one that is not :func:`eligible`, else the model's: the model decides
    the papers that miss one facet of several but come close to it."""
    if row[_AT["strict"]] >= 1.0:
        return 1.0
    return probability if eligible(row) else 0.0


def model_path() -> Path:
    return Path(str(resources.files("askpapers.rag") / "ranker" / "membership.txt"))


@dataclass
class Membership:
    """The shipped model and its cut."""

    forest: Forest
    cut: float

    @classmethod
    def load(cls, path: Path | None = None) -> Membership:
        path = path or model_path()
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if meta.get("features") != FEATURES:
            raise ValueError("the membership model was trained on other features; run python -m bench.membership")
        return cls(Forest.load(path), float(meta.get("cut", CUT)))

    def probabilities(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        if not rows:
            return np.zeros(0)
        raw = self.forest.predict(np.array(rows, dtype=np.float64))
        out: np.ndarray = 1.0 / (1.0 + np.exp(-raw))
        return out


@lru_cache(maxsize=1)
def shipped() -> Membership | None:
    """The shipped model, or None when it is not there (the matcher then keeps papers meeting every facet)."""
    return Membership.load() if model_path().exists() else None
