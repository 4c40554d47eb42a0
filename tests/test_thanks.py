"""A clause of thanks is about the exchange, never the papers. On held-out topics in frames written before looking at
the answers, "Papers on adam please, thanks in advance!" had cited 226 papers for "advance" (0 of adam's 14), since
"adam" weighs as common English and "advance" gated in its place; "thanks to X" still names a cause, and a clause
that names what it asks for ("thanks for any papers on X") is still read."""

from __future__ import annotations

import pytest

from askpapers.rag.read.cues import thanking, tokens
from askpapers.rag.read.query import plan
from tests.test_query import docs_lexicon

LEX = docs_lexicon(
    [
        "Knowledge distillation in advance of deployment saves time; we help students learn from a teacher.",
        "Knowledge distillation with data augmentation, in advance, for your time budget.",
        "Data augmentation helps robustness; we thank the reviewers for their time and help.",
        "Many advances in data augmentation, and thanks to distillation the students improve.",
        "Graph neural networks pass messages along the edges of molecules.",
        "Diffusion models denoise images step by step.",
        "Federated learning trains on phones without moving their data.",
        "Bayesian optimization tunes hyperparameters with a Gaussian process.",
        "Speech recognition with transformers on noisy audio.",
        "Contrastive learning of image representations from augmented views.",
        "Pruning removes weights from a trained network.",
        "Causal inference from observational studies with instruments.",
    ]
)


def _gates(question: str) -> list[str]:
    return [f.alternatives[0].lower() for f in plan(question, LEX).facets if not f.optional]


@pytest.mark.parametrize(
    "question",
    [
        "Which papers use knowledge distillation? Thanks in advance",
        "Papers on knowledge distillation please, thanks in advance!",
        "Which papers use knowledge distillation? Thank you so much for your time.",
        "knowledge distillation - many thanks for the help",
        "Thanks in advance, which papers use knowledge distillation?",
        "Which papers use knowledge distillation? Appreciate it in advance.",
        "Which papers use knowledge distillation? Much appreciated in advance",
        "thanks for any papers on knowledge distillation",
    ],
)
def test_a_clause_of_thanks_does_not_gate(every_unit_topical: None, question: str) -> None:
    assert _gates(question) == ["knowledge distillation"], plan(question, LEX).facets


def test_thanks_to_names_a_cause(every_unit_topical: None) -> None:
    gates = _gates("Which papers improve robustness thanks to data augmentation?")
    assert "data augmentation" in gates, gates


@pytest.mark.parametrize(
    ("question", "thanks"),
    [
        ("papers on X, thanks in advance!", ["thanks", "in", "advance"]),
        ("X? Many thanks for your time.", ["many", "thanks", "for", "your", "time"]),
        ("X? much appreciated", ["much", "appreciated"]),
        ("X - appreciate it", ["appreciate", "it"]),
        ("robustness thanks to augmentation", []),  # (a cause)
        ("thanks for any papers on X", []),  # (it asks)
        ("I appreciate papers on X", []),  # (the papers are what is asked for)
    ],
)
def test_the_clause_of_thanks_runs_to_the_next_punctuation(question: str, thanks: list[str]) -> None:
    toks = tokens(question)
    assert [toks[i].low for i in sorted(thanking(toks))] == thanks
