"""A word of two parts joined by a hyphen that the corpus does not state as a term is read as its two words typed
apart (``rag.read.resolve.unhyphenated``): "pruning-related papers" asks for the papers on pruning, as "pruning
related papers" does. It had been one unit no paper states, and the answer "No paper in the corpus matches
“pruning-related”" (29 conference dev topics asked "{x}-related papers": F1 0.31 against 0.82 asked plainly).
A word the corpus states as a term ("LLM-based") stays one.
"""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.read.cues import tokens
from askpapers.rag.read.query import plan
from askpapers.rag.read.resolve import MIN_TERM_PAPERS, unhyphenated
from tests.conftest import memory_app
from tests.test_clause_verbs import PRUNING
from tests.test_cohesion import FIELDS
from tests.test_query import DOCS, docs_lexicon

DISTILL = [
    "Knowledge distillation trains a small student from a large teacher.",
    "We study knowledge distillation for speech recognition.",
    "Knowledge distillation from ensembles improves calibration.",
    "A distillation-based method compresses detectors.",
]
CONTINUAL = [f"Continual learning of {w} without forgetting." for w in ("tasks", "classes", "domains")]
CONTINUAL += [f"Learning-based controllers for {w}." for w in ("drones", "cars", "arms")]
GANS = [f"We train a GAN to generate {w}." for w in ("faces", "rooms", "digits")]
GANS += [f"Image generation of {w} with diffusion." for w in ("faces", "scenes", "text")]
GANS += [f"Model-based {w}." for w in ("planning of image generation", "control of robots", "reinforcement learning")]
AGENTS = [f"LLM-based agents plan {w} tasks with tools." for w in ("web", "coding", "travel")]
# words a request puts after its topic with a hyphen, whatever the topic (generated frames: each is tried on each topic)
SUFFIXES = ["related", "based", "focused", "oriented", "centred", "themed", "driven", "inspired", "adjacent"]
OTHERS = [f"Related work on {f} is based on methods focused on {m}. Oriented and themed designs, driven and "
          f"inspired by {m}, centred on and adjacent to {f}." for f, m in FIELDS[:12]]  # fmt: skip


def lexicon() -> Any:
    return docs_lexicon([*DOCS, *PRUNING, *DISTILL, *CONTINUAL, *GANS, *AGENTS, *OTHERS])


def units(question: str, lex: Any) -> list[list[str]]:
    return [[a.lower() for a in f.alternatives] for f in plan(question, lex, weigh=False).facets]


def test_a_hyphenated_word_no_paper_states_is_read_as_its_words() -> None:
    lex = lexicon()
    assert lex.phrase_df("pruning-related") == 0 < lex.phrase_df("pruning")
    assert [t.text for t in unhyphenated(tokens("pruning-related papers"), lex)] == ["pruning", "related", "papers"]
    assert units("pruning-related papers", lex) == units("pruning related papers", lex) == [["pruning"]]


def test_a_hyphenated_word_few_papers_state_is_cut_from_the_term_before_it() -> None:
    """ "Which papers use knowledge distillation-based methods?": one paper says "distillation-based" (fewer than
    MIN_TERM_PAPERS, and a small share of those on distillation), three say "knowledge distillation"."""
    lex = lexicon()
    assert 0 < lex.phrase_df("distillation-based") < MIN_TERM_PAPERS <= lex.phrase_df("knowledge distillation")
    assert units("Which papers use knowledge distillation-based methods?", lex) == [["knowledge distillation"]]


def test_a_word_hyphenated_to_a_term_of_several_words_is_cut_from_it() -> None:
    """ "continual learning-based methods": "learning-based" is a term of the corpus, but the hyphen joins "based"
    to "continual learning", which no paper states with it."""
    lex = lexicon()
    assert lex.phrase_df("learning-based") >= MIN_TERM_PAPERS <= lex.phrase_df("continual learning")
    assert lex.phrase_df("continual learning-based") == 0
    read = units("any continual learning-based methods?", lex)
    assert read == units("any continual learning based methods?", lex)
    assert read[0] == ["continual learning"], read


def test_a_hyphenated_word_the_corpus_states_as_a_term_stays_one() -> None:
    lex = lexicon()
    assert lex.phrase_df("llm-based") >= MIN_TERM_PAPERS
    assert [t.text for t in unhyphenated(tokens("LLM-based agents"), lex)] == ["LLM-based", "agents"]
    assert "-" in units("Which papers study LLM-based agents?", lex)[0][0]


@pytest.mark.parametrize(
    ("question", "lead"),
    [("Which papers study GAN-based image generation?", "gan"), ("any GAN-based image generation?", "gan"),
     ("GAN-based image generation", "gan")],
)  # fmt: skip
def test_a_part_linked_by_a_hyphen_names_what_it_links(question: str, lead: str) -> None:
    """ "GAN-based image generation" is image generation with GANs: "GAN" and "image generation" are the facets, as
    typed apart ("GAN based image generation"), not "GAN-based" (which the papers on GANs rarely write)."""
    lex = lexicon()
    assert lex.phrase_df(f"{lead}-based image generation") == 0 < lex.phrase_df(lead)
    read = units(question, lex)
    assert read == units(question.replace("-", " "), lex) == [[lead], ["image generation"]], read


def test_a_part_linked_by_a_hyphen_to_a_common_word_stays_as_typed() -> None:
    """ "model-based": "model" alone carries no topic (in a large share of the papers), so the part stays."""
    lex = lexicon()
    assert lex.df("model") >= 0.15 * lex.size
    assert ["model-based"] in units("Which papers study model-based image generation?", lex)


def test_a_statement_keeps_its_hyphenated_words() -> None:
    """A statement (a claim to check) is all content: its rare hyphenated words are its terms. Cut apart, four SciFact
    claims ranked their papers lower ("Beta-band coherence is enhanced for visible stimuli …")."""
    lex = lexicon()
    assert lex.phrase_df("pruning-related") == 0 < lex.phrase_df("pruning") and lex.phrase_df("related") > 0
    assert not plan("Pruning-related sparsity speeds up inference.", lex).framed
    read = units("Pruning-related sparsity speeds up inference.", lex)
    assert any("pruning-related" in a for alts in read for a in alts), read


def test_names_and_words_the_corpus_does_not_know_are_left_as_typed() -> None:
    lex = lexicon()
    for word in ("ResNet-50", "GEM-FI", "x-ray", "fine-tuning", "sim-to-real"):
        assert [t.text for t in unhyphenated(tokens(word), lex)] == [word]


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("topic", ["pruning", "knowledge distillation"])
def test_hyphenated_or_typed_apart_the_topic_is_read_the_same(topic: str, suffix: str) -> None:
    """A metamorphic property over generated frames: when papers state the word after the topic but (almost) none
    with the topic, "{topic}-{word} papers" is read as "{topic} {word} papers"."""
    lex = lexicon()
    whole = f"{topic.split()[-1]}-{suffix}"
    assert lex.phrase_df(whole) < MIN_TERM_PAPERS and lex.phrase_df(suffix) > 0
    for frame in ("{t} papers", "Which papers are {t}?", "any {t} work?"):
        hyphenated = frame.format(t=f"{topic}-{suffix}")
        apart = frame.format(t=f"{topic} {suffix}")
        assert units(hyphenated, lex) == units(apart, lex), (hyphenated, apart)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    papers = {f"prune-{i}": (f"Pruning {i}", PRUNING[i % 5] + f" Variant {i}.") for i in range(10)}
    papers |= {f"field-{i}": (f.capitalize(), f"Related work is based on {m} focused on {f}.")
               for i, (f, m) in enumerate(FIELDS)}  # fmt: skip
    return memory_app(tmp_path_factory.mktemp("hyphens"), papers, embedder)


def test_the_answer_to_a_hyphenated_topic_is_the_answer_to_the_topic(app: Any) -> None:
    plain = {c.paper_id for c in app.ask("Which papers are on pruning?", mode="extractive").citations}
    assert plain == {f"prune-{i}" for i in range(10)}
    for question in ("pruning-related papers", "Any pruning-focused work?", "pruning-based methods, please"):
        answer = app.ask(question, mode="extractive")
        assert {c.paper_id for c in answer.citations} == plain, (question, answer.text[:200])


def test_the_last_word_of_a_part_linked_by_a_hyphen_leaves_the_term_before_it() -> None:
    """ "reinforcement learning-based robotic manipulation": the lead "reinforcement learning-based" (a term some
    papers write) is reinforcement learning (on the conference dev pool, the answer had been every paper on robotic
    manipulation, F1 0.22; now the 130 on both, F1 0.77, as "... for robotic manipulation")."""
    from askpapers.rag.read.parse import Unit
    from askpapers.rag.read.resolve import _linked_part

    lex = lexicon()
    assert lex.phrase_df("continual learning") >= MIN_TERM_PAPERS
    part = _linked_part(Unit(["continual", "learning-based"], ["continual", "learning-based"]), lex)
    assert (part.words, part.shown) == (["continual", "learning"], ["continual", "learning"])


SUBJECTS = [
    "birds", "cars", "flowers", "dogs", "aircraft", "fungi", "insects", "textures", "logos", "sketches", "satellites",
    "cells", "x-rays", "fonts", "coins", "shoes", "chairs", "fish", "leaves", "rocks", "boats", "trains", "lamps",
    "clocks", "signs", "paintings", "mushrooms", "butterflies", "snakes", "cats", "horses", "tools",
]  # fmt: skip
WITH_TRANSFORMERS = {f"fs-{i}" for i in range(8)}  # the few-shot papers that also use transformers


def cohesion_papers() -> dict[str, tuple[str, str]]:
    """Papers on few-shot classification (a topic: their texts are alike), some with transformers; papers on
    transformers for other fields; and papers on every field claiming the state-of-the-art (spread)."""
    out = {f"fs-{i}": (f"Few-shot {s}", f"Few-shot classification of {s} from five labelled examples"
                       + (" with vision transformers." if f"fs-{i}" in WITH_TRANSFORMERS else " per class."))
           for i, s in enumerate(SUBJECTS)}  # fmt: skip
    out |= {f"tf-{i}": (f"Transformers {i}", f"Transformers for {f} with {m}.") for i, (f, m) in enumerate(FIELDS[:6])}
    out |= {f"sota-{i}": (f.capitalize(), f"We set a new state-of-the-art in {f} with {m}.")
            for i, (f, m) in enumerate(FIELDS)}  # fmt: skip
    return out


@pytest.fixture(scope="module")
def cohesive_app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("hyphen-cohesion"), cohesion_papers(), embedder)


def test_a_hyphenated_topic_whose_papers_cohere_is_weighed_as_typed_apart(cohesive_app: Any) -> None:
    """The topicality model weighs a hyphenated word as a word of the request ("few-shot" 0.004 beside "federated
    learning" on the conference dev pool, "few shot" 0.99; 0.02 here), so "few-shot learning with transformers"
    cited every paper on transformers. Its papers cohere, so it is weighed as typed apart, and gates."""
    from askpapers.rag.read.resolve import COHESIVE

    lexicon = cohesive_app.parts.lexicon
    few_shot = lexicon.cohesion("few-shot")
    assert few_shot is not None and few_shot >= COHESIVE, few_shot
    question = "Which papers use few-shot learning with transformers?"  # (no paper says "few-shot learning")
    gated = sorted(f.alternatives[0].lower() for f in cohesive_app.read(question).facets if not f.optional)
    assert gated == ["few-shot", "transformers"], cohesive_app.read(question).facets
    cited = {c.paper_id for c in cohesive_app.ask(question, mode="extractive", k=1000).citations}
    assert cited == WITH_TRANSFORMERS, cited


def test_a_hyphenated_phrase_of_the_writing_still_only_ranks(cohesive_app: Any) -> None:
    from askpapers.rag.read.resolve import COHESIVE

    lexicon = cohesive_app.parts.lexicon
    spread = lexicon.cohesion("state-of-the-art")
    assert spread is not None and spread < COHESIVE, spread
    question = "Show me the state-of-the-art in transformers"
    gated = [f.alternatives[0].lower() for f in cohesive_app.read(question).facets if not f.optional]
    assert gated == ["transformers"], cohesive_app.read(question).facets
