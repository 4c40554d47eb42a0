"""The verb of the clause a question asks with ("Which papers *exploit* X?", "papers that *harness* X") is no part
of its topic unless the corpus says so. It used to start the topic's phrase: "Which papers exploit quantization?"
read as the phrase "exploit quantization", which one paper of the conference dev pool states (F1 0.17 against 0.78
for "Which papers use or study quantization?"), and "Which papers analyze backdoor attacks or defenses?" as
"analyze backdoor attacks or analyze backdoor defenses", which none states ("No paper matches"). Over the 29
conference dev topics, "which papers exploit X" scored a mean F1 of 0.715, "which papers incorporate X" 0.733 and
"which papers harness X?" 0.662, against 0.820.

The verb is then a facet of its own, which the corpus weighs: one whose papers are spread over every topic
("exploit", "harness") only ranks, one whose papers cluster ("prune") is a topic; a verb and object the corpus
states as a phrase ("learn representations") stay one."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.read.lexicon import MIN_TERM_PAPERS
from askpapers.rag.read.query import plan
from askpapers.rag.read.resolve import COHESIVE, VERB_PAPERS
from tests.conftest import memory_app
from tests.test_cohesion import FIELDS, GNN
from tests.test_query import DOCS, docs_lexicon

PRUNING = [
    "We prune the weights of convolutional networks to a tenth of their size.",
    "Pruning attention heads of transformers keeps their accuracy.",
    "Structured pruning removes whole channels and speeds up inference.",
    "We prune large language models in one shot without retraining.",
    "Magnitude pruning and the lottery ticket hypothesis revisited.",
]
ONE = "exploit-gnn"  # the one paper that states "exploit graph neural networks"
# stated by 25 papers: fewer than a phrase needs to be measured (COHESION_PAPERS), enough for a verb (VERB_PAPERS)
ADVANTAGE = " We take advantage of its speed."
APPLICATIONS = " Its applications range from industry to science."
USES = "gnn-uses"  # the one paper on graph neural networks that states "applications"
FAST = "advantage-gnn"  # the one paper on graph neural networks that states "take advantage"


def papers() -> dict[str, tuple[str, str]]:
    """Papers on many fields, each exploiting something ("exploit" is in papers on anything), papers on graph neural
    networks (one of them exploits them), and papers on pruning (one prunes graph neural networks)."""
    out = {f"field-{i}": (field.capitalize(), f"We exploit {method} for {field}." + ADVANTAGE * (i < 24)
                          + APPLICATIONS * (i >= 14)) for i, (field, method) in enumerate(FIELDS)}  # fmt: skip
    # (papers that say none of these words: "applications", in 23 papers, is then in fewer than a quarter of them,
    # which would make it a word too common to narrow anything, resolve.GENERIC_SHARE)
    out |= {f"fill-{i}": (f"Note {i}", f"We measure {method} in {field} once more.")
            for i, (field, method) in enumerate(FIELDS[:30])}  # fmt: skip
    out |= {f"gnn-{i}": (f"Graphs {i}", text) for i, text in enumerate(GNN)}
    out[ONE] = ("Exploiting graphs", "We exploit graph neural networks to route packets in a network.")
    out[USES] = ("Graph uses", "We survey applications of graph neural networks and their variants to chemistry.")
    out[FAST] = ("Fast graphs", "We take advantage of graph neural networks to speed up fluid simulations.")
    out |= {f"prune-{i}": (f"Pruning {i}", PRUNING[i % 5] + f" Variant {i}.") for i in range(24)}
    out["prune-gnn"] = ("Sparse graphs", "We prune graph neural networks by removing edges the task never uses.")
    return out


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("verbs"), papers(), embedder)


@pytest.fixture
def forest_weighs_verbs_as_topics(monkeypatch: pytest.MonkeyPatch) -> None:
    """The topicality forest's weights as the conference dev pool gave them: "exploit" 0.94 (the dictionary also
    knows it as a noun), "prune" 0.99. The tests check the reading and the measure, not the model."""
    from askpapers.rag.read import resolve

    monkeypatch.setattr(resolve, "topicality", lambda units, lexicon: [0.94 if u == "exploit" else 0.99 for u in units])


def test_a_verb_whose_papers_are_spread_only_ranks(app: Any, forest_weighs_verbs_as_topics: None) -> None:
    question = "Which papers exploit graph neural networks?"
    read = [(f.alternatives, f.optional) for f in app.read(question).facets]
    assert read == [(("exploit",), True), (("graph neural networks",), False)], read
    cited = {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}
    assert cited == {ONE, FAST, USES, "prune-gnn", *(f"gnn-{i}" for i in range(len(GNN)))}, cited
    spread = app.parts.lexicon.cohesion("exploit", least=VERB_PAPERS)
    assert spread is not None and spread < COHESIVE, spread


def test_a_verb_whose_papers_cluster_is_a_topic(app: Any, forest_weighs_verbs_as_topics: None) -> None:
    question = "Which papers prune graph neural networks?"
    read = [(f.alternatives, f.optional) for f in app.read(question).facets]
    assert read == [(("prune",), False), (("graph neural networks",), False)], read
    cited = {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}
    assert cited == {"prune-gnn"}, cited
    cohesion = app.parts.lexicon.cohesion("prune", least=VERB_PAPERS)
    assert cohesion is not None and cohesion >= COHESIVE, cohesion


def test_a_verb_and_its_object_spread_over_every_topic_only_rank(app: Any, forest_weighs_verbs_as_topics: None) -> None:
    """ "take advantage" (of X), which the papers on any field state, is the request's phrase: it only ranks, though
    a paper on the topic states it too ("papers that take advantage of X" scored a mean F1 of 0.738 over the
    conference dev topics, against 0.820)."""
    question = "Which papers take advantage of graph neural networks?"
    read = [(f.alternatives, f.optional) for f in app.read(question).facets]
    assert read == [(("take advantage",), True), (("graph neural networks",), False)], read


@pytest.mark.parametrize(
    "question",
    [
        "which of the papers exploit graph neural networks",
        "Which ones exploit graph neural networks?",
        "Are there papers that exploit graph neural networks?",
        "Find me works which exploit graph neural networks.",
    ],
)
def test_the_clause_verb_is_a_facet_of_its_own(app: Any, question: str) -> None:
    """After "which" and a request noun or "ones", or a relative after a request noun, the verb is cut from the
    topic after it, which one paper states with it, and only ranks."""
    assert 0 < app.parts.lexicon.phrase_df("exploit graph neural networks") < MIN_TERM_PAPERS
    read = [(f.alternatives, f.optional) for f in app.read(question).facets]
    assert read == [(("exploit",), True), (("graph neural networks",), False)], read


def test_a_verb_and_object_the_corpus_states_as_a_phrase_stay_one() -> None:
    lex = docs_lexicon([*DOCS, *(f"We learn representations of {w} with contrastive losses." for w in "abc")])
    assert lex.phrase_df("learn representations") >= MIN_TERM_PAPERS
    units = [f.alternatives for f in plan("Which papers learn representations?", lex).facets]
    assert units == [("learn representations",)], units


@pytest.mark.parametrize(
    "question", ["Which papers on reinforcement learning exploit models?", "Has anyone exploited diffusion models?"]
)
def test_a_word_anywhere_else_is_read_as_before(question: str) -> None:
    """Only the verb of the papers' clause is cut: a verb after a topic, or in another clause, is read as it was."""
    from askpapers.rag.read import parse

    lex = docs_lexicon([*DOCS, "We exploit diffusion models for planning."])
    calls: list[str] = []
    original = parse._clause_verb

    def spy(toks: list[Any], i: int) -> bool:
        got = original(toks, i)
        calls.append(toks[i].low) if got else None
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse, "_clause_verb", spy)
        plan(question, lex)
    assert calls == [], calls


@pytest.mark.parametrize(
    "question",
    [
        "Which papers exploit graph neural networks or pruning?",
        "Which works are centered around graph neural networks or pruning?",
    ],
)
def test_a_word_no_paper_states_with_alternatives_is_cut_from_them(app: Any, question: str) -> None:
    """Alternatives after a verb or a preposition that no paper states with them as a phrase: the word is cut from the
    first alternative ("analyze backdoor attacks or defenses" had read as "analyze backdoor attacks" or "analyze
    backdoor defenses", which no paper of the conference pool states: "No paper matches")."""
    facets_ = app.read(question).facets
    held = [f.alternatives for f in facets_ if not f.optional]
    assert held == [("graph neural networks", "pruning")], facets_
    cited = {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}
    assert {"prune-gnn", ONE, "prune-0"} <= cited, cited


def test_a_plural_noun_of_the_topic_whose_papers_are_spread_only_ranks(
    app: Any, forest_weighs_verbs_as_topics: None
) -> None:
    """ "applications of X": a plural noun that a link "of" or "to" joins to the topic names a relation to it when
    its papers are spread over every topic; it only ranks. Over the conference dev topics "What are the
    applications of X?" scored a mean F1 of 0.33, "any alternatives to X?" 0.52, against 0.82."""
    question = "What are the applications of graph neural networks?"
    read = [(f.alternatives, f.optional) for f in app.read(question).facets]
    assert read == [(("applications",), True), (("graph neural networks",), False)], read
    cited = {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}
    assert {USES, ONE, *(f"gnn-{i}" for i in range(len(GNN)))} <= cited, cited


def test_a_plural_noun_of_the_topic_whose_papers_cluster_is_a_topic(
    app: Any, forest_weighs_verbs_as_topics: None
) -> None:
    """Only the papers on pruning say "variant" here: "variants of graph neural networks" asks for variants."""
    read = [
        (f.alternatives, f.optional) for f in app.read("Which papers study variants of graph neural networks?").facets
    ]
    assert read == [(("variants",), False), (("graph neural networks",), False)], read


def test_a_plural_noun_ending_a_phrase_linked_to_a_topic_whose_papers_are_spread_only_ranks(
    app: Any, forest_weighs_verbs_as_topics: None
) -> None:
    """ "graph neural networks *applications* in chemistry": the last part of a phrase no paper states, a plural
    noun linked to the topic after it, is weighed as "applications of X" is. It had gated: "reinforcement learning
    applications in robotic manipulation" cited 8 papers (F1 0.10) against 125 asked plainly (0.80)."""
    for question in ["Which papers study graph neural networks applications in chemistry?",
                     "Any work on graph neural networks applications to chemistry?"]:  # fmt: skip
        read = [(f.alternatives[0], f.optional) for f in app.read(question).facets]
        assert ("applications", True) in read, (question, read)
        assert [a for a, optional in read if not optional] == ["graph neural networks", "chemistry"], read


def test_a_gerund_before_a_relating_word_is_a_noun(app: Any, forest_weighs_verbs_as_topics: None) -> None:
    """ "clustering-based unsupervised learning" asks for clustering: a gerund before "-based" (or another relating
    word) names what the topic is based on, so it is weighed as a topic, not as the verb of the request ("clustering"
    had been weighed by its spread, 0.024 on the conference pool, and only ranked: 42 papers cited against 6 for
    "clustering for unsupervised learning"). Here "exploiting", whose papers are spread too, stands for it."""
    for link in ["-based", " based", "-driven", " driven"]:  # (hyphenated or typed apart, it reads the same)
        question = f"Which papers look into exploiting{link} graph neural networks?"
        read = [(f.alternatives[0], f.optional) for f in app.read(question).facets]
        assert read == [("exploiting", False), ("graph neural networks", False)], (question, read)


def test_a_gerund_opening_the_object_is_weighed_as_the_verb_of_a_request(
    app: Any, forest_weighs_verbs_as_topics: None
) -> None:
    """ "Which papers look into exploiting imitation learning for manipulation?" asks for imitation learning for
    manipulation: "exploiting" had been read as a topic, weighed 0.98, that gated (1 paper cited, F1 0.03 against
    0.60 on the conference pool). A gerund that opens a unit before a topic word is weighed as the verb of a request
    is, by how spread its papers are."""
    for question in ["Which papers look into exploiting graph neural networks?",
                     "Any work on exploiting graph neural networks, please?"]:  # fmt: skip
        read = [(f.alternatives[0], f.optional) for f in app.read(question).facets]
        assert [a for a, optional in read if not optional] == ["graph neural networks"], (question, read)
