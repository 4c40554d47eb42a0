"""Spellings of one term are one term everywhere: British and American ("Bayesian optimisation", "Bayesian
optimization") and a compound written as one word, hyphenated or as two ("finetuning", "fine-tuning", "fine
tuning"). A question in any of them reads alike and finds the papers written in any, through the index's phrase
searches, not only through embeddings."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.decide.match import FacetMatcher
from askpapers.rag.decide.membership import shipped
from askpapers.vectorstore.terms import respelled, spelling_forms
from tests.conftest import memory_app, with_filler
from tests.test_match import FILLER

PAPERS = {
    "bo-us": ("Bayesian optimization of chemistry", "Bayesian optimization finds reaction conditions in few trials."),
    "bo-uk": ("Batch Bayesian optimisation", "We run Bayesian optimisation with batches of parallel experiments."),
    "bo-uk2": ("Tuning gaits on hardware", "Gait parameters are tuned by Bayesian optimisation on a real robot."),
    "q-uk": ("Quantisation of language models", "Weights are stored in four bits after quantisation."),
    "q-us": ("Quantization-aware training", "Quantization noise is simulated during training."),
    "opt": ("Convex optimization at scale", "We study first-order optimization of convex losses."),
    "priv": ("Differentially private training", "Models are trained to be differentially private."),
    "ft-hyphen": ("Sparse fine-tuning", "Fine-tuning only a few weights keeps the base model intact."),
    "ft-joined": ("Finetuning with adapters", "We study finetuning of large models with adapters."),
    "ft-apart": ("Robust fine tuning", "Fine tuning on noisy labels with a robust loss."),
    "ma-joined": ("Multiagent coordination", "Multiagent systems coordinate through messages."),
    "ma-hyphen": ("Multi-agent games", "Multi-agent games are solved with regret matching."),
    "marl-h1": ("Traffic control", "Multi-agent reinforcement learning controls traffic lights."),
    "marl-h2": ("Warehouse robots", "Robots coordinate with multi-agent reinforcement learning."),
    "marl-j": ("Credit assignment", "Credit assignment in multiagent reinforcement learning."),
    "ood-def": ("Shifted inputs", "Out-of-distribution (OOD) detection flags inputs unlike the training data."),
    "ood-plain": ("Energy scores", "Out-of-distribution detection with energy scores of a classifier."),
    "ood-shift": ("Shift benchmarks", "Distribution shift detection on tabular data."),
}


def test_spelling_forms_and_respelled_phrases() -> None:
    assert spelling_forms("optimization") == ["optimization", "optimisation"]
    assert spelling_forms("optimisation") == ["optimisation", "optimization"]
    assert spelling_forms("modelling") == ["modelling", "modeling"]
    assert spelling_forms("analyze") == ["analyze", "analyse"]
    assert spelling_forms("accuracy") == ["accuracy"]  # (-acy/-ate joins two words: not a spelling)
    assert spelling_forms("learning") == ["learning"]
    assert respelled(["Bayesian optimization"]) == ["bayesian optimisation"]
    assert respelled(["language modelling", "graph neural networks"]) == ["language modeling"]
    assert respelled(["graph neural networks"]) == []


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("spellings"), with_filler(PAPERS, FILLER), embedder)


@pytest.mark.parametrize(
    ("forms", "want"),
    [(("fine-tuning", "finetuning", "fine tuning"), {"ft-hyphen", "ft-joined", "ft-apart"}),
     (("multiagent", "multi-agent"), {"ma-joined", "ma-hyphen", "marl-h1", "marl-h2", "marl-j"}),
     # (a word of a phrase written as one: the phrase is one term, spelled as the corpus writes it)
     (("multiagent reinforcement learning", "multi-agent reinforcement learning", "multi agent reinforcement learning"),
      {"marl-h1", "marl-h2", "marl-j"})],
)  # fmt: skip
def test_a_compound_written_as_one_word_hyphenated_or_apart_is_one_term(
    app: Any, forms: tuple[str, ...], want: set[str]
) -> None:
    never = app.settings.answer.model_copy(update={"dense_with_terms": 1.01, "dense_alone": 1.01})
    matcher = FacetMatcher(app.parts.index, never, None, shipped())
    for form in forms:
        assert set(matcher.match(app.read(f"Which papers use {form}?"), None).ids) == want, form


@pytest.mark.parametrize(
    ("american", "british", "want"),
    [("Bayesian optimization", "Bayesian optimisation", {"bo-us", "bo-uk", "bo-uk2"}),
     # (not f-16, "Quantised training of ...": a noun asked alone takes its noun forms, tests/test_derived_nouns.py)
     ("quantization", "quantisation", {"q-uk", "q-us"})],
)  # fmt: skip
def test_either_spelling_finds_the_papers_written_in_either(
    app: Any, american: str, british: str, want: set[str]
) -> None:
    # (no paper meets a facet by its embedding alone here: only the words find them)
    never = app.settings.answer.model_copy(update={"dense_with_terms": 1.01, "dense_alone": 1.01})
    matcher = FacetMatcher(app.parts.index, never, None, shipped())
    got = {}
    for topic in (american, british):
        plan = app.read(f"Which papers use {topic}?")
        assert [f.alternatives[0].lower() for f in plan.facets if not f.optional] == [topic.lower()]
        got[topic] = set(matcher.match(plan, None).ids)
    assert got[american] == got[british] == want


def test_a_phrase_with_the_acronym_of_its_first_words_defined_inside_it_states_the_phrase(app: Any) -> None:
    # "out-of-distribution (OOD) detection" states "out-of-distribution detection"
    never = app.settings.answer.model_copy(update={"dense_with_terms": 1.01, "dense_alone": 1.01})
    matcher = FacetMatcher(app.parts.index, never, None, shipped())
    got = set(matcher.match(app.read("Which papers use out-of-distribution detection?"), None).ids)
    assert got == {"ood-def", "ood-plain"}


def test_a_word_written_apart_is_found_as_every_pair_of_words_finds_it() -> None:
    """The two words that spell a one-word term ("fine tuning" of "finetuning"), found by looking for each start of
    the term, are the pairs of words in a row that spell it (each of at least SPLIT_MIN letters; the word is asked
    alone, so "fine tune" does not spell "finetuning")."""
    import random
    from itertools import pairwise

    from askpapers.rag.decide.evidence import _written_apart
    from askpapers.vectorstore.terms import SPLIT_MIN, same_term
    from askpapers.vectorstore.text import tokens

    def every_pair(words: tuple[str, ...], word: str) -> bool:
        return any(len(a) >= SPLIT_MIN and len(b) >= SPLIT_MIN and len(a) < len(word) and word.startswith(a)
                   and same_term(word, a + b, alone=True) for a, b in pairwise(words))  # fmt: skip

    rng = random.Random(3)
    parts = ["fine", "tuning", "tuned", "tune", "multi", "agent", "agents", "meta", "learning", "pre", "train",
             "trained", "the", "of", "data", "set", "sets", "dataset", "over", "fit", "fitting", "net",
             "work"]  # fmt: skip
    words_asked = ["finetuning", "finetuned", "multiagent", "metalearning", "pretrained", "dataset", "datasets",
                   "overfitting", "network", "networks", "fine", "pretrain"]  # fmt: skip
    found = 0
    for _ in range(400):
        words = tuple(tokens(" ".join(rng.choices(parts, k=rng.randint(1, 12)))))
        for word in words_asked:
            assert _written_apart(words, word) == every_pair(words, word), (words, word)
            found += every_pair(words, word)
    assert found > 50  # (the texts spell the words apart often enough for the comparison to mean something)


@pytest.mark.parametrize(
    "forms",
    [("finetuning", "fine tuning", "fine-tuning"),
     ("multiagent reinforcement learning", "multi agent reinforcement learning", "multi-agent reinforcement learning")],
)  # fmt: skip
def test_a_term_typed_in_a_rarer_writing_is_spelled_searched_and_embedded_as_the_corpus_writes_it(
    app: Any, forms: tuple[str, ...]
) -> None:
    """The corpus writes "fine tuning" (or "fine-tuning") twice and "finetuning" once: typed "finetuning", the facet
    is spelled "fine tuning", so its searches and its embedding are those of the commoner writing, and every writing
    cites the same papers (embeddings included)."""
    from askpapers.vectorstore.text import tokens

    spelled = {form: app.read(f"Which papers use {form}?").facets[0].all_spellings() for form in forms}
    assert len({tuple(tokens(s[0])) for s in spelled.values()}) == 1, spelled
    assert spelled[forms[0]] == spelled[forms[1]], spelled  # (the rarer writing as the commoner one is typed)
    cited = [{c.paper_id for c in app.ask(f"Which papers use {form}?", k=100).citations} for form in forms]
    assert cited[0] == cited[1] == cited[2] and cited[0], cited
