"""A count whose object is left out ("Which papers use X, and how many are there?") counts the papers named before
it, and an overview asked for as takeaways is one. On 40 held-out topics (``bench.keyword_topics --seed 11``) in 14
count and overview frames written before looking at the answers, "Which papers use X, and how many are there?" had
cited 420-514 papers for 12 topics: "many" was read as an alternative of X and replaced it. "Key takeaways from the
adam papers?" had gated on "key takeaways" (1 paper cited of adam's 14)."""

from __future__ import annotations

import pytest

from askpapers.rag.read.query import plan
from tests.test_query import LEX


def _read(question: str) -> tuple[str, list[str]]:
    p = plan(question, LEX)
    return p.intent, [f.alternatives[0].lower() for f in p.facets if not f.optional]


@pytest.mark.parametrize(
    "question",
    [
        "Which papers use reinforcement learning, and how many are there?",
        "Which papers use reinforcement learning and how many are there?",
        "Any reinforcement learning papers? How many?",
        "Which papers use reinforcement learning? How many in total?",
    ],
)
def test_a_count_with_its_object_left_out_counts_the_papers_named(every_unit_topical: None, question: str) -> None:
    assert _read(question) == ("count", ["reinforcement learning"])


def test_a_count_of_something_else_is_no_count_of_papers() -> None:
    # (a fact a paper states: no request noun names papers)
    assert _read("How many episodes does reinforcement learning take on robots?")[0] != "count"


@pytest.mark.parametrize(
    "question", ["Key takeaways from the reinforcement learning papers?", "Give me a rundown of reinforcement learning"]
)
def test_takeaways_ask_for_an_overview(every_unit_topical: None, question: str) -> None:
    assert _read(question) == ("overview", ["reinforcement learning"])
