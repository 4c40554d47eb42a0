"""A large answer set is counted from the index, not read paper by paper (:data:`rag.decide.match.LARGE_SET`): the
papers the index's table of words as written shows to state every facet, in forms the matcher accepts, are counted
without being read, and the answer is the same set the matcher finds by reading every candidate. Checked on the
matcher's hand-made corpus (tests/test_match.py: acronyms, shorter forms, relational compounds, two facets, a facet's
words in one sentence) with every set made "large"."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.decide import match
from askpapers.rag.decide.match import FacetMatcher
from askpapers.rag.decide.membership import shipped
from tests.conftest import memory_app, with_filler
from tests.test_derived_nouns import NOUNS
from tests.test_loose_facets import PAPERS as LOOSE
from tests.test_match import FILLER, PAPERS
from tests.test_spellings import PAPERS as SPELLINGS

# words of one stem in other senses: "transformers" is not "transformation", "transform" or "transforms"
EXTRA = {
    "tf-series": ("Transformers for time series", "We forecast demand with transformers and attention."),
    "tf-vision": ("Vision transformer pretraining", "A vision transformer learns from masked patches."),
    "tf-tabular": ("Data transformation pipelines", "A learned transformation of tabular features helps boosting."),
    "tf-coding": ("Transform coding of images", "We transform images with learned transforms before compression."),
    # an acronym the papers define that stems to a word ("ATS": "at")
    "ts-def": ("Auxiliary series", "We generate auxiliary time series (ATS) to augment time series forecasting."),
    "ts-only": ("Augmented forecasts", "Forecasting models trained with ATS generalise to new sensors."),
    "ts-at": ("Failure modes", "Language models fail at long contexts and at arithmetic."),
    # British and American spellings, compounds written as one word, hyphenated or apart (tests/test_spellings.py)
    **SPELLINGS,
    # derived nouns asked alone ("sampling" is not stated by "samples"; tests/test_derived_nouns.py)
    **NOUNS,
    # a facet of a question with several is met by its words in one sentence, not spread (tests/test_loose_facets.py)
    **LOOSE,
}
QUESTIONS = [
    "Which papers build generative models with variational inference?",
    "Which papers use reinforcement learning for robotic manipulation?",
    "Which papers study language-guided navigation?",
    "Which papers study the safety of language models?",
    "Which papers study the safety of LLMs?",
    "Which papers use GANs for image generation?",
    "Which papers use generative adversarial networks for image generation?",
    "Which papers study retrieval-augmented generation with language models?",
    "Which papers use sim-to-real transfer for reinforcement learning policies?",
    "Which papers study exploration in deep RL?",
    "Which papers use machine unlearning?",
    "Which papers use the information bottleneck?",
    "Which papers use transformers?",
    "How many papers use reinforcement learning?",
    "Which papers use generative models?",
    "Which papers are about language models?",
    "Which papers use Bayesian optimization?",
    "Which papers use Bayesian optimisation?",
    "Which papers use finetuning?",
    "Which papers use fine-tuning?",
    "Which papers use time series?",
    "Which papers study sampling?",
    "Which papers study pre-training?",
    "Which papers study fine tuning?",
    "Which papers study language modeling?",
    "Which papers study relations?",
    "Which papers use large language models for code generation?",
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("large"), with_filler({**PAPERS, **EXTRA}, FILLER), embedder)


def test_a_large_set_is_the_set_of_reading_every_candidate(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    index = app.parts.index
    matcher = FacetMatcher(index, app.settings.answer, None, shipped())
    _same_set_counted_or_checked(app, matcher, monkeypatch)


def test_the_index_alone_finds_every_form_the_matcher_accepts(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no paper close enough in embedding space to meet a facet without stating it, every paper in a large
    set is counted by the index's words alone: British spellings too ("optimisation" of "optimization", which
    the stemmer puts under another stem)."""
    never = app.settings.answer.model_copy(update={"dense_with_terms": 1.01, "dense_alone": 1.01})
    _same_set_counted_or_checked(app, FacetMatcher(app.parts.index, never, None, shipped()), monkeypatch)


def _same_set_counted_or_checked(app: Any, matcher: FacetMatcher, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = {q: app.read(q) for q in QUESTIONS}
    every = {q: matcher.match(plans[q], None) for q in QUESTIONS}  # (small sets: every candidate is read)
    assert all(not m.unread for m in every.values())
    read: list[str] = []  # the papers checked one by one
    meets = matcher.meets

    def counted(p: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(p.paper_id)
        return meets(p, *args, **kwargs)

    monkeypatch.setattr(match, "LARGE_SET", 0)  # every set is large, and one paper fills its page
    monkeypatch.setattr(match, "PAGE_READ", 1)
    monkeypatch.setattr(matcher, "meets", counted)
    unread = 0
    for q in QUESTIONS:
        read.clear()
        got = matcher.match(plans[q], None)
        assert got.total == every[q].total > 0, q
        assert set(got.ids) == set(every[q].ids), q
        assert read and set(got.unread).isdisjoint(read), q  # counted, not checked
        assert {m.paper.paper_id for m in got} <= set(every[q].ids), q
        unread += len(got.unread)
        longer = matcher.match(plans[q], None, page=len(every[q]))  # (a list as long as the set reads it all)
        assert not longer.unread and set(longer.ids) == set(every[q].ids), q
    assert unread >= 20  # (most of the sets went unread)
    transformers = set(every["Which papers use transformers?"].ids)
    assert {"tf-series", "tf-vision"} <= transformers and not {"tf-tabular", "tf-coding"} & transformers
    assert {"bo-us", "bo-uk", "bo-uk2"} <= set(every["Which papers use Bayesian optimization?"].ids)
    assert not {"smp-n1", "smp-n2"} & set(every["Which papers study sampling?"].ids)
    assert "rel-n" not in every["Which papers study relations?"].ids
    code = set(every["Which papers use large language models for code generation?"].ids)
    assert {"cg-a", "cg-b"} <= code and not {"cg-n1", "cg-n2"} & code


def test_an_answer_counts_the_unread_papers_and_carries_their_ids(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    q = "How many papers use reinforcement learning?"
    whole = app.ask(q, mode="extractive", k=1000)
    monkeypatch.setattr(match, "LARGE_SET", 0)
    monkeypatch.setattr(match, "PAGE_READ", 1)
    got = app.ask(q, mode="extractive", k=2)
    assert got.total == whole.total >= 8
    assert f"**{whole.total} papers**" in got.text and f"Showing 2 of {whole.total} papers" in got.text
    assert set(got.matched_ids) == set(whole.matched_ids)
    assert len(got.citations) == 2 and {c.paper_id for c in got.citations} <= set(whole.matched_ids)
