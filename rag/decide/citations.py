"""Checking a generated answer's citations against the papers it was given.

- markers whose number is not in the context are removed (and reported);
- the remaining markers are renumbered in order of first use, and ``citations`` lists exactly those papers;
- each citation's evidence is the sentence of that abstract closest to the claims that cite it (verbatim);
- answer sentences that cite nothing, or whose cited abstracts do not support them, are flagged. Support needs
  the claim's words to overlap one sentence of a cited abstract (or its embedding to be close to one), *and*, for
  an English answer, the claim's own words to be in the cited papers: a word of the sentence that is not in the
  question, not common English (``wordfreq``'s Zipf frequency below ``support_common_zipf``) and not one of the
  words summaries use to report on papers (:data:`REPORTING`), and that no cited paper's title, authors, venue or
  abstract holds (as a stem), makes the sentence unsupported: "… were all retracted for fraud [2]" is flagged
  however much of the rest of it the abstract holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from askpapers.rag.settings import AnswerSettings
from askpapers.rag.types import Citation
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.text import STOPWORDS, content_stems, sentence_spans, sentences, stem, stems, tokens
from askpapers.vectorstore.types import Paper

MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")  # any size: "[9999]" is removed and reported too
MIN_CLAIM_WORDS = 4  # shorter sentences ("See [1].") are not claims to check


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


# A marker with the blanks before it, so one that is dropped takes its space along ("images [7]." -> "images.").
_SPACED_MARKER = re.compile(r"(?<![ \t])([ \t]*)\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_NUMBER_SEP = re.compile(r"(?<!\s)\s*[,;]\s*")
_CITED = re.compile(r"\[(\d+)\]")


LONGEST_NUMBER = 18  # digits; a longer marker number is reported as 10**18 (it is out of range either way)


def _number(digits: str) -> int:
    return int(digits) if len(digits) <= LONGEST_NUMBER else 10**LONGEST_NUMBER


def _strip_markers(sentence: str) -> str:
    return _SPACED_MARKER.sub("", sentence).strip()


def renumber(text: str, valid: int, keep: bool = False) -> tuple[str, list[int], list[int]]:
    """Drop out-of-range numbers and renumber the rest by first use (with ``keep``, the rest keep their numbers).

    Returns the new text, the old numbers in their new order (with ``keep``: in first use), and the removed
    numbers.
    """
    order: list[int] = []
    removed: list[int] = []
    for m in MARKER.finditer(text):
        for part in _NUMBER_SEP.split(m.group(1)):
            n = _number(part)
            if 1 <= n <= valid:
                if n not in order:
                    order.append(n)
            elif n not in removed:
                removed.append(n)
    new_of = {old: old if keep else i for i, old in enumerate(order, start=1)}

    def repl(m: re.Match[str]) -> str:
        kept = [new_of[_number(p)] for p in _NUMBER_SEP.split(m.group(2)) if _number(p) in new_of]
        return m.group(1) + "".join(f"[{n}]" for n in kept) if kept else ""

    return _SPACED_MARKER.sub(repl, text), order, removed


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


# Words summaries use to report on papers ("X proposes / leverages / outperforms …"), whatever the abstract says:
# they need not be in it. Compared as stems. Every other rare word of a claim must be in a cited paper.
_REPORTING_WORDS = """
    propose introduce present leverage utilize utilise employ apply adopt achieve attain improve outperform surpass
    demonstrate show address tackle focus explore investigate examine study analyze analyse evaluate assess
    report describe provide offer highlight develop design aim consider discuss suggest find obtain yield reduce
    increase enhance extend incorporate integrate combine enable allow rely build establish formulate
    additionally furthermore moreover specifically notably overall similarly likewise whereas respectively
    particularly namely typically respective various several another approach approaches framework technique
    methodology paradigm strategy setting settings variant variants aspect aspects context contexts
"""
REPORTING = frozenset(stem(w) for w in _REPORTING_WORDS.split())


_JOINERS = re.compile(r"(?<=\w)[*_-]+(?=\w)")


@lru_cache(maxsize=50_000)
def _common(word: str, zipf: float) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") >= zipf


def novel_words(claim: str, question: str, cited: Sequence[Paper], common_zipf: float) -> list[str]:
    """Words of ``claim`` that no cited paper holds, and that neither the question, common English nor the words
    of a summary (:data:`REPORTING`) explain: each is something the claim adds (see the module text)."""
    have = set(stems(question)) | REPORTING
    for p in cited:
        text = " ".join([p.title, p.abstract, p.venue, *p.authors])
        # words split by emphasis ("**Sym**metric") or a hyphen ("multi-modal") count whole as well
        have.update(stems(text), stems(_JOINERS.sub("", text)))
    out: list[str] = []
    for word in tokens(claim):
        if word in STOPWORDS or not word.isalpha() or len(word) < 3 or stem(word) in have:
            continue
        if not _common(word, common_zipf) and word not in out:
            out.append(word)
    return out


class _Support:
    """How well each cited paper's sentences support each claim of the answer (lexically or semantically).

    Embeddings are made only when the words do not already show support: the claims once, and a paper's
    sentences the first time one of its claims needs them.
    """

    def __init__(
        self, claims: list[str], cited: Sequence[ContextPaper], embedder: Embedder | None, rule: AnswerSettings
    ):
        self.claims, self.rule, self.embedder = claims, rule, embedder
        self.sentences = {cp.paper.paper_id: sentences(cp.paper.abstract) for cp in cited}
        self.vecs: dict[str, np.ndarray] = {}
        self.claim_vecs: np.ndarray | None = None

    def _cosines(self, ci: int, pid: str) -> np.ndarray:
        if self.embedder is None or not self.sentences[pid]:
            return np.zeros(len(self.sentences[pid]), dtype=np.float32)
        if self.claim_vecs is None:
            self.claim_vecs = self.embedder.embed(self.claims)
        if pid not in self.vecs:
            self.vecs[pid] = self.embedder.embed(self.sentences[pid])
        return np.asarray(self.vecs[pid] @ self.claim_vecs[ci])

    def best(self, ci: int, pid: str) -> tuple[float, int]:
        """Best support a paper's sentences give claim ``ci``: (score, sentence index); 1.0 or more supports."""
        terms = set(content_stems(self.claims[ci]))
        lex = [len(terms & set(stems(s))) / max(len(terms), 1) / self.rule.support_lexical for s in self.sentences[pid]]
        if lex and max(lex) >= 1.0:  # the words show it: no embedding needed
            return max(lex), int(np.argmax(lex))
        cos = self._cosines(ci, pid) / self.rule.support_cosine
        scores = [max(a, float(b)) for a, b in zip(lex, cos, strict=True)]
        if not scores:
            return -1.0, 0
        return max(scores), int(np.argmax(scores))


def check(
    answer_text: str,
    context: Sequence[ContextPaper],
    embedder: Embedder | None,
    rule: AnswerSettings | None = None,
    keep_numbers: bool = False,
    question: str = "",
    english: bool = True,
) -> Checked:
    """The answer's citations checked against its context papers (see the module text). With ``keep_numbers``
    (a map-reduce answer, numbered over all the matching papers) valid markers keep their numbers, and
    ``citations`` lists the cited papers under those numbers, in number order. ``question`` (every wording of it)
    holds words a claim may use without a cited paper holding them; the claims' own words are checked only in an
    ``english`` answer (common-English frequencies are English ones)."""
    rule = rule or AnswerSettings()
    markup = count_markup(answer_text)
    text, order, removed = renumber(inert(answer_text), len(context), keep_numbers)
    if keep_numbers:
        order.sort()
    cited = [context[old - 1] for old in order]
    claims = _claims(text)
    cites_of = [[int(n) for n in _CITED.findall(c)] for c in claims]  # the citation numbers of each claim
    plain = [_strip_markers(c) for c in claims]
    support = _Support(plain, cited, embedder, rule)
    numbers = order if keep_numbers else list(range(1, len(cited) + 1))
    citations: list[Citation] = []
    for n, cp in zip(numbers, cited, strict=True):
        pid = cp.paper.paper_id
        scored = [support.best(ci, pid) for ci, nums in enumerate(cites_of) if n in nums]
        best_sent = max(scored, key=lambda x: x[0])[1] if scored else 0
        sents = support.sentences[pid]
        terms = content_stems(" ".join(plain[ci] for ci, nums in enumerate(cites_of) if n in nums))
        evidence = sents[best_sent] if sents else cp.paper.abstract
        citations.append(Citation.from_paper(n, cp.paper, evidence, cp.score, terms))
    by_number = {c.n: c for c in citations}
    paper_of = {n: cp.paper for n, cp in zip(numbers, cited, strict=True)}
    unsupported: list[str] = []
    if citations:
        for ci, claim in enumerate(plain):
            if len(content_stems(claim)) < MIN_CLAIM_WORDS or claim.endswith(":"):
                continue
            nums = [n for n in cites_of[ci] if n in by_number]
            weak = not nums or max(support.best(ci, by_number[n].paper_id)[0] for n in nums) < 1.0
            common = rule.support_common_zipf
            if weak or (english and novel_words(claim, question, [paper_of[n] for n in nums], common)):
                unsupported.append(claim)
    return Checked(text=text, citations=citations, removed=removed, unsupported=unsupported, markup=markup)
