"""The object of a request runs on through a link "of" or "to": in "research in *the theory of pruning*" both
"theory" and "pruning" are in it. Of two topical units that no paper states together, one is a phrase of the request
(``rag.read.resolve._apart``), and the one in the request's object had been taken for the topic: only its first
word was, so "research in the theory of pruning" gated on "theory" and only ranked "pruning" (the 116 papers on
theory in the conference dev pool), while "Which papers study the theory of pruning?" gated on "pruning" (49). Now
both read alike, whatever the frame: the property only ranks when no paper states it with the topic.
"""

from __future__ import annotations

import itertools

import pytest

from askpapers.rag.read.query import plan
from tests.test_clause_verbs import PRUNING
from tests.test_query import docs_lexicon

PROPERTIES = {
    "theory": ["A theory of generalization for kernel machines.", "We develop a theory of in-context learning."],
    "safety": ["Safety constraints for reinforcement learning agents.", "Safety of autonomous vehicles in traffic."],
    "robustness": ["Robustness of classifiers to corruptions.", "Certified robustness with randomized smoothing."],
}
TOPICS = {
    "pruning": PRUNING,
    "speech recognition": ["Streaming speech recognition with transducers.", "Speech recognition for dialects."],
    "graph coloring": ["Graph coloring with message passing.", "Exact graph coloring by branch and bound."],
}
# request frames whose object starts after a preposition (parse.topic_slot), and ones whose object has no such slot
SLOTTED = ["research in the {p} of {x}", "I'm interested in the {p} of {x}.", "Any papers on the {p} of {x}?",
           "Looking for work about the {p} of {x}, thanks"]  # fmt: skip
PLAIN = "Which papers study the {p} of {x}?"


def gating(question: str, lex: object) -> list[str]:
    return [f.alternatives[0].lower() for f in plan(question, lex).facets if not f.optional]  # type: ignore[arg-type]


@pytest.mark.parametrize(("prop", "topic"), list(itertools.product(PROPERTIES, TOPICS)))
def test_a_property_of_the_topic_in_the_request_object_reads_as_in_a_plain_request(prop: str, topic: str) -> None:
    lex = docs_lexicon([d for docs in [*PROPERTIES.values(), *TOPICS.values()] for d in docs])
    assert lex.both_df(prop, topic) == 0 < min(lex.phrase_df(prop), lex.phrase_df(topic))
    plain = gating(PLAIN.format(p=prop, x=topic), lex)
    assert plain == [topic]
    for frame in SLOTTED:
        assert gating(frame.format(p=prop, x=topic), lex) == plain, frame


WEAK = {"adam": 0.13, "evidence": 0.27, "advance": 0.2}  # as the shipped model weighs them in the conference dev pool


@pytest.mark.parametrize(
    "question",
    [
        "- papers about adam\n- with evidence",
        "Papers about adam, with evidence please",
        "With evidence: papers on adam",
    ],
)
def test_of_units_that_are_not_topical_the_request_object_gates(monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    # "adam" weighs as common English: of it and another word that is no topic either, the one the request is about
    # gates ("- papers about adam / - with evidence" had cited 111 papers for "evidence", 0 of adam's 14)
    from askpapers.rag.read import resolve

    monkeypatch.setattr(resolve, "topicality", lambda units, lexicon: [WEAK.get(u.lower(), 0.01) for u in units])
    docs = [*(d for ds in PROPERTIES.values() for d in ds), *(d for ds in TOPICS.values() for d in ds)]
    lex = docs_lexicon([*docs, "Adam with warm restarts, and evidence that it converges.", "Adam for sparse data."])
    assert gating(question, lex) == ["adam"], plan(question, lex).facets
