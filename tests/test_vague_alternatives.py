"""A vague alternative is no alternative: "Which papers use X or something similar?" asks for X. The words after
"or" had been an alternative of X ("similar"), so every paper stating "similar" met the facet (on the conference dev
pool, 264 papers for pruning's 49: F1 0.82 -> 0.13 over the 29 topics). Now an alternative of a request that is not
topical, read in place of the first, and no word of which can head a noun phrase, is dropped when another
alternative is topical (``rag.read.resolve._topical_alternatives``); two topics offered as alternatives both stay,
and so does a noun the user offered, however common ("the safety or alignment of language models":
``tests/test_query.py``).
"""

from __future__ import annotations

import itertools

import pytest

from askpapers.rag.read.query import plan
from tests.test_frames import FILLER, OTHER, TOPICS
from tests.test_query import docs_lexicon

# papers stating the vague words, as abstracts do ("similar gains", "related work", "comparable accuracy")
VAGUE_PAPERS = [
    "We observe similar gains on text and comparable accuracy on images.",
    "Similar trends hold for larger models, as related work suggests.",
    "Our method is similar to boosting and comparable in cost.",
    "The results are similar across seeds; related methods behave alike.",
]
LEX = docs_lexicon([*(s for ss in TOPICS.values() for s in ss), *OTHER, *FILLER, *VAGUE_PAPERS])
TAILS = ["or something similar", "or similar methods", "or something comparable", "or anything similar to it",
         ", or related ones"]  # fmt: skip
# requests (a bare topic, unframed, is all content, as a claim is)
FRAMES = ["Which papers use {x} {t}?", "papers on {x} {t}, please", "{x} {t}?"]


def alternatives(question: str) -> list[list[str]]:
    return [[a.lower() for a in f.alternatives] for f in plan(question, LEX).facets if not f.optional]


@pytest.mark.parametrize("topic", ["federated learning", "graph neural networks", "contextual bandits"])
def test_a_vague_alternative_leaves_the_topic_alone(topic: str) -> None:
    assert LEX.phrase_df("similar") >= 3 and LEX.phrase_df("comparable") >= 2  # stated: no unknown word
    plain = alternatives(f"Which papers use {topic}?")
    assert plain == [[topic]]
    for frame, tail in itertools.product(FRAMES, TAILS):
        question = frame.format(x=topic, t=tail).replace(" ,", ",")
        assert alternatives(question) == plain, question


def test_two_topics_offered_as_alternatives_both_stay() -> None:
    got = alternatives("Which papers use federated learning or contextual bandits?")
    assert got == [["federated learning", "contextual bandits"]]
    got = alternatives("Which papers use diffusion models or graph neural networks?")
    assert got == [["diffusion models", "graph neural networks"]]


def test_an_alternative_that_names_nothing_goes_beside_a_noun_however_common(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside an alternative that is topical or a noun, one that is neither goes ("adam or something similar": the
    corpus weighs "adam" as common English); when none names anything, all stay ("explain or interpret")."""
    import askpapers.rag.read.resolve as resolve

    weight = {"similar": 0.1, "kernel": 0.3, "explain": 0.2, "interpret": 0.2, "federated learning": 0.99}
    monkeypatch.setattr(resolve, "topicality", lambda units, lexicon: [weight.get(u, 0.0) for u in units])
    facets = plan("Which papers use kernels or something similar for federated learning?", LEX).facets
    assert [f.alternatives for f in facets] == [("kernel",), ("federated learning",)]
    facets = plan("Which papers explain or interpret federated learning?", LEX).facets
    assert facets[0].alternatives == ("explain", "interpret")
