"""Two words typed as one ("longterm dependencies", "humanai interaction") are read as the two words, and said so.
On 40 held-out topics (``bench.keyword_topics --seed 11``) with generated slips, "longterm dependencies" had been
corrected to "longer dependencies" (72 papers cited, F1 0.09 against 0.86) and "humanai interaction" cited nothing.
A missing space is one edit: a word one edit from a known word the corpus states more often is that word."""

from __future__ import annotations

from askpapers.rag.read.query import plan
from tests.test_query import docs_lexicon

LEX = docs_lexicon(
    [
        "Recurrent networks struggle with long-term dependencies in sequences.",
        "Gated memory captures long-term dependencies over thousands of steps.",
        "A study of human-AI interaction in writing assistants.",
        "Longer contexts help, and longer training helps more.",
        "Longer horizons need longer rollouts; we make them longer still.",
        "Faithfulness of explanations, measured by deletion.",
        "Faithfulness and plausibility of rationales.",
        "The faithful full reconstruction of tactile images.",
        "Graph neural networks pass messages along edges.",
        "Diffusion models denoise images step by step.",
        "Federated learning trains on phones.",
        "Pruning removes weights from a network.",
    ]
)


def _read(question: str) -> tuple[list[str], list[tuple[str, str]]]:
    p = plan(question, LEX)
    return [a.lower() for f in p.facets if not f.optional for a in f.alternatives[:1]], p.corrections


def test_two_words_typed_as_one_are_read_apart() -> None:
    gates, fixes = _read("Which papers use longterm dependencies?")
    assert gates == ["long term dependencies"] and fixes == [("longterm", "long term")], (gates, fixes)
    gates, fixes = _read("any papers on humanai interaction?")
    assert " ".join(gates) == "human ai interaction" and fixes == [("humanai", "human ai")], (gates, fixes)


def test_a_word_one_edit_from_a_commoner_word_is_that_word() -> None:
    # ("faith fullness" is stated, by the stems of "faithful full": one paper, against "faithfulness"'s two)
    gates, fixes = _read("any papers on faithfullness?")
    assert gates == ["faithfulness"] and fixes == [("faithfullness", "faithfulness")], (gates, fixes)


def test_a_stop_word_is_no_part() -> None:
    # ("interact on" would be two known words, one a stop-word: the slip of "interaction" is read)
    gates, fixes = _read("any papers on human ai interacton?")
    assert ("interacton", "interaction") in fixes, fixes
