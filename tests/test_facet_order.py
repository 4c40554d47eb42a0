"""Two topics the corpus never states in one paper, asked together: one of them only ranks (the answer is then the
papers on the other, and says so; :func:`askpapers.rag.read.resolve._apart`). When they are about as topical, which
one must not depend on the order they are typed in: the one whose papers are spread over other topics is taken for
the phrase of the request ("prior art" is; "contrastive learning" is more so than "speech recognition"), and only when
that cannot be told, the one typed first ("prior art on X": a request names its topic last)."""

from __future__ import annotations

import itertools

import pytest

from askpapers.rag.read.resolve import _apart
from askpapers.rag.types import Facet

# papers stating each unit, and how close to one another they are (the corpus statistics _apart reads)
PAPERS = {"contrastive learning": 31, "speech recognition": 22, "prior art": 9, "pruning": 44, "prior work": 122,
          "interpretability": 61, "world models": 17, "related work": 4, "multimodal learning": 17,
          "vision": 313}  # fmt: skip
COHESION = {"contrastive learning": 0.067, "speech recognition": 0.195, "prior art": 0.059, "pruning": 0.104,
            "prior work": 0.040, "interpretability": 0.041, "world models": 0.223, "related work": None,
            "multimodal learning": None, "vision": 0.158}  # fmt: skip


class Counts:
    """The conference dev pool's figures for these units (measured with the store's lexicon; no two in one paper)."""

    size = 3621

    def both_df(self, a: str, b: str) -> int:
        return PAPERS.get(a, 0) if a == b else 0  # (a phrase typed apart, "multi modal learning": no paper)

    def cohesion(self, phrase: str, least: int | None = None) -> float | None:
        return COHESION[phrase] if PAPERS[phrase] >= (least or 30) else None


SPELLED = {"multi modal learning": "multimodal learning"}  # (as the corpus writes it: rag.read.expand)


def demoted(units: list[str], weights: list[float], slotted: frozenset[int] = frozenset()) -> list[str]:
    facets = [Facet((u,), ((SPELLED.get(u, u),),), weight=w) for u, w in zip(units, weights, strict=True)]
    got = _apart(facets, weights, [True] * len(units), [], Counts(), slotted)  # type: ignore[arg-type]
    return [units[i] for i in sorted(got)]


@pytest.mark.parametrize(
    ("units", "request_phrase"),
    [
        (("contrastive learning", "speech recognition"), "contrastive learning"),
        (("world models", "interpretability"), "interpretability"),
        (("prior art", "pruning"), "prior art"),
        (("prior work", "pruning"), "prior work"),
    ],
)
def test_of_two_topics_about_as_topical_the_spread_one_ranks_in_either_order(
    units: tuple[str, str], request_phrase: str
) -> None:
    for order, weights in itertools.product(itertools.permutations(units), [(1.0, 0.97), (0.97, 1.0), (0.99, 0.99)]):
        assert demoted(list(order), list(weights)) == [request_phrase], (order, weights)


def test_when_the_spread_cannot_be_told_the_first_typed_ranks() -> None:
    # ("related work": too few papers to measure; "prior art" and "interpretability": too close to tell apart)
    assert demoted(["related work", "pruning"], [0.99, 0.98]) == ["related work"]
    assert demoted(["prior art", "interpretability"], [0.98, 0.99]) == ["prior art"]
    assert demoted(["interpretability", "prior art"], [0.99, 0.98]) == ["interpretability"]


def test_a_clearly_less_topical_unit_ranks_whatever_its_spread() -> None:
    assert demoted(["speech recognition", "contrastive learning"], [0.80, 0.99]) == ["speech recognition"]
    assert demoted(["contrastive learning", "speech recognition"], [0.99, 0.80]) == ["speech recognition"]


def test_a_unit_is_counted_as_the_corpus_spells_it_in_either_order() -> None:
    """ "multi modal learning", typed apart, is stated by no paper as typed, but by 17 as "multimodal learning":
    never with "vision", so the less topical of the two only ranks, in either order (it had in one order only)."""
    assert demoted(["multi modal learning", "vision"], [1.0, 0.91]) == ["vision"]
    assert demoted(["vision", "multi modal learning"], [0.91, 1.0]) == ["vision"]
