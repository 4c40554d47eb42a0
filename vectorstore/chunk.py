"""Split abstracts into sentence windows that fit the embedder's 256-token window.

A window packs as many consecutive sentences as fit (at most ``max_sentences``); consecutive windows
share ``overlap`` sentences. A sentence too long for the model on its own is cut into word runs that
fit, so nothing is ever truncated by the model. Every chunk's text is a verbatim slice of the abstract.

The defaults (windows as large as the model takes, no overlap) make most abstracts a single chunk and
embed each token once: ingest then costs about what embedding each abstract once costs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from askpapers.vectorstore.text import sentence_spans
from askpapers.vectorstore.types import Chunk, Paper

TokenCounter = Callable[[Sequence[str]], list[int]]


def _halve(text: str, start: int, end: int, limit: int, count: TokenCounter) -> list[tuple[int, int]]:
    if end - start <= 1 or count([text[start:end]])[0] - 2 <= limit:
        return [(start, end)]
    mid = (start + end) // 2
    return _halve(text, start, mid, limit, count) + _halve(text, mid, end, limit, count)


def _split_long(text: str, start: int, end: int, limit: int, count: TokenCounter) -> list[tuple[int, int]]:
    """Cut text[start:end] at spaces into pieces of at most ``limit`` tokens."""
    pieces: list[tuple[int, int]] = []
    words: list[tuple[int, int]] = []
    pos = start
    for w in text[start:end].split(" "):
        if w:
            words.append((pos, pos + len(w)))
        pos += len(w) + 1
    counts = [c - 2 for c in count([text[s:e] for s, e in words])]
    i = 0
    while i < len(words):
        total, j = 0, i
        while j < len(words) and (total + counts[j] <= limit or j == i):
            total += counts[j]
            j += 1
        if total > limit:  # a single "word" longer than the window: halve it until each part fits
            pieces.extend(_halve(text, *words[i], limit, count))
        else:
            pieces.append((words[i][0], words[j - 1][1]))
        i = j
    return pieces


def _units(text: str, budget: int, count: TokenCounter, prefix: str) -> tuple[list[tuple[int, int]], list[int], int]:
    """Sentences (long ones cut to fit) with their token sizes, and the prefix's size (one tokenizer call)."""
    spans = sentence_spans(text)
    counts = count([prefix, *(text[s:e] for s, e in spans)])
    prefix_tokens = counts[0] - 2 + 1 if prefix else 0  # the ". " joining prefix and chunk
    budget -= prefix_tokens
    units: list[tuple[int, int]] = []
    sizes: list[int] = []
    for (s, e), n in zip(spans, counts[1:], strict=True):
        if n - 2 > budget:
            pieces = _split_long(text, s, e, budget, count)
            units.extend(pieces)
            sizes.extend(c - 2 for c in count([text[a:b] for a, b in pieces]))
        else:
            units.append((s, e))
            sizes.append(n - 2)
    return units, sizes, budget


def chunk_paper(
    paper: Paper,
    count: TokenCounter,
    *,
    max_tokens: int = 256,
    max_sentences: int = 0,
    overlap: int = 0,
    prefix: str = "",
) -> list[Chunk]:
    """Sentence windows of one abstract; ``prefix`` (the title) counts against the token budget.

    ``max_sentences`` 0 means as many as fit; ``overlap`` is the number of sentences a window shares with
    the next one (when the next window still advances).
    """
    text = paper.abstract
    units, sizes, budget = _units(text, max_tokens - 2, count, prefix)
    cap = max_sentences or len(units)
    windows: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j, total = i, 0
        while j < len(units) and j - i < cap and (total + sizes[j] <= budget or j == i):
            total += sizes[j]
            j += 1
        windows.append((i, j))
        if j >= len(units):
            break
        i = max(j - overlap, i + 1)
    chunks = []
    for pos, (a, b) in enumerate(windows):
        s, e = units[a][0], units[b - 1][1]
        chunks.append(Chunk(f"{paper.paper_id}:{pos}", paper.paper_id, pos, text[s:e], s, e))
    return chunks
