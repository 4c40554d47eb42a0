"""A noun that a preposition joins to the topic names a relation to it, not a second topic: "the theory *behind* X",
"the key ideas *behind* X" ask for X's papers, as "the applications *of* X" does. Prepositions are a closed class of
English (:data:`askpapers.rag.read.cues.LINKS`); "behind" had been read as a word of a topic ("behind graph neural
networks") and, gating, emptied the answer. On the hand-made corpus of ``tests/test_frames.py``."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.test_frames import TOPICS, corpus_app_in

SHELLS = ["theory", "key ideas", "math", "intuition", "main principles", "mechanisms"]
ASKS = ["What is the {s} behind {x}?", "Which papers deal with the {s} behind {x}?", "Explain the {s} behind {x}"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return corpus_app_in(tmp_path_factory.mktemp("relations"), embedder)


@pytest.mark.parametrize("shell,ask", list(itertools.product(SHELLS, ASKS)))
def test_the_preposition_is_no_word_of_a_facet(app: Any, shell: str, ask: str) -> None:
    for topic in TOPICS:
        plan = app.read(ask.format(s=shell, x=topic))
        words = {w for f in plan.facets for a in f.alternatives for w in a.lower().split()}
        assert "behind" not in words, (ask, topic, plan.facets)
        gating = [f for f in plan.facets if not f.optional]
        assert any(topic.removeprefix("the ") in f.alternatives for f in gating), (ask, topic, plan.facets)


@pytest.mark.parametrize("ask", ["What is the theory behind {x}?", "Which papers deal with the key ideas behind {x}?"])
def test_the_relation_finds_the_topics_papers(app: Any, ask: str) -> None:
    for t, topic in enumerate(TOPICS):
        answer = app.ask(ask.format(x=topic), mode="extractive")
        assert set(answer.paper_ids) == {f"t{t}-{i}" for i in range(5)}, (topic, answer.text[:300])
