"""The topicality model on the statistics of a real corpus: which units of a question are its topic.

The counts below are the conference dev pool's (3,620 papers: how many use each word, state each phrase, state
both of two), copied from its store; general-English frequencies come from wordfreq, as in the product. A common
English noun beside a term of the corpus is a topic ("*safety* of language models"); a word of the request beside
one is not ("*worked* on federated learning"), though both are common English and neither is a term.
"""

from __future__ import annotations

import pytest

from askpapers.rag.read.topicality import nominal, shipped_model, topicality, verbal

SIZE = 3620
DF = {
    "anyone": 1, "autonomous": 178, "driving": 118, "fairness": 22, "federated": 23, "improve": 406, "language": 1054,
    "learning": 1796, "models": 1690, "planning": 226, "privacy": 75, "references": 11, "safety": 137,
    "transformers": 47, "worked": 2,
}  # fmt: skip
PHRASES = {
    "anyone": 1, "autonomous driving": 63, "fairness": 22, "federated learning": 16, "improve": 406,
    "language models": 855, "planning": 226, "privacy": 75, "references": 11, "safety": 137, "transformers": 47,
    "worked": 2,
}  # fmt: skip
BOTH = {
    ("safety", "language models"): 46, ("privacy", "federated learning"): 11, ("planning", "autonomous driving"): 18,
    ("fairness", "language models"): 9, ("worked", "federated learning"): 2, ("references", "federated learning"): 0,
    ("improve", "transformers"): 110,
}  # fmt: skip


class PoolCounts:
    """The corpus statistics topicality reads (a part of :class:`rag.read.lexicon.Lexicon`), from the tables above."""

    size = SIZE

    def df(self, word: str) -> int:
        return DF[word]

    def phrase_df(self, phrase: str) -> int:
        return PHRASES[phrase]

    def both_df(self, a: str, b: str) -> int:
        return BOTH.get((a, b), BOTH.get((b, a), 0))


@pytest.fixture(autouse=True)
def _shipped() -> None:
    assert shipped_model() is not None, "the topicality model ships with the package (rag/ranker/topicality.txt)"


@pytest.mark.parametrize(
    ("noun", "term"),
    [("safety", "language models"), ("privacy", "federated learning"), ("planning", "autonomous driving")],
)
def test_a_common_noun_beside_a_term_of_the_corpus_is_a_topic(noun: str, term: str) -> None:
    """The linear model this replaced weighed "safety" beside "language models" 0.07, "privacy" beside "federated
    learning" 0.27 and "planning" beside "autonomous driving" 0.16: the term alone gated, and the answer held every
    paper on language models."""
    weights = topicality([noun, term], PoolCounts())  # type: ignore[arg-type]
    assert min(weights) >= 0.5, weights


def test_a_topic_the_corpus_seldom_states_beside_the_other_is_still_a_topic() -> None:
    """ "fairness in language models": 22 papers of the pool state "fairness", 9 of them with "language models". The
    model trained only on pairs of author keywords that papers carry together weighed "fairness" 0.29 beside it, so
    the answer held every paper on language models; pairs that few papers carry together are now in its training."""
    weights = topicality(["fairness", "language models"], PoolCounts())  # type: ignore[arg-type]
    assert min(weights) >= 0.5, weights


@pytest.mark.parametrize("word", ["worked", "references"])
def test_a_word_of_the_request_beside_a_term_only_ranks(word: str) -> None:
    weights = topicality([word, "federated learning"], PoolCounts())  # type: ignore[arg-type]
    assert weights[0] < 0.5 <= weights[1], weights


def test_a_verb_beside_a_topic_weighs_less_than_the_topic() -> None:
    """ "improve" is in 406 papers, "transformers" in 47, and both are common English: only the word class tells the
    verb of the request from the topic."""
    improve, transformers = topicality(["improve", "transformers"], PoolCounts())  # type: ignore[arg-type]
    assert improve < 0.5 and improve < transformers


@pytest.mark.parametrize(
    ("word", "value"),
    [("safety", 1.0), ("transformers", 1.0), ("references", 1.0), ("interpretability", 1.0), ("watersic", 1.0),
     ("unlearning", 0.5), ("improve", 0.0), ("worked", 0.0), ("recent", 0.0)],
)  # fmt: skip
def test_whether_a_word_can_head_a_noun_phrase(word: str, value: float) -> None:
    """A noun, or a word the dictionary does not know (jargon, names): 1; a verb's "-ing" form: 0.5; only a verb,
    adjective or adverb: 0."""
    assert nominal(word) == value


@pytest.mark.parametrize(
    ("word", "value"),
    [("worked", True), ("improve", True), ("lately", True), ("sudden", False), ("recent", False), ("safety", False),
     ("exhibit", False), ("watersic", False)],
)  # fmt: skip
def test_whether_a_word_is_only_a_verb_or_an_adverb(word: str, value: bool) -> None:
    """An adjective is no such word: it modifies the noun of a term ("sudden death", "ventricular arrhythmias")."""
    assert verbal(word) is value
