"""A phrase typed as a whole that the corpus never states is cut into its parts; a noun before a topical part that
is rarer in the corpus than that part narrows it to a topic, and holds, however the topicality model weighs it.

In a corpus of machine learning, "protein" and "weather" are rare but common in English, so the topicality model
(which compares a word's share of the papers with its frequency in English) weighs them as it weighs words of a
request: on the conference dev pool "protein" of "protein design" 0.05 and "weather" of "weather forecasting" 0.12.
They had then only ranked, and "which papers study protein design?" listed the 329 papers that say "design". The
verb of the request's clause ("Which papers *critique* pruning?") is no such noun, whatever its counts."""

from __future__ import annotations

import itertools

import pytest

from askpapers.rag.read import resolve
from askpapers.rag.read.query import plan
from askpapers.rag.types import Facet
from tests.test_query import docs_lexicon

# the topicality the model gave these units on the conference dev pool (the counts are this corpus's own)
WEIGHTS = {"protein": 0.05, "weather": 0.12, "critique": 0.12, "design": 0.82, "forecasting": 0.81,
           "pruning": 0.98, "folding": 0.93}  # fmt: skip
DOCS = [
    *(f"We study the {w} of neural networks, case {i}." for i, w in
      itertools.product(range(6), ["design", "architecture design", "forecasting", "pruning", "folding"])),
    *(f"Transformers learn from text, case {i}." for i in range(30)),
    "A protein model with learned energy.",
    "Protein structures and their energy.",
    "Weather data for rainfall with neural networks.",
    "Weather stations and graphs.",
    "A critique of evaluation methods and their benchmarks.",
    "Our critique of evaluation.",
]  # fmt: skip


@pytest.fixture
def weighed(monkeypatch: pytest.MonkeyPatch) -> None:
    def weights(facets: list[Facet], lexicon: object, asking: object = frozenset()) -> list[float]:
        return [WEIGHTS.get(f.alternatives[0].lower(), 1.0) for f in facets]

    monkeypatch.setattr(resolve, "_facet_weights", weights)


@pytest.mark.parametrize(
    ("question", "required"),
    [
        ("Which papers study protein design?", ["protein", "design"]),
        ("protein design papers please", ["protein", "design"]),
        ("Any work on weather forecasting?", ["weather", "forecasting"]),
        ("Which papers use or study protein folding?", ["protein", "folding"]),
    ],
)
def test_a_rare_noun_before_a_topical_part_holds(weighed: None, question: str, required: list[str]) -> None:
    lex = docs_lexicon(DOCS)
    assert lex.phrase_df(" ".join(required)) == 0  # (the whole is never stated: the phrase is cut)
    assert 0 < lex.phrase_df(required[0]) < lex.phrase_df(required[1])
    p = plan(question, lex)
    got = sorted(f.alternatives[0].lower() for f in p.facets if not f.optional)
    assert got == sorted(required), [(f.alternatives, f.optional, f.weight) for f in p.facets]


def test_the_verb_of_the_request_only_ranks(weighed: None) -> None:
    lex = docs_lexicon(DOCS)
    assert 0 < lex.phrase_df("critique") < lex.phrase_df("pruning")
    p = plan("Which papers critique pruning?", lex)
    assert [f.alternatives[0] for f in p.facets if not f.optional] == ["pruning"]
    assert [f.alternatives[0] for f in p.facets if f.optional] == ["critique"]
