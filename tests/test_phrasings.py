"""Metamorphic tests: a topic asked in many wordings, politely, sloppily, misspelt or as a count or overview, finds
the same papers as the canonical "Which papers use X?", on the bundled corpus."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.evaluation.frames import PHRASINGS, fill

# the dev list topics of the bundled corpus (as in ../shared/eval/dev_questions.jsonl), and the papers each finds
TOPICS = [
    "information bottleneck", "federated learning", "uncertainty estimation or out-of-distribution detection",
    "machine unlearning or model extraction attacks", "recommender systems",
    "multimodal large language models or vision-language models", "the Koopman operator", "reservoir computing",
    "contextual bandits", "joint-embedding predictive architectures",
]  # fmt: skip


def _ids(answer: Any) -> set[str]:
    return {c.paper_id for c in answer.citations}


@pytest.fixture(scope="module")
def canonical(app: Any) -> dict[str, set[str]]:
    return {t: _ids(app.ask(f"Which papers use {t}?", mode="extractive")) for t in TOPICS}


def test_the_canonical_questions_find_papers(canonical: dict[str, set[str]]) -> None:
    assert all(canonical.values()), {t: len(v) for t, v in canonical.items()}
    assert len(canonical["information bottleneck"]) == 6


@pytest.mark.parametrize("template", PHRASINGS)
def test_every_phrasing_finds_the_canonical_papers(app: Any, canonical: dict[str, set[str]], template: str) -> None:
    worse = []
    for topic in TOPICS:
        question = fill(template, topic)
        got = _ids(app.ask(question, mode="extractive"))
        want = canonical[topic]
        jaccard = len(got & want) / len(got | want) if got | want else 1.0
        if jaccard < 0.9 or (len(want) >= 2 and len(got) < 2):
            worse.append(f"{question!r}: {len(got)} papers, Jaccard {jaccard:.2f} with {len(want)}")
    assert not worse, "; ".join(worse)


@pytest.mark.parametrize(
    ("typo", "right"),
    [("whcih papres use informaton bottleneck", "information"), ("papers on federeted learning", "federated"),
     ("recomender systems", "recommender"), ("contextual bandts", "bandits")],
)  # fmt: skip
def test_a_misspelt_topic_finds_the_same_papers_and_says_what_it_searched(
    app: Any, canonical: dict[str, set[str]], typo: str, right: str
) -> None:
    answer = app.ask(typo, mode="extractive")
    assert answer.text.startswith("Showing results for *") and right in answer.text.split("\n")[0]
    topic = next(t for t in TOPICS if right in t)
    assert _ids(answer) == canonical[topic]
    assert answer.plan["corrections"]


def test_word_order_of_facets_does_not_matter(app: Any) -> None:
    a = _ids(app.ask("papers on federated learning with differential privacy", mode="extractive"))
    b = _ids(app.ask("papers on differential privacy with federated learning", mode="extractive"))
    c = _ids(app.ask("differential privacy for federated learning", mode="extractive"))
    assert a == b == c
