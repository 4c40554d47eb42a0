"""A phrase is counted once per store revision for all the phrases FTS5 reads alike: its key is the terms FTS5's
own tokenizer makes of it, so phrases of one key state the same papers (the planner counts a spelling's word forms,
"generative models", "generative modelling", "generatively modeling", and at 50k papers half of its FTS5 counts
were of a form already counted)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from askpapers.rag.retrieve.chroma_index import PaperIndex
from askpapers.rag.settings import Settings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.lexical import LexicalIndex, phrase_key


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("generative models", "generatively modelling", True),
        ("Generative Modeling", "generative models", True),
        ("technology", "technologies", True),  # (PyStemmer's Porter: "technologi"; FTS5's: "technolog")
        ("state-of-the-art", "state of the art", True),
        ("café", "cafe", True),  # (unicode61 drops diacritics)
        ("as", "a", False),  # (FTS5 stems no word under three letters)
        ("graph networks", "networks graph", False),
        ("language models", "large language models", False),
    ],
)
def test_phrases_fts5_reads_alike_share_a_key(a: str, b: str, same: bool) -> None:
    assert (phrase_key(a) == phrase_key(b)) is same


def test_phrases_of_one_key_state_the_same_papers(corpus_settings: Settings, embedder: Embedder) -> None:
    """Over the bundled corpus's vocabulary, words of one key have one FTS5 count (a property of the key, checked
    on real text), and some keys have several words."""
    index = PaperIndex(corpus_settings.store, embedder)
    lexical: LexicalIndex = index.lexical
    groups: dict[str, list[str]] = defaultdict(list)
    for word, _ in lexical.vocabulary():
        groups[phrase_key(word)].append(word)
    shared = {k: ws for k, ws in groups.items() if len(ws) > 1}
    assert len(shared) > 50
    for key, words in shared.items():
        counts = {w: lexical.phrase_count(w) for w in words}
        assert len(set(counts.values())) == 1, (key, counts)


def test_forms_of_a_phrase_are_counted_once(
    corpus_settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[str] = []
    real = LexicalIndex.phrase_count

    def spy(self: LexicalIndex, phrase: str, filters: object = None) -> int:
        counted.append(phrase)
        return real(self, phrase)

    monkeypatch.setattr(LexicalIndex, "phrase_count", spy)
    index = PaperIndex(corpus_settings.store, embedder)
    forms = ["information bottleneck", "information bottlenecks", "Information Bottleneck"]
    got = [index.phrase_count(f) for f in forms]
    assert got[0] > 0 and len(set(got)) == 1
    assert counted == ["information bottleneck"]
    assert index.phrase_count("graph neural networks") == real(index.lexical, "graph neural networks")
    assert counted == ["information bottleneck", "graph neural networks"]
