"""Extractive answers: every matching paper, verified citations, abstention, factoids, follow-ups."""

from __future__ import annotations

import pytest

from askpapers.vectorstore.errors import QuestionError

IB_PAPERS = {
    "Representation Unlearning: Model parameters",
    "GCIB Graph Contrastive Information Bottleneck",
    "SymSpectra: Functional group imbalance",
    "Structure-aware Granular-Ball based Information Bottleneck (SGB-IB)",
    "CGTFra: Consistent inter-variate dependency modeling",
    "Label-Guided Representation Learning (LGRL): Semantic structure inherent in partial annotations",
}


def _verified(answer, app) -> None:  # type: ignore[no-untyped-def]
    """Every citation names a stored paper, its evidence is a verbatim sentence, and the text cites it."""
    stored = app.index.papers([c.paper_id for c in answer.citations])
    assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    for c in answer.citations:
        assert c.paper_id in stored
        assert c.abstract == stored[c.paper_id].abstract
        assert c.evidence and c.evidence in c.abstract
        assert c.evidence[0].isupper() or c.evidence[0] in "*\"'(“"  # a whole sentence, not a fragment
        assert f"[{c.n}]" in answer.text


def test_which_papers_lists_every_match(app) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask("Which papers use information bottleneck?")
    assert answer.found and answer.mode == "extractive" and answer.kind == "list"
    assert {c.title for c in answer.citations} == IB_PAPERS
    assert "Found 6 papers" in answer.text
    _verified(answer, app)
    for c in answer.citations:
        assert "information bottleneck" in c.evidence.lower().replace("**", "")


def test_alternatives_in_one_question(app) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask("Which papers study machine unlearning or model extraction attacks?")
    assert {c.title for c in answer.citations} == {
        "CREDIT: Ownership of a suspicious model with strict theoretical guarantees",
        "Representation Unlearning: Model parameters",
    }
    _verified(answer, app)


@pytest.mark.parametrize(
    "question", ["Which papers study quantum computing?", "Which papers are about protein folding?"]
)
def test_abstains_when_nothing_matches(app, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask(question)
    assert not answer.found and answer.citations == []
    assert "No paper" in answer.text
    assert "[1]" not in answer.text
    if answer.nearest:
        assert "do **not** match" in answer.text


def test_factoid_quotes_the_supporting_sentence(app) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask("What rate gap does WaterSIC reach?")
    assert answer.found and answer.kind == "factoid"
    assert answer.citations[0].title == "WaterSIC: Possible covariance matrices of input activations"
    assert "0.255 bits" in answer.citations[0].evidence and "0.255" in answer.text
    _verified(answer, app)


def test_factoid_about_unknown_method_abstains(app) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask("What accuracy does AlphaFoldX reach on CASP15?")
    assert not answer.found and answer.citations == []


def test_followup_narrows_previous_answer(app) -> None:  # type: ignore[no-untyped-def]
    first = app.ask("Which papers use information bottleneck?")
    history = [{"role": "user", "content": first.question}, {"role": "assistant", "content": first.text}]
    follow = app.ask("Which of those are about time series?", history)
    assert follow.found
    assert {c.title for c in follow.citations} == {"CGTFra: Consistent inter-variate dependency modeling"}
    assert follow.text.startswith("Of the 6 papers in the previous answer, 1 matches “time series”")
    assert {c.paper_id for c in follow.citations} <= {c.paper_id for c in first.citations}
    _verified(follow, app)
    # without the history, the same words search the whole corpus
    alone = app.ask("Which papers are about time series?")
    assert len(alone.citations) > len(follow.citations)


def test_followup_with_nothing_left_abstains(app) -> None:  # type: ignore[no-untyped-def]
    history = [{"role": "user", "content": "Which papers are about reservoir computing?"}]
    answer = app.ask("Which of them use information bottleneck?", history)
    assert not answer.found and answer.citations == []


@pytest.mark.parametrize("bad", ["", "   ", "\x00\x01"])
def test_empty_question_is_an_error(app, bad: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QuestionError, match="empty"):
        app.ask(bad)


def test_llm_mode_without_endpoint_is_a_clear_error(app) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QuestionError, match="LLM endpoint"):
        app.ask("Which papers use information bottleneck?", mode="llm")


def test_k_caps_the_citations(app) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask("Which papers use information bottleneck?", k=2)
    assert len(answer.citations) == 2


@pytest.mark.parametrize(
    ("question", "title"),
    [
        (
            "Which papers study VLMs?",
            "MIRL: MI-based rewards for visual perception optimization",
        ),  # acronym → the long form an abstract defines
        ("Which papers study HNNs?", "HIAL: Hypergraph Active Learning"),
        ("Which papers are about OOD detection?", "Gated Evidential Mixtures (GEM): Multi-modal epistemic uncertainty"),
    ],
)
def test_acronyms_match_their_long_forms(app, question: str, title: str) -> None:  # type: ignore[no-untyped-def]
    answer = app.ask(question)
    assert [c.title for c in answer.citations] == [title]
    _verified(answer, app)
