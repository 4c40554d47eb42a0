"""Checking a generated answer's citations against the papers it was given.

- markers whose number is not in the context are removed (and reported);
- the remaining markers are renumbered in order of first use, and ``citations`` lists exactly those papers;
- each citation's evidence is the sentence of that abstract closest to the claims that cite it (verbatim);
- answer sentences that cite nothing, or whose cited abstracts do not support them, are flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from vectorstore.embed import Embedder
from vectorstore.text import content_stems, sentence_spans, stems
from vectorstore.types import Paper

from .types import Citation

MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
SUPPORT_LEXICAL = 0.3  # share of a claim's content words found in one sentence of a cited abstract
SUPPORT_COSINE = 0.55  # or: embedding similarity of the claim to one sentence of a cited abstract
_MIN_CLAIM_WORDS = 4


@dataclass
class ContextPaper:
    n: int
    paper: Paper
    score: float = 0.0
    passages: list[str] = field(default_factory=list)


@dataclass
class Checked:
    text: str
    citations: list[Citation]
    removed: list[int]
    unsupported: list[str]
    markup: int = 0  # images and raw HTML elements in the model's text (shown as text, never loaded)


def _claims(text: str) -> list[str]:
    """Sentences of the answer (list items and lines count as separate sentences)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*#>0123456789. ").strip()
        if line:
            out.extend(line[s:e] for s, e in sentence_spans(line))
    return out


def _strip_markers(sentence: str) -> str:
    return MARKER.sub("", sentence).strip()


def renumber(text: str, valid: int) -> tuple[str, list[int], list[int]]:
    """Drop out-of-range numbers and renumber the rest by first use.

    Returns the new text, the old numbers in their new order, and the removed numbers.
    """
    order: list[int] = []
    removed: list[int] = []
    for m in MARKER.finditer(text):
        for part in re.split(r"\s*[,;]\s*", m.group(1)):
            n = int(part)
            if 1 <= n <= valid:
                if n not in order:
                    order.append(n)
            elif n not in removed:
                removed.append(n)
    new_of = {old: i for i, old in enumerate(order, start=1)}

    def repl(m: re.Match[str]) -> str:
        nums = [int(p) for p in re.split(r"\s*[,;]\s*", m.group(1))]
        kept = [new_of[n] for n in nums if n in new_of]
        return "".join(f"[{n}]" for n in kept)

    new_text = MARKER.sub(repl, text)
    new_text = re.sub(r"[ \t]+([.,;:])", r"\1", new_text)  # " ." left where a marker was removed
    return new_text, order, removed


_MARKUP_START = re.compile(r"([\\<!])")


def inert(text: str) -> str:
    """Model Markdown in which no raw HTML and no image can form, for any Markdown reader.

    Every ``<`` and ``!`` is backslash-escaped (CommonMark renders ``\\<`` and ``\\!`` as the characters
    themselves), and so is every backslash, so an escape the model wrote cannot cancel ours. Links, emphasis,
    lists and ``[n]`` markers are untouched. The web app's renderer does not rely on this: it renders with
    HTML and images off and sanitises with an allow-list; this protects other readers of ``Answer.text``.
    """
    return _MARKUP_START.sub(r"\\\1", text)


def count_markup(text: str) -> int:
    """Images and raw HTML elements in a model's Markdown, as a full Markdown reader would see them.

    Only counted, for the answer's notice: nothing is removed here. Every renderer treats the text as untrusted
    (the web app's renders with HTML and images off, then sanitises with an allow-list), so such markup shows as
    text and is never loaded.
    """
    from markdown_it import MarkdownIt

    n = 0
    stack = list(MarkdownIt("commonmark", {"html": True}).parse(text))
    while stack:
        tok = stack.pop()
        n += tok.type in ("image", "html_inline", "html_block")
        stack.extend(tok.children or [])
    return n


def check(answer_text: str, context: Sequence[ContextPaper], embedder: Embedder | None) -> Checked:
    markup = count_markup(answer_text)
    text, order, removed = renumber(inert(answer_text), len(context))
    cited = [context[old - 1] for old in order]
    claims = _claims(text)
    sentences = {
        cp.paper.paper_id: [cp.paper.abstract[s:e] for s, e in sentence_spans(cp.paper.abstract)] for cp in cited
    }
    # claims per citation number
    cites_of: list[list[int]] = [[int(n) for n in re.findall(r"\[(\d+)\]", c)] for c in claims]
    plain = [_strip_markers(c) for c in claims]
    vecs: dict[str, np.ndarray] = {}
    if embedder is not None and cited:
        all_sents = [s for cp in cited for s in sentences[cp.paper.paper_id]]
        mat = embedder.embed([*plain, *all_sents])
        claim_vecs, sent_vecs = mat[: len(plain)], mat[len(plain) :]
        offset = 0
        for cp in cited:
            n = len(sentences[cp.paper.paper_id])
            vecs[cp.paper.paper_id] = sent_vecs[offset : offset + n]
            offset += n
    else:
        claim_vecs = np.zeros((len(plain), 1), dtype=np.float32)

    def support(ci: int, pid: str) -> tuple[float, int]:
        """Best support a paper's sentences give claim ``ci``: (score, sentence index)."""
        terms = set(content_stems(plain[ci]))
        best, best_i = -1.0, 0
        for si, sent in enumerate(sentences[pid]):
            lex = len(terms & set(stems(sent))) / max(len(terms), 1)
            cos = float(vecs[pid][si] @ claim_vecs[ci]) if pid in vecs else 0.0
            score = max(lex / SUPPORT_LEXICAL, cos / SUPPORT_COSINE)
            if score > best:
                best, best_i = score, si
        return best, best_i

    citations: list[Citation] = []
    for new_n, cp in enumerate(cited, start=1):
        pid = cp.paper.paper_id
        using = [ci for ci, nums in enumerate(cites_of) if new_n in nums]
        best_score, best_sent = -1.0, 0
        for ci in using:
            score, si = support(ci, pid)
            if score > best_score:
                best_score, best_sent = score, si
        evidence = sentences[pid][best_sent] if sentences[pid] else cp.paper.abstract
        citations.append(
            Citation(
                n=new_n,
                paper_id=pid,
                title=cp.paper.title,
                evidence=evidence,
                abstract=cp.paper.abstract,
                score=round(cp.score, 4),
                venue=cp.paper.venue,
                url=cp.paper.url,
                code_urls=list(cp.paper.code_urls),
                year=cp.paper.year,
            )
        )
    unsupported: list[str] = []
    if citations:
        for ci, claim in enumerate(plain):
            if len(content_stems(claim)) < _MIN_CLAIM_WORDS or claim.endswith(":"):
                continue
            nums = [n for n in cites_of[ci] if 1 <= n <= len(citations)]
            if not nums:
                unsupported.append(claim)
                continue
            if max(support(ci, citations[n - 1].paper_id)[0] for n in nums) < 1.0:
                unsupported.append(claim)
    return Checked(text=text, citations=citations, removed=removed, unsupported=unsupported, markup=markup)
