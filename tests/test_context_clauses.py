"""A clause that tells what the asker does is not what they ask for: in "I want to compare baselines, so which
papers evaluate pruning?" the papers asked for are on pruning. Such a clause had been read as part of the request:
"compare" made it an overview and "baselines", a topic of the corpus stated with pruning, gated the set (the 29
conference dev topics, asked "I plan to benchmark models, so what is there on X?": F1 0.82 -> 0.10). Now a clause
whose subject is the asker and that names nothing it asks for is set aside when another clause asks
(``rag.read.parse.context_clauses``): checked as a property over generated frames (a situation, a joint, a
request), in either order, on a hand-made corpus where every situation's noun is a topic stated with every topic.
"""

from __future__ import annotations

import itertools
import random

import pytest

from askpapers.rag.read.cues import tokens
from askpapers.rag.read.parse import clauses, context_clauses
from askpapers.rag.read.query import plan
from askpapers.rag.types import QueryPlan
from tests.test_clause_verbs import PRUNING
from tests.test_query import docs_lexicon

TOPICS = {
    "pruning": PRUNING,
    "speech recognition": ["Streaming speech recognition with transducers.", "Speech recognition for dialects.",
                           "Noisy speech recognition with self-supervised features."],
    "graph coloring": ["Graph coloring with message passing.", "Exact graph coloring by branch and bound.",
                       "Graph coloring heuristics for register allocation."],
}  # fmt: skip
NOUNS = ["baselines", "architectures", "optimizers", "algorithms"]
# every noun of a situation is a topic stated with every topic: read as part of the request, it would gate
SITUATED = [f"Strong {n} for {t} compared on standard tasks." for n in NOUNS for t in TOPICS]
SITUATIONS = [
    "I want to compare {s}", "I plan to benchmark {s}", "We need to rank strong {s}",
    "I'd like to contrast the main {s}", "We're evaluating new {s}", "My team is reviewing {s}",
    "I have to choose between {s}", "Our lab trains {s}", "I've been asked to audit some {s}",
    "We just released two {s}",
]  # fmt: skip
JOINTS = [", so ", ". ", "; ", " - ", " \u2014 ", "! "]
REQUESTS = ["which papers use {x}?", "what is there on {x}?", "any work on {x}?", "do you have papers about {x}?",
            "show me the research on {x}", "which papers evaluate {x}?"]  # fmt: skip
PLAIN = "Which papers use {x}?"
# other papers, so that no word of the situations is in a large share of the corpus (a word in most papers only ranks)
OTHERS = [
    f"{a} for {b}."
    for a, b in itertools.product(
        [
            "Protein folding",
            "Weather forecasting",
            "Music generation",
            "Traffic prediction",
            "Crop yield estimation",
            "Code completion",
        ],
        ["graph networks", "kernel methods", "random forests", "state space models", "transformers"],
    )
]
LEX = docs_lexicon([d for docs in TOPICS.values() for d in docs] + SITUATED + OTHERS)


def frames(n: int, seed: int) -> list[tuple[str, bool]]:
    """``n`` generated frames with slots {s} and {x}, and whether the situation comes first."""
    every = list(itertools.product(SITUATIONS, JOINTS, REQUESTS, [True, False]))
    return random.Random(seed).sample(every, n)  # type: ignore[return-value]


def framed(situation: str, joint: str, request: str, first: bool) -> str:
    if first:
        return situation + joint + (request if joint == ", so " else request[0].upper() + request[1:])
    ask = request[0].upper() + request[1:]
    return ask + (" " if ask.endswith("?") else ". ") + situation + "."


def reading(p: QueryPlan) -> tuple[str, list[str]]:
    return p.intent, [f.alternatives[0].lower() for f in p.facets if not f.optional]


@pytest.mark.parametrize("topic", list(TOPICS))
def test_the_askers_situation_neither_narrows_nor_sets_the_intent(topic: str) -> None:
    plain = reading(plan(PLAIN.format(x=topic), LEX))
    assert plain == ("set", [topic])
    # read as part of the request, each situation's noun gates: it is a topic the corpus states with the topic
    for noun in NOUNS:
        assert reading(plan(f"Which papers use {noun} for {topic}?", LEX))[1] == [noun, topic]
    differ = []
    for (situation, joint, request, first), noun in zip(
        frames(80, seed=len(topic)), itertools.cycle(NOUNS), strict=False
    ):
        question = framed(situation.format(s=noun), joint, request.format(x=topic), first)
        if reading(plan(question, LEX)) != plain:
            differ.append(question)
    assert not differ, differ


@pytest.mark.parametrize(
    "question",
    [
        # the clause with the request's object ("look at X", "interested in X") is the topic's, whatever asks after it
        "My advisor asked me to look at {x}, where do I start?",
        "I'm interested in {x}, which papers should I read?",
        "I'm writing a literature review on {x}; what is there?",  # (it names what it asks for: "literature")
        "I need papers on {x}. Thanks!",
        "Hi team, I'm new here. Which papers use {x}?",
        # a clause that names what the asker studies, and one that the request points back at, are the topic's
        "I'm researching {x}, so which papers use baselines?",
        "I work on {x}; which papers evaluate optimizers?",
        "We use {x}. Which papers compare algorithms?",
        "I want to compare {x}, so which papers apply them to baselines?",
        "We need strong {x}. Any work on architectures?",
    ],
)
def test_a_clause_that_holds_the_topic_is_never_set_aside(question: str) -> None:
    for topic in TOPICS:
        assert topic in reading(plan(question.format(x=topic), LEX))[1], question.format(x=topic)


def test_clauses_are_cut_at_sentence_marks_and_before_a_new_subject_or_question() -> None:
    def cut(text: str) -> list[str]:
        toks = tokens(text)
        return [" ".join(toks[i].text for i in c) for c in clauses(toks)]

    assert cut("I plan to benchmark models, so what is there on pruning?") == [
        "I plan to benchmark models", "so what is there on pruning"]  # fmt: skip
    assert cut("Hi team, I work on robots; any papers on pruning?") == ["Hi team", "I work on robots",
                                                                         "any papers on pruning"]  # fmt: skip
    assert cut("pruning, quantization and distillation") == ["pruning , quantization and distillation"]
    # one clause, or no other clause that asks: nothing is set aside
    assert context_clauses(tokens("I want to compare pruning methods"), set()) == set()
    assert context_clauses(tokens("I want to compare baselines. Thanks!"), set()) == set()
    toks = tokens("We want to rank baselines - any work on pruning?")
    assert {toks[i].text for i in context_clauses(toks, set())} == {"We", "want", "to", "rank", "baselines"}


# papers that use a letter as a symbol ("the Q function", "a matrix A"): the letter is stated, and its own unit
LETTERS = [f"We learn the {c} function of {t} with temporal differences." for c in "QVA" for t in TOPICS]


@pytest.mark.parametrize("label", ["Q: which papers use {x}?", "A) papers on {x}", "Q. {x} - any papers?",
                                   "V: what is there on {x}?"])  # fmt: skip
def test_a_lone_letter_never_gates(label: str) -> None:
    lex = docs_lexicon([d for docs in TOPICS.values() for d in docs] + SITUATED + OTHERS + LETTERS)
    for topic in TOPICS:
        assert lex.phrase_df(label[0].lower()) >= 3
        assert reading(plan(label.format(x=topic), lex))[1] == [topic], label.format(x=topic)


# papers that state the words of a reason clause with every topic ("PI controllers", "a survey of …")
REASONS = [f"A PI controller tunes {t} online, and a survey of {t} follows." for t in TOPICS]


@pytest.mark.parametrize(
    "question",
    ["Any work on {x} because my PI asked?", "I'd like papers on {x} because I'm writing a survey",
     "Hey folks, I'm hunting for work on {x} because my PI asked, many thanks"],
)  # fmt: skip
def test_a_reason_clause_is_the_askers_situation(question: str) -> None:
    """A conjunction that opens a clause of its own ("because") starts one: "my PI asked" tells why, not what."""
    lex = docs_lexicon([d for docs in TOPICS.values() for d in docs] + SITUATED + OTHERS + REASONS)
    for topic in TOPICS:
        assert reading(plan(question.format(x=topic), lex)) == ("set", [topic]), question.format(x=topic)


@pytest.mark.parametrize(
    "question",
    ["I'm working with {x}; which papers apply it to {y}?", "We use {x}; what is there on {y}?", "{x}; which use {y}?"],
)
def test_a_semicolon_before_a_clause_joins_no_alternatives(question: str) -> None:
    # (as a comma there does not: "I'm working with GANs; which papers apply them to medical imaging?" had read
    # "GANs or medical imaging")
    for x, y in itertools.permutations(TOPICS, 2):
        facets = plan(question.format(x=x, y=y), LEX).facets
        assert all(len(f.alternatives) == 1 for f in facets), (question.format(x=x, y=y), facets)
