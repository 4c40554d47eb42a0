"""Tests for vectorstore.chunk: sentence windows that fit the embedder's 256-token window."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest

from askpapers.vectorstore.chunk import TokenCounter, chunk_paper
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.text import sentence_spans
from askpapers.vectorstore.types import Chunk, Paper

DATA = Path(__file__).resolve().parent.parent / "data" / "icml2026"


@pytest.fixture(scope="module")
def count() -> TokenCounter:
    return Embedder(threads=1).count_tokens_batch


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    ps = parse_paths([DATA]).papers
    assert len(ps) == 38
    return ps


@pytest.fixture(scope="module")
def chunked(papers: list[Paper], count: TokenCounter) -> list[tuple[Paper, list[Chunk]]]:
    return [(p, chunk_paper(p, count)) for p in papers]


def test_counter_includes_cls_and_sep(count: TokenCounter) -> None:
    assert count(["", "hello"]) == [2, 3]


def test_chunks_are_verbatim_slices(chunked: list[tuple[Paper, list[Chunk]]]) -> None:
    for p, chunks in chunked:
        assert chunks
        for c in chunks:
            assert 0 <= c.start < c.end <= len(p.abstract)
            assert p.abstract[c.start : c.end] == c.text
            assert c.text == c.text.strip()


def test_chunks_fit_the_model_window(chunked: list[tuple[Paper, list[Chunk]]], count: TokenCounter) -> None:
    for _, chunks in chunked:
        assert max(count([c.text for c in chunks])) <= 256


@pytest.mark.parametrize("max_tokens", [48, 64, 100])
def test_chunks_fit_a_small_window(papers: list[Paper], count: TokenCounter, max_tokens: int) -> None:
    for p in papers:
        chunks = chunk_paper(p, count, max_tokens=max_tokens)
        assert all(p.abstract[c.start : c.end] == c.text for c in chunks)
        assert max(count([c.text for c in chunks])) <= max_tokens
        assert_covers_all_words(p.abstract, chunks)


def test_title_prefix_counts_against_the_budget(papers: list[Paper], count: TokenCounter) -> None:
    for p in papers:
        for max_tokens in (64, 256):
            chunks = chunk_paper(p, count, max_tokens=max_tokens, prefix=p.title)
            texts = [p.title + ". " + c.text for c in chunks]  # how the pipeline embeds them
            assert max(count(texts)) <= max_tokens, p.title


def test_overlapping_windows_share_one_sentence(papers: list[Paper], count: TokenCounter) -> None:
    checked = 0
    for p in papers:
        spans = sentence_spans(p.abstract)
        chunks = chunk_paper(p, count, max_sentences=3, overlap=1)
        if len(spans) <= 3:
            continue
        assert len(chunks) >= 2
        for prev, nxt in itertools.pairwise(chunks):
            assert nxt.start < prev.end, "consecutive chunks must overlap"
            assert prev.start < nxt.start and prev.end < nxt.end
            # the overlap is exactly one whole sentence: the last of prev, the first of next
            assert (nxt.start, prev.end) in spans
            shared = p.abstract[nxt.start : prev.end]
            assert prev.text.endswith(shared) and nxt.text.startswith(shared)
            checked += 1
    assert checked > 30


def test_at_most_max_sentences_per_chunk(papers: list[Paper], count: TokenCounter) -> None:
    for p in papers:
        spans = sentence_spans(p.abstract)
        for c in chunk_paper(p, count, max_sentences=3, overlap=1):
            inside = [s for s in spans if c.start <= s[0] and s[1] <= c.end]
            assert 1 <= len(inside) <= 3


def test_default_windows_are_as_large_as_fit_and_disjoint(
    chunked: list[tuple[Paper, list[Chunk]]], count: TokenCounter
) -> None:
    """By default each token is embedded once: windows do not overlap, and each is as full as it can be."""
    singles = 0
    for p, chunks in chunked:
        prefix_free = count([p.abstract])[0] <= 256
        if prefix_free:
            assert len(chunks) == 1 and chunks[0].text == p.abstract  # a short abstract is one chunk
            singles += 1
        for prev, nxt in itertools.pairwise(chunks):
            assert prev.end <= nxt.start, "default windows must not overlap"
            # the next window's first sentence would not have fitted in the previous one
            first = next(s for s in sentence_spans(p.abstract) if s[0] == nxt.start)
            assert count([p.abstract[prev.start : first[1]]])[0] > 256
    assert singles > 10


def test_chunks_cover_every_sentence(chunked: list[tuple[Paper, list[Chunk]]]) -> None:
    for p, chunks in chunked:
        spans = sentence_spans(p.abstract)
        for s, e in spans:
            assert any(c.start <= s and e <= c.end for c in chunks), p.abstract[s:e]
        assert chunks[0].start == spans[0][0]
        assert chunks[-1].end == spans[-1][1] == len(p.abstract)


def test_chunk_ids_and_positions(chunked: list[tuple[Paper, list[Chunk]]]) -> None:
    for p, chunks in chunked:
        assert [c.position for c in chunks] == list(range(len(chunks)))
        assert [c.chunk_id for c in chunks] == [f"{p.paper_id}:{i}" for i in range(len(chunks))]
        assert all(c.paper_id == p.paper_id for c in chunks)
        assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def test_short_abstract_is_one_chunk(count: TokenCounter) -> None:
    p = Paper("short", "T", "One sentence only. And a second one.")
    chunks = chunk_paper(p, count)
    assert len(chunks) == 1
    assert chunks[0].text == p.abstract
    assert (chunks[0].start, chunks[0].end) == (0, len(p.abstract))
    assert chunks[0].chunk_id == "short:0"


# --- pathological input -----------------------------------------------------------------------------


def word_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def assert_covers_all_words(text: str, chunks: list[Chunk]) -> None:
    """Every word lies in a chunk; a "word" glued across a sentence end ("costs.Existing") may lie in two."""
    for s, e in word_spans(text):
        assert all(any(c.start <= i < c.end for c in chunks) for i in range(s, e)), text[s:e]


def test_one_huge_sentence_is_split(count: TokenCounter) -> None:
    rng = random.Random(1234)
    vocab = ["alpha", "transformer", "regularisation", "x1", "over", "heteroscedastic", "of", "graph", "3.5"]
    words = [rng.choice(vocab) for _ in range(5000)]
    abstract = " ".join(words)
    p = Paper("huge", "Huge", abstract)
    chunks = chunk_paper(p, count)
    assert len(chunks) >= 10
    sizes = count([c.text for c in chunks])
    assert max(sizes) <= 256
    assert all(abstract[c.start : c.end] == c.text for c in chunks)
    assert [c.chunk_id for c in chunks] == [f"huge:{i}" for i in range(len(chunks))]
    assert_covers_all_words(abstract, chunks)
    # taken in order (without overlaps) the chunks give back every word exactly once
    seen: list[str] = []
    covered_to = 0
    for c in chunks:
        for s, e in word_spans(abstract):
            if c.start <= s and e <= c.end and s >= covered_to:
                seen.append(abstract[s:e])
        covered_to = max(covered_to, c.end)
    assert seen == words


def test_huge_sentence_between_normal_ones(count: TokenCounter) -> None:
    long_sentence = " ".join(f"token{i % 97} value" for i in range(800)) + "."
    abstract = f"We study a simple problem. {long_sentence} The results are clear. We release code."
    p = Paper("mix", "Mix", abstract)
    chunks = chunk_paper(p, count)
    assert max(count([c.text for c in chunks])) <= 256
    assert all(abstract[c.start : c.end] == c.text for c in chunks)
    assert chunks[0].text.startswith("We study a simple problem.")
    assert chunks[-1].text.endswith("We release code.")
    assert_covers_all_words(abstract, chunks)


def test_long_unspaced_token_is_cut_to_fit(count: TokenCounter) -> None:
    blob = "-".join(["b"] * 600) + "-" + "abcdefghijklmnopqrstuvwxyz" * 30
    abstract = f"Intro sentence here. The raw sequence is {blob} in full. Final sentence."
    p = Paper("blob", "Blob", abstract)
    chunks = chunk_paper(p, count)
    assert all(abstract[c.start : c.end] == c.text for c in chunks)
    assert max(count([c.text for c in chunks])) <= 256
