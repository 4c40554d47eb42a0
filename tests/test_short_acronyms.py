"""A two-letter acronym ("RL") names a phrase only where the corpus defines it so: a paper that writes "offline RL"
and never "reinforcement learning" is about reinforcement learning in a corpus whose papers define "RL" that way,
while "DP", defined as differential privacy by some papers and as dynamic programming by as many, stands for
neither; inside a longer phrase the same holds ("offline RL" for "offline reinforcement learning"). Two capitals are
read as written: "rl" or "RLHF" is not "RL"."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.decide.acronyms import definitions_of, short_acronym, short_acronyms
from askpapers.rag.decide.evidence import states
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

RL_ONLY = "rl-only"  # "offline RL", never "reinforcement learning"
DP_ONLY = "dp-only"  # "DP guarantees", never what DP stands for

PAPERS = {
    "rl-def-0": ("Exploration bonuses", "Reinforcement learning (RL) agents explore with count-based bonuses."),
    "rl-def-1": ("Reward shaping", "We shape rewards for reinforcement learning (RL) in sparse mazes."),
    "rl-def-2": ("Safe policies", "Constrained reinforcement learning (RL) keeps a cart inside its track."),
    RL_ONLY: ("Grasping from logs", "Offline RL agents acquire grasping skills from logged robot data."),
    "offline-rl-long": ("Conservative values", "Offline reinforcement learning learns a policy from a fixed dataset."),
    "online-rl": ("Online exploration", "Online RL agents gather fresh data from a simulator at every step."),
    "dp-priv-0": ("Private means", "Differential privacy (DP) bounds what a released mean reveals."),
    "dp-priv-1": ("Private SGD", "Training with differential privacy (DP) clips and noises each gradient."),
    "dp-dyn-0": ("Sequence alignment", "Dynamic programming (DP) aligns two sequences in quadratic time."),
    "dp-dyn-1": ("Optimal stopping", "Dynamic programming (DP) solves the stopping problem backwards."),
    DP_ONLY: ("Released statistics", "DP guarantees hold for every statistic the agency publishes."),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("short"), with_filler(PAPERS, FILLER), embedder)


def cited(app: Any, question: str) -> set[str]:
    return {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}


def test_two_capitals_are_read_as_written() -> None:
    assert short_acronym("RL") == "RL" and short_acronym("LMs") == "LM"
    assert short_acronym("rl") == short_acronym("RLHF") == short_acronym("GAN") == short_acronym("A1") == ""
    assert states("Offline RL-based control of arms.", "RL")
    assert states("Many RLs are trained.", "RL")
    assert not states("we use rl here, and RLHF there", "RL")
    assert not states("a 5 kg payload", "KG")


def test_short_acronyms_are_read_from_definitions() -> None:
    texts = ["Reinforcement learning (RL) and language models (LMs) and graph neural networks (GNNs)."]
    assert short_acronyms(["reinforcement learning", "language models", "graph neural networks"], texts) == {
        "reinforcement learning": ["RL"], "language models": ["LM"],
    }  # fmt: skip
    assert definitions_of("DP", ["Dynamic programming (DP).", "Differential privacy (DP), and again (DP)."]) == [
        "dynam program", "differenti privaci",
    ]  # fmt: skip


def test_an_acronym_the_corpus_defines_one_way_names_the_phrase(app: Any) -> None:
    got = cited(app, "Which papers use reinforcement learning?")
    assert {"rl-def-0", "rl-def-1", "rl-def-2", RL_ONLY} <= got, sorted(got)


def test_an_acronym_the_corpus_defines_two_ways_names_neither(app: Any) -> None:
    got = cited(app, "Which papers use differential privacy?")
    assert {"dp-priv-0", "dp-priv-1"} <= got, sorted(got)
    assert DP_ONLY not in got and not got & {"dp-dyn-0", "dp-dyn-1"}, sorted(got)


def test_an_acronym_inside_a_longer_phrase_names_its_words(app: Any) -> None:
    # "offline RL" is "offline reinforcement learning" in a corpus that defines "RL" so; "online RL" is not
    got = cited(app, "Which papers use offline reinforcement learning?")
    assert {"offline-rl-long", RL_ONLY} <= got, sorted(got)
    assert "online-rl" not in got and not got & {"rl-def-0", "rl-def-1", "rl-def-2"}, sorted(got)


def test_an_acronym_is_read_inside_a_phrase_only_where_the_corpus_defines_it_one_way(app: Any) -> None:
    pools = app.parts.answerers["extractive"].matcher.facet_pools
    assert pools._inner_short("offline reinforcement learning") == ["offline RL"]
    assert pools._inner_short("differential privacy guarantees") == []  # "DP" is also dynamic programming
    assert pools._inner_short("reinforcement learning") == []  # two words: the acronym alone (short_forms)
