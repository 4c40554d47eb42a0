"""Words that name what is asked for, not what it is about: the noun right after the question's "which" or "what"
("Which *contributions* concern X?", "What *entries* discuss X?") and a word right before a request noun ("the *key*
papers on X", "*theory* papers on X"). They are weighed as the verb of a request is, by how spread their papers are
over every topic (:func:`askpapers.rag.read.resolve._spread`), so they rank papers and never gate; a word there whose
papers cluster names a topic ("*pruning* papers"). On the conference dev topics, "Which contributions concern X?"
had cited 1 paper for differential privacy (F1 0.15 against 0.96) and "X: what are the key papers?" 3 for pruning
(F1 0.0 against 1.0). And chat shorthand: "w/" is "with" ("Gimme papers w/ X" had read "w" as an alternative of X).
"""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.read.cues import tokens
from askpapers.rag.read.query import plan
from askpapers.rag.read.topicality import TOPICAL
from tests.conftest import memory_app
from tests.test_clause_verbs import PRUNING
from tests.test_cohesion import FIELDS, GNN
from tests.test_query import DOCS, LEX, docs_lexicon

KEY = " Our key contributions are twofold."


def papers() -> dict[str, tuple[str, str]]:
    """Papers on many fields, each naming its key contributions ("key" and "contributions" are in papers on
    anything), papers on graph neural networks and papers on pruning."""
    # (in 22 papers: enough to measure how spread they are, fewer than a quarter of the papers, resolve.GENERIC_SHARE)
    out = {f"field-{i}": (field.capitalize(), f"We apply {method} to {field}." + KEY * (i < 22))
           for i, (field, method) in enumerate(FIELDS)}  # fmt: skip
    out |= {f"fill-{i}": (f"Note {i}", f"We measure {method} in {field} once more.") for i, (field, method) in
            enumerate(FIELDS[:30])}  # fmt: skip
    out |= {f"gnn-{i}": (f"Graphs {i}", text) for i, text in enumerate(GNN)}
    out["gnn-key"] = ("Key graphs", "Our key contributions: graph neural networks that scale to a billion edges.")
    out |= {f"prune-{i}": (f"Pruning {i}", PRUNING[i % 5] + f" Variant {i}.") for i in range(15)}
    out["prune-gnn"] = ("Sparse graphs", "Pruning graph neural networks by removing edges the task never uses.")
    return out


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("request-nouns"), papers(), embedder)


@pytest.mark.parametrize(
    "question",
    [
        "Which contributions concern graph neural networks?",
        "graph neural networks: what are the key papers?",
        "What are the key papers on graph neural networks?",
        "Which contributions discuss graph neural networks, please?",
        # (after a request noun: "directions" had gated, weighed 0.94; 1 paper cited for quantization, F1 0.09)
        "Which research contributions involve graph neural networks?",
    ],
)
def test_a_word_naming_what_is_asked_for_only_ranks(app: Any, every_unit_topical: None, question: str) -> None:
    facets = app.read(question).facets
    read = [(f.alternatives[0], f.optional) for f in facets]
    assert [a for a, optional in read if not optional] == ["graph neural networks"], read
    # (weighed as a word of the request: however the rest of the question reads, it cannot gate)
    assert all(f.weight < TOPICAL for f in facets if f.alternatives[0] != "graph neural networks"), facets
    cited = {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}
    assert {*(f"gnn-{i}" for i in range(len(GNN))), "gnn-key"} <= cited, cited


def test_a_word_there_whose_papers_cluster_is_a_topic(app: Any, every_unit_topical: None) -> None:
    read = [(f.alternatives[0], f.optional) for f in app.read("Any pruning papers on graph neural networks?").facets]
    assert read == [("pruning", False), ("graph neural networks", False)], read


def test_chat_shorthand_for_with_and_without() -> None:
    assert [t.low for t in tokens("papers w/ pruning, w/o retraining")] == [
        "papers", "with", "pruning", ",", "without", "retraining"
    ]  # fmt: skip


@pytest.mark.parametrize("how", ["at length", "in detail", "in depth", "in particular"])
def test_a_phrase_saying_how_is_no_facet(how: str) -> None:
    """ "Which entries discuss hallucination at length?" asks for hallucination: "length" had gated (weighed 0.94;
    2 papers cited, F1 0.0 against 0.85). A topic word after the phrase keeps it ("depth estimation")."""
    p = plan(f"Which papers discuss graph neural networks {how}?", LEX)
    assert [f.alternatives[0] for f in p.facets] == ["graph neural networks"], p.facets
    depth = docs_lexicon([*DOCS, *(f"Depth estimation from one image, case {i}." for i in range(3))])
    assert "depth estimation" in [
        f.alternatives[0] for f in plan("Which papers study GANs in depth estimation?", depth).facets
    ]


def test_a_phrase_of_request_words_cut_from_the_topic_is_the_request() -> None:
    """ "what pruning methods exist?": the corpus states "pruning methods" seldom and "methods exist" often, so the
    unit was cut into "pruning" and "methods exist", which then gated as the more topical (0.85) and left pruning to
    rank. A phrase made only of words of the request is the request's."""
    lex = docs_lexicon([*DOCS, *(f"Many methods exist for task {i}." for i in range(6)),
                        *(f"Pruning of networks, case {i}." for i in range(4)),
                        *(f"Pruning methods for networks, case {i}." for i in range(3))])  # fmt: skip
    for q in ["what pruning methods exist?", "So, what pruning methods exist?"]:
        assert [f.alternatives[0].lower() for f in plan(q, lex).facets if not f.optional] == ["pruning"], q
