"""The reader's interface and its two readers, and the parse stage's independence from the corpus, on the small
hand-made corpus of :mod:`tests.test_query`."""

from __future__ import annotations

import ast
import inspect

import askpapers.rag.read.parse as parse
from askpapers.rag.read.cues import protect_acronyms, tokens
from askpapers.rag.read.query import plan
from askpapers.rag.read.reader import CondensedReader, QueryReader, RuleReader
from askpapers.rag.types import Condensed
from tests.test_query import LEX

QUESTIONS = [
    "Which papers use reinforcement learning for robotic manipulation?",
    "differential privacy but not federated learning",
    "How many papers use diffusion models?",
    "What rate gap does WaterSIC reach?",
    "backdoor attacks or defenses",
]


def test_the_rule_reader_reads_as_the_planner_does() -> None:
    reader: QueryReader = RuleReader(LEX)
    for q in QUESTIONS:
        assert reader.read(q) == plan(q, LEX)
    assert RuleReader(LEX, weigh=False).read(QUESTIONS[0]) == plan(QUESTIONS[0], LEX, weigh=False)


def test_parse_imports_no_lexicon_and_runs_without_one() -> None:
    tree = ast.parse(inspect.getsource(parse))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported and not any("lexicon" in (m or "") or "resolve" in (m or "") for m in imported)
    toks = tokens("Which papers use jailbreak attacks or backdoor attacks, but not LLMs?")
    items = parse.segments(toks, set(), protect_acronyms(toks), lambda word, neighbour, before, last: False)
    groups, excluded = parse.grouped(parse.bounded(items))
    shown = [[" ".join(u.shown) for u in g] for g in groups]
    assert shown == [["jailbreak attacks", "backdoor attacks"]]
    assert [[" ".join(u.shown) for u in g] for g in excluded] == [["LLMs"]]


def condensed(query: str, facets: list[list[str]]) -> Condensed:
    return Condensed(query=query, facets=facets, language="Chinese")


def test_the_condensed_reader_reads_the_english_query_when_it_has_a_topic() -> None:
    reader = CondensedReader(LEX, condensed("papers on differential privacy", [["ignored"]]))
    got = reader.read("有哪些关于差分隐私的论文？")
    english = plan("papers on differential privacy", LEX)
    assert got.text == "有哪些关于差分隐私的论文？"
    assert got.facets == english.facets and got.searched == english.searched


def test_the_condensed_readers_facets_are_resolved_and_spelled_as_the_rule_readers() -> None:
    """With no topic in the English query, the model's facets go through resolve and expand: spelled from the same
    lexicon ("differentially private"), and a phrase the corpus never states cut into the phrases it does."""
    reader = CondensedReader(LEX, condensed("papers please", [["differential privacy"], ["jailbreak attacks"]]))
    got = reader.read("有哪些论文？")
    assert [f.alternatives for f in got.facets] == [("differential privacy",), ("jailbreak attacks",)]
    assert "differentially private" in got.facets[0].all_spellings()
    assert "jailbreak" in got.facets[1].all_spellings()
    assert got.facets == plan("differential privacy for jailbreak attacks", LEX).facets  # (as the rule reader reads)
    cut = CondensedReader(LEX, condensed("papers please", [["differentially private federated learning"]])).read("?")
    assert [f.alternatives for f in cut.facets] == [("differentially private",), ("federated learning",)]


def test_the_condensed_reader_keeps_the_typed_intent_when_it_finds_no_facet() -> None:
    typed = plan("How many papers?", LEX)
    got = CondensedReader(LEX, condensed("papers please", []), typed=typed).read("多少篇论文？")
    assert got.facets == [] and got.intent == typed.intent == "count" and got.text == "多少篇论文？"
    again = CondensedReader(LEX, condensed("papers please", [[" ", ""]])).read("How many papers?")
    assert again.facets == [] and again.intent == "count"
