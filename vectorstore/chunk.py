"""Split abstracts into overlapping sentence windows that fit the embedder's 256-token window.

A window holds up to ``max_sentences`` consecutive sentences and shares one sentence with the
next. A sentence too long for the model on its own is cut into word runs that fit, so nothing is
ever truncated by the model. Every chunk's text is a verbatim slice of the abstract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .text import sentence_spans
from .types import Chunk, Paper

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


def chunk_paper(
    paper: Paper,
    count: TokenCounter,
    *,
    max_tokens: int = 256,
    max_sentences: int = 3,
    prefix: str = "",
) -> list[Chunk]:
    """Sentence windows of one abstract; ``prefix`` (the title) counts against the token budget."""
    text = paper.abstract
    budget = max_tokens - 2 - (max(count([prefix])[0] - 2, 0) + 1 if prefix else 0)
    units: list[tuple[int, int]] = []
    spans = sentence_spans(text)
    for (s, e), n in zip(spans, count([text[s:e] for s, e in spans]), strict=True):
        if n - 2 > budget:
            units.extend(_split_long(text, s, e, budget, count))
        else:
            units.append((s, e))
    sizes = [n - 2 for n in count([text[s:e] for s, e in units])]
    windows: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j, total = i, 0
        while j < len(units) and j - i < max_sentences and (total + sizes[j] <= budget or j == i):
            total += sizes[j]
            j += 1
        windows.append((i, j))
        if j >= len(units):
            break
        i = j - 1 if j - i > 1 else j  # overlap one sentence with the next window
    chunks = []
    for pos, (a, b) in enumerate(windows):
        s, e = units[a][0], units[b - 1][1]
        chunks.append(Chunk(f"{paper.paper_id}:{pos}", paper.paper_id, pos, text[s:e], s, e))
    return chunks
