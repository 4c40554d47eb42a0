"""What a search result shows of its paper: the sentence that best matches the query, and whether the match is weak.

- **Snippet:** a whole sentence of the abstract, verbatim: the one that states most of the query's phrases and words,
  then the one inside the chunk the dense search matched, then the earliest. A sentence that holds a link (a
  code-availability line) is taken only when the abstract has no other. Display cuts it with :func:`clip`, at a word.
- **Weak:** the paper misses one of the query's topics (neither the phrase nor all its words; for a query
  without topics, it holds none of its content words) and its best chunk is not close in meaning either (cosine
  below the answerer's ``dense_alone``, the similarity at which a paper may match a topic it does not state).
  Such a result is only the nearest thing the corpus holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from askpapers.rag.decide.evidence import holds_words, sentence_words, states
from askpapers.vectorstore.text import content_stems, sentence_spans
from askpapers.vectorstore.types import Paper

_LINK = re.compile(r"https?://|www\.", re.IGNORECASE)
SNIPPET_MOST = 400  # characters of a snippet sentence kept in a Hit (cut at a word)


def clip(text: str, limit: int) -> str:
    """``text`` cut at the last word boundary within ``limit`` characters, with "…" when it was cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    if cut <= limit // 2:  # one enormous word: cut it, but say so
        cut = limit
    return text[:cut].rstrip(" ,;:") + "…"


def _cut(text: str, limit: int) -> str:
    """``text`` cut at a word within ``limit`` (no marker: the result stays a substring)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip()


def best_snippet(
    paper: Paper, terms: Sequence[str], phrases: Sequence[str] = (), within: str = "",
    sentence_stems: Sequence[frozenset[str]] | None = None,
) -> str:  # fmt: skip
    """The sentence of the abstract that best matches the query (verbatim; see the module docstring).

    ``sentence_stems``: the stems of each sentence of the abstract, in order, when the caller has them already
    (the reranker's per-paper data); they are computed here otherwise."""
    abstract = paper.abstract
    spans = sentence_spans(abstract)
    if not spans:
        return _cut(abstract, SNIPPET_MOST)
    if sentence_stems is None or len(sentence_stems) < len(spans):
        sentence_stems = [words for _, words in sentence_words(abstract)]
    want = set(terms)
    best, best_key = spans[0], (-1, -1, -1.0, -1, 0)
    for i, (s, e) in enumerate(spans):
        sent = abstract[s:e]
        key = (
            int(not _LINK.search(sent)),
            sum(states(sent, p) for p in phrases),
            len(want & sentence_stems[i]) / max(len(want), 1),
            int(bool(within) and sent in within),
            -i,
        )
        if key > best_key:
            best, best_key = (s, e), key
    return _cut(abstract[best[0] : best[1]], SNIPPET_MOST)


def is_weak(
    paper: Paper, terms: Sequence[str], topics: Sequence[Sequence[str]], similarity: float, floor: float
) -> bool:
    """Whether a result only comes nearest: it misses a topic of the query (each topic given by its spellings: a
    topic is stated by one of them as a phrase, or by all of its words; with no topics, the paper holds none of
    the query's content words) and its cosine to the query is below ``floor``."""
    if similarity >= floor:
        return False
    text = paper.abstract if paper.title_derived else f"{paper.title}. {paper.abstract}"
    if topics:
        return not all(any(states(text, s) or holds_words(text, s) for s in spellings) for spellings in topics)
    return not set(terms) & set(content_stems(text))
