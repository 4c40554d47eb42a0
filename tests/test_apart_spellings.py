"""Two units typed apart count as stated together when any of their spellings are: "reinforcement learning
techniques", which no paper on robotic manipulation states, is also "reinforcement learning" (its generic head
dropped), which 69 papers of the conference pool on robotic manipulation state. Read as never together, one of the
two had been taken for a phrase of the request and only ranked: "what's out there on reinforcement learning
techniques in robotic manipulation" cited 193 papers (F1 0.22; now 125 papers, 0.79, against 0.80 for the plain
question)."""

from __future__ import annotations

import pytest

from askpapers.rag.read.query import plan
from tests.test_query import docs_lexicon

DOCS = [
    "Reinforcement learning for robotic manipulation of deformable objects.",
    "We train robotic manipulation policies with reinforcement learning in simulation.",
    "Robotic manipulation from demonstrations and reinforcement learning.",
    "Robotic manipulation with tactile sensing.",
    "Reinforcement learning techniques for games and control.",
    "A survey of reinforcement learning techniques.",
    "Reinforcement learning techniques scale to large action spaces.",
    "Image generation with diffusion models.",
    "Graph neural networks for molecules.",
    "Language models for code.",
]


@pytest.mark.parametrize(
    "question",
    [
        "what's out there on reinforcement learning techniques in robotic manipulation",
        "Which papers use reinforcement learning techniques for robotic manipulation?",
        "robotic manipulation with reinforcement learning techniques, please",
    ],
)
def test_units_stated_together_in_another_spelling_both_hold(question: str) -> None:
    lex = docs_lexicon(DOCS)
    assert lex.both_df("reinforcement learning techniques", "robotic manipulation") == 0
    assert lex.both_df("reinforcement learning", "robotic manipulation") == 3
    p = plan(question, lex)
    assert all(not f.optional for f in p.facets), [(f.alternatives, f.optional) for f in p.facets]
    assert len(p.facets) == 2
