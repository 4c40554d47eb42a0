"""In a question of several facets, a facet of several words that a paper does not state as a phrase is still met
when one sentence of the paper holds all its words ("large language models *generate code*" meets "code
generation"): the other facets already say what the paper is about. Words spread over an abstract that is not close
to the facet in embedding space are no evidence: most papers on large language models use "code" and "generation"
somewhere ("Our code is public") (:func:`askpapers.rag.decide.evidence.holds_words_together`). However the question
is framed, and in either facet order, the answer is the same. (A paper close to the facet may spread its words:
tests/test_match.py's GAN described over three sentences.)"""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.decide.evidence import holds_words, holds_words_together
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

PAPERS = {
    "cg-a": (
        "Large language models for code generation",
        "We study code generation with large language models on unseen programming tasks.",
    ),
    "cg-b": (
        "Program synthesis from problem statements",
        "Large language models generate code for competitive programming problems. We test them on new contests.",
    ),
    "cg-n1": (
        "Tutoring with large language models",
        "Large language models tutor children in arithmetic. Our code and data are released. Answers come from "
        "generation with a small budget.",
    ),
    "cg-n2": (
        "Medical notes",
        "Large language models summarise patient records for clinicians. Our code and prompts are public. We "
        "discuss the next generation of assistants.",
    ),
    # (generation of other things, so that "generation" alone does not name code generation: no shorter form of it)
    **{
        f"gen-{i}": (f"{w.capitalize()} generation", f"We study {w} generation with {m}.")
        for i, (w, m) in enumerate(
            [
                ("image", "diffusion models"),
                ("music", "transformers"),
                ("dialogue", "memory"),
                ("molecule", "graph models"),
                ("video", "temporal attention"),
            ]
        )
    },
}
QUESTIONS = [
    "Which papers use large language models for code generation?",
    "Which papers study code generation with large language models?",
    "Could you list work on code generation using large language models, please?",
    "I'm looking for papers applying large language models to code generation",
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("loose"), with_filler(PAPERS, FILLER), embedder)


def test_the_words_of_a_facet_are_held_together_in_one_sentence() -> None:
    _, together = PAPERS["cg-b"]
    _, spread = PAPERS["cg-n2"]
    assert holds_words(together, "code generation") and holds_words_together(together, "code generation")
    assert holds_words(spread, "code generation") and not holds_words_together(spread, "code generation")


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_facet_is_met_by_its_words_in_one_sentence_not_spread_over_the_abstract(app: Any, question: str) -> None:
    answer = app.ask(question, mode="extractive")
    got = set(answer.paper_ids)
    assert {"cg-a", "cg-b"} <= got, (question, got)
    assert not {"cg-n1", "cg-n2"} & got, (question, got)
    evidence = {c.paper_id: " ".join(c.evidence if isinstance(c.evidence, list) else [c.evidence])
                for c in answer.citations}  # fmt: skip
    assert "generate code" in evidence["cg-b"]  # (the sentence that holds the facet's words is shown)
