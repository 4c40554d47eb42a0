"""A derived noun asked as a word of its own ("sampling", "pretraining", "relations"; "fine-tuning" where the corpus
also writes "finetuning") is met by its noun forms only: a paper with "samples", "pretrained models" or "related
work" uses another word of the family, not the noun asked (:func:`askpapers.vectorstore.terms.same_term`'s
``alone``). Inside a phrase the words before it pin the sense, so "language models" still states "language
modeling". However the question spells the word (joined, hyphenated or apart), the answer is the same; the count of
a large set agrees (tests/test_large_sets.py asks these questions too)."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.vectorstore.terms import same_term
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

NOUNS = {
    "smp-a": ("Faster sampling for diffusion models", "We study sampling from diffusion models with fewer steps."),
    "smp-b": ("Importance sampling for off-policy evaluation", "Importance sampling corrects the policy mismatch."),
    "smp-n1": ("Few-shot image classification", "We classify images from a handful of labelled samples per class."),
    "smp-n2": ("Efficient exploration", "Our agent is sample efficient on sparse-reward tasks, using fewer samples."),
    "pre-a": (
        "Masked pretraining of vision transformers",
        "We study pretraining vision transformers on masked patches.",
    ),
    "pre-b": ("Data for pre-training", "The choice of pre-training data shapes downstream accuracy."),
    "pre-n": ("Adapters for language models", "We adapt pretrained language models to new tasks with small adapters."),
    "lm-a": ("Recurrent language models", "We train recurrent neural language models on long documents."),
    "lm-b": ("Language modeling with state spaces", "State-space layers improve language modeling of long documents."),
    "ft-a": ("Parameter-efficient finetuning", "Low-rank finetuning adapts large models cheaply."),
    "ft-b": ("Fine-tuning with noisy labels", "Fine-tuning on noisy labels overfits quickly."),
    "ft-n": ("Evaluating fine-tuned models", "We evaluate fine-tuned models on out-of-domain inputs."),
    "rel-a": ("Learning relations between entities", "We extract relations between entities from news text."),
    "rel-n": ("A survey of graph methods", "We review related work on graph methods and their benchmarks."),
}
SPELLED = {  # each derived noun in the ways a question may write it, with the papers that do and do not state it
    ("sampling",): ({"smp-a", "smp-b"}, {"smp-n1", "smp-n2"}),
    ("pretraining", "pre-training", "pre training"): ({"pre-a", "pre-b"}, {"pre-n"}),
    ("finetuning", "fine-tuning", "fine tuning"): ({"ft-a", "ft-b"}, {"ft-n"}),
    ("relations", "relation"): ({"rel-a"}, {"rel-n"}),
}
ASKS = ["Which papers study {x}?", "What has been done on {x}?"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("nouns"), with_filler(NOUNS, FILLER), embedder)


@pytest.mark.parametrize(
    ("a", "b"),
    [("sampling", "samples"), ("sampling", "sample"), ("pretraining", "pretrained"), ("planning", "plan"),
     ("relations", "related"), ("demonstrations", "demonstrate"), ("navigation", "navigate"),
     ("quantization", "quantized")],
)  # fmt: skip
def test_a_derived_noun_asked_alone_takes_only_its_noun_forms(a: str, b: str) -> None:
    assert same_term(a, b) and same_term(b, a)  # (one term in a phrase, and in the word index)
    assert not same_term(a, b, alone=True)
    assert same_term(b, a, alone=True)  # (the verb asked finds the noun: "sample" asked finds "sampling")
    plural = a[:-1] if a.endswith("s") else a + "s"
    assert same_term(a, plural, alone=True) and same_term("quantization", "quantisation", alone=True)


@pytest.mark.parametrize("ask", ASKS)
def test_the_noun_is_found_and_its_other_uses_are_not(app: Any, ask: str) -> None:
    for spellings, (stating, other) in SPELLED.items():
        answers = {x: set(app.ask(ask.format(x=x), mode="extractive").paper_ids) for x in spellings}
        for x, got in answers.items():
            assert stating <= got and not other & got, (x, got)
        assert len({frozenset(g) for g in answers.values()}) == 1, answers  # (however the word is spelt)


def test_a_word_before_the_noun_pins_its_sense(app: Any) -> None:
    got = set(app.ask("Which papers study language modeling?", mode="extractive").paper_ids)
    assert {"lm-a", "lm-b"} <= got
