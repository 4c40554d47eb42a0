"""A facet's words met apart in one sentence are met by words of their own family only
(:func:`askpapers.vectorstore.terms.same_term`), as a stated phrase is: a shared stem is not enough. "generally"
and "general-purpose" share the stem of "generalization", "continuous" and "continuation" that of "continual", and
state none of them; the conference dev question on domain generalization had cited such papers (P 0.40) and the one
on continual learning four more (P 0.62). The family holds a verb's "-ize" forms beside its stem ("generalize",
"generalization"), its agent noun ("simulator", "manipulator") and its "-ative" adjective ("collaborative")."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.vectorstore.terms import same_term
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

PAPERS = {
    "dg-a": ("Cross-gradient training", "We learn a classifier from multi-domain data that generalizes to new domains"),
    "dg-b": ("Benchmarks for robustness", "Domain generalization benchmarks test models on unseen distributions."),
    "dg-n1": ("Word embeddings", "General-purpose embeddings are sub-optimal in domain-specific tasks."),
    "dg-n2": ("Graph alignment", "Few works align features across domains, generally neglecting structure."),
    "cl-a": ("Lifelong agents", "Our agents continually learn new tasks without forgetting old ones."),
    "cl-b": ("Replay for continual learning", "Continual learning with generative replay of past tasks."),
    "cl-n1": ("Adaptive step sizes", "We propose a continuous adaptation of the learning rate during training."),
    "cl-n2": ("Curricula", "Inspired by continuation methods, we start learning from an easier objective."),
    "mp-a": ("Mobile manipulators", "A language model plans long-horizon tasks for a robot manipulator."),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("families"), with_filler(PAPERS, FILLER), embedder)


@pytest.mark.parametrize(
    ("a", "b"),
    [("generalization", "generalizes"), ("generalization", "generalise"), ("regularization", "regularized"),
     ("manipulation", "manipulator"), ("simulation", "simulators"), ("collaborative", "collaborate")],
)  # fmt: skip
def test_one_family(a: str, b: str) -> None:
    assert same_term(a, b) and same_term(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [("generalization", "general"), ("generalization", "generally"), ("optimization", "optimal"),
     ("normalization", "normal"), ("continual", "continuous"), ("continual", "continuation")],
)  # fmt: skip
def test_a_shared_stem_is_not_a_family(a: str, b: str) -> None:
    assert not same_term(a, b) and not same_term(b, a)


@pytest.mark.parametrize(
    ("topic", "meet", "miss"),
    [("domain generalization", {"dg-a", "dg-b"}, {"dg-n1", "dg-n2"}),
     ("continual learning", {"cl-a", "cl-b"}, {"cl-n1", "cl-n2"})],
)  # fmt: skip
def test_words_met_apart_are_met_in_their_family(app: Any, topic: str, meet: set[str], miss: set[str]) -> None:
    got = set(app.ask(f"Which papers use or study {topic}?", mode="extractive").paper_ids)
    assert meet <= got and not miss & got, got


def test_an_agent_noun_meets_its_process(app: Any) -> None:
    got = set(app.ask("Which papers use language models for robot manipulation?", mode="extractive").paper_ids)
    assert "mp-a" in got, got
