"""Tests for vectorstore.text: verbatim sentence spans and phrase/term matching."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.terms import same_term
from askpapers.vectorstore.text import (
    STOPWORDS,
    contains_phrase,
    content_stems,
    normalise,
    one_line,
    phrase_forms,
    sentence_spans,
    sentences,
    stem,
    tokens,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "icml2026"


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    return [p.abstract for p in parse_paths([DATA]).papers]


def assert_valid_spans(text: str, spans: list[tuple[int, int]]) -> None:
    prev_end = 0
    for s, e in spans:
        assert prev_end <= s < e <= len(text)
        piece = text[s:e]
        assert piece == piece.strip()
        assert piece
        prev_end = e


# --- sentences --------------------------------------------------------------------------------


def test_sentence_spans_are_verbatim_slices() -> None:
    text = "  First sentence here.  Second one!\nThird one? Fourth (final) one.  "
    spans = sentence_spans(text)
    assert_valid_spans(text, spans)
    assert [text[s:e] for s, e in spans] == [
        "First sentence here.",
        "Second one!",
        "Third one?",
        "Fourth (final) one.",
    ]
    assert sentences(text) == [text[s:e] for s, e in spans]


def test_bundled_abstracts_split_into_verbatim_sentences(abstracts: list[str]) -> None:
    assert len(abstracts) == 38
    for a in abstracts:
        spans = sentence_spans(a)
        assert len(spans) >= 3
        assert_valid_spans(a, spans)
        assert spans[0][0] == 0
        assert spans[-1][1] == len(a)
        # nothing but whitespace falls between sentences (nothing at all where an export dropped the space)
        for (_, e), (s, _) in itertools.pairwise(spans):
            assert e <= s and not a[e:s].strip()


def test_abbreviations_do_not_split() -> None:
    text = (
        "We compare A vs. B on ImageNet, e.g. ResNet and ViT, i.e. The usual backbones. "
        "As shown by Smith et al. Transformers scale well. The final accuracy is 0.970 on CIFAR."
    )
    assert sentences(text) == [
        "We compare A vs. B on ImageNet, e.g. ResNet and ViT, i.e. The usual backbones.",
        "As shown by Smith et al. Transformers scale well.",
        "The final accuracy is 0.970 on CIFAR.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Results improve from 0.970 to 0.985 in F1.",
        "See e.g. Appendix B for details.",
        "This is cheap, i.e. It costs 3.5 GPU hours.",
        "Our method vs. The baseline wins.",
        "Prior work (Lee et al. 2021) uses 1.5B parameters.",
    ],
)
def test_no_split_inside(text: str) -> None:
    assert sentences(text) == [text]


def test_splits_after_numbers_and_before_digits() -> None:
    assert sentences("Accuracy reaches 0.970. 12 datasets are used.") == [
        "Accuracy reaches 0.970.",
        "12 datasets are used.",
    ]


def test_no_split_before_lowercase() -> None:
    assert sentences("We use approx. ten runs. The end.") == ["We use approx. ten runs.", "The end."]


def test_empty_and_blank_text() -> None:
    assert sentence_spans("") == []
    assert sentence_spans("   \n ") == []


def test_closing_quote_or_bracket_stays_with_its_sentence() -> None:
    assert sentences('He asked "why?" The answer is no.') == ['He asked "why?"', "The answer is no."]
    assert sentences("Gains are large (up to 3 points.) Next we test.") == [
        "Gains are large (up to 3 points.)",
        "Next we test.",
    ]


def test_normalise_and_one_line() -> None:
    assert normalise("a\r\nb\rc\u00a0d\ufeff\te") == "a\nb\nc d e"
    assert normalise("ｆｕｌｌwidth") == "fullwidth"
    assert one_line("  a \n\n b\t c  ") == "a b c"


# --- phrase matching --------------------------------------------------------------------------


def matches(haystack: str, phrase: str) -> bool:
    return contains_phrase(phrase_forms(haystack), phrase)


@pytest.mark.parametrize(
    ("haystack", "phrase"),
    [
        ("Vision-Language Models (VLMs) frequently suffer from errors.", "vision-language models"),
        ("Vision-Language Models (VLMs) frequently suffer from errors.", "vision language models"),
        ("We evaluate vision language models on charts.", "vision-language models"),
        ("We evaluate visionlanguage models on charts.", "vision-language models"),
        ("Multi-modal clustering integrates sources.", "multimodal"),
        ("A multimodal large language model.", "multi-modal"),
        ("A multimodal large language model.", "multimodal"),
        ("Auxiliary behaviors in recommender systems help.", "recommender system"),
        ("A recommender system for news.", "recommender systems"),
        ("LLMs can be seen as knowledge bases.", "LLM"),
        ("An LLM can be seen as a knowledge base.", "LLMs"),
        ("Training GNNs is hard.", "GNN"),
        ("Weather forecasting models are improving.", "weather forecasting"),
        ("Time-series forecasting plays a role.", "time series forecasting"),
        ("We study learning rates.", "learning rate"),
    ],
)
def test_contains_phrase_matches_variants(haystack: str, phrase: str) -> None:
    assert matches(haystack, phrase)


@pytest.mark.parametrize(
    ("haystack", "phrase"),
    [
        ("We apply forecasting for weather, traffic and energy.", "weather forecasting"),
        ("Language models for vision tasks.", "vision-language models"),
        ("A network of sensors.", "net"),
        ("We write a paragraph.", "graph"),
        ("Recommender engines and system design.", "recommender system"),
        ("Anything at all.", ""),
    ],
)
def test_contains_phrase_rejects_non_matches(haystack: str, phrase: str) -> None:
    assert not matches(haystack, phrase)


def test_phrase_forms_hyphen_split_and_joined() -> None:
    forms = phrase_forms("Vision-Language Models")
    assert " vision languag model " in forms
    assert " visionlanguag model " in forms
    assert phrase_forms("") == set()


def test_stem_acronym_plurals() -> None:
    assert stem("llms") == stem("llm") == "llm"
    assert stem("vlms") == "vlm"
    assert stem("gnns") == "gnn"
    assert stem("models") == stem("model")


# --- content stems ----------------------------------------------------------------------------


def test_content_stems_drop_stopwords() -> None:
    out = content_stems("The models of the world are learning in this paper, and we use a GNN.")
    assert out == ["model", "world", "learn", "gnn"]
    assert not set(out) & STOPWORDS


def test_content_stems_dedup_and_order() -> None:
    assert content_stems("Graphs, graph and GRAPH networks; networks!") == ["graph", "network"]


def test_content_stems_keep_digits_drop_single_letters() -> None:
    assert content_stems("a b c 3 x 42 models") == ["3", "42", "model"]


def test_content_stems_only_stopwords() -> None:
    assert content_stems("we propose this and that in the paper") == ["propos"]
    assert content_stems("of the and to in") == []


def test_acronym_definitions() -> None:
    from askpapers.vectorstore.text import acronym_definitions

    text = "Hypergraph Neural Networks (HNNs) model it. We use multimodal large language models (MLLMs) and x (Y)."
    assert acronym_definitions(text) == [
        ("Hypergraph Neural Networks", "HNN"),
        ("multimodal large language models", "MLLM"),
    ]
    # the long form is among the seven words before the parenthesis, and stops at punctuation
    assert acronym_definitions("Unlike CNNs, graph neural networks (GNNs) pass messages.") == [
        ("graph neural networks", "GNN")
    ]
    eight = "one two three four five six seven-eight nine (SEN)"
    assert acronym_definitions(eight) == [("seven-eight nine", "SEN")]
    assert acronym_definitions("a b c d e f g h (ABCDEFGH)") == []  # only seven words are looked at
    assert acronym_definitions("(AB) at the start, then(CD) glued") == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("policy", "policies"), ("study", "studies"), ("study", "studied"), ("study", "studying"),
        ("strategy", "strategies"), ("apply", "applied"), ("robot", "robotic"), ("jailbreak", "jailbreaks"),
        ("differential", "differentially"), ("privacy", "private"), ("optimisation", "optimization"),
    ],
)  # fmt: skip
def test_one_term_in_its_inflections_and_derivations(a: str, b: str) -> None:
    assert same_term(a, b) and same_term(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [("conformal", "conformer"), ("conformal", "conformation"), ("general", "generative"), ("polic", "policy")],
)
def test_words_that_only_share_a_stem_are_different_terms(a: str, b: str) -> None:
    assert not same_term(a, b) and not same_term(b, a)


def test_stems_come_from_pystemmer_and_equal_the_pure_python_snowball_stemmer() -> None:
    """PyStemmer (C) replaced the pure-Python ``snowballstemmer``: the same English algorithm, so the same stem for
    every word of the bundled corpus (``bench.stemmer`` checks the 54k-paper conference corpus the same way)."""
    import snowballstemmer
    import Stemmer

    from askpapers.vectorstore import text

    assert isinstance(text._stemmer(), Stemmer.Stemmer)
    papers = parse_paths([DATA]).papers
    words = sorted({w for p in papers for w in tokens(f"{p.title} {p.abstract}")} | {"generalization", "policies"})
    assert len(words) > 1000
    expected = snowballstemmer.stemmer("english").stemWords(words)
    assert text._stemmer().stemWords(words) == expected
    plural = text._ACRONYM_PLURAL
    assert [stem(w) for w in words] == [
        snowballstemmer.stemmer("english").stemWord(w[:-1]) if len(w) > 2 and plural.fullmatch(w) else e
        for w, e in zip(words, expected, strict=True)
    ]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_tokens_are_the_unicode_rules_tokens(text: str) -> None:
    """ASCII text takes a faster pattern; its tokens are the ones the Unicode rule ([^\\W_]+) gives."""
    assert tokens(text) == re.findall(r"[^\W_]+", text.lower())


def test_tokens_of_non_ascii_text_keep_letters_of_any_script() -> None:
    assert tokens("Naïve Bayes für Graphen, ε-greedy_x 3D") == [
        "naïve",
        "bayes",
        "für",
        "graphen",
        "ε",
        "greedy",
        "x",
        "3d",
    ]
