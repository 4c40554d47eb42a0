"""The per-paper text data the reranker's text features read (:class:`DocText`), derived once, at ingest.

A paper's stems, sentence boundaries, phrase forms and acronym definitions do not depend on the question, so they
are computed when the paper enters the derived lexical index (:mod:`vectorstore.lexical`, beside its FTS5 row) and
stored there, compressed (:func:`encode`); the query path decodes them (:meth:`DocText.decode`), which is a few
splits, never a tokeniser or a stemmer, and builds no set of the paper's words: the features search its stems.
``DocText(title, abstract)`` builds the same object from the text (the oracle the tests compare the stored data
with).
"""

from __future__ import annotations

import zlib

from askpapers.vectorstore.text import JOIN_HYPHEN, acronym_definitions, sentence_spans, stem, stems
from askpapers.vectorstore.text import tokens as word_tokens


def _forms(text: str, words: list[str]) -> tuple[str, str]:
    """The two phrase forms of ``text`` (as :func:`~vectorstore.text.phrase_forms` makes them), given the stems of
    its words, unpadded: its words' stems, and those of the text with hyphenated compounds joined ("" when it has
    none, or when joining them changes nothing)."""
    if "-" in text or "\u2010" in text or "\u2011" in text:  # (what phrase_forms joins)
        low = text.lower()
        joined = JOIN_HYPHEN.sub("", low)
        if joined != low:
            return " ".join(words), " ".join(stems(joined))
    return " ".join(words), ""


def _nul_join(*forms: str) -> str:
    """Forms padded with a blank each side, NUL-joined (one substring test per n-gram), without empty ones or
    repeats. (A loop: with two forms a paper, and two calls per paper decoded, the generator and dict it replaced
    were a sixth of a decode.)"""
    out: list[str] = []
    for f in forms:
        if f.strip():
            padded = f" {f} "
            if padded not in out:
                out.append(padded)
    return "\0".join(out)


class DocText:
    """What the text features need from one paper.

    Its stems are kept as one blank-joined string inside :attr:`forms` (the title's words then the abstract's,
    padded with a blank each side), with the (start, end) of each sentence's words in it (:attr:`segments`): a
    word is tested with a bounded substring search (:meth:`find`), so decoding builds no set of a paper's words.
    The sets (:attr:`sent_stems`, :attr:`title_stems`, :attr:`all_stems`) are built when first read."""

    FIELDS = ("acro", "all_stems", "forms", "n_tok", "sent_stems", "title_forms", "title_stems", "upper")
    __slots__ = ("_abstract", "_sets", "acro", "forms", "n_tok", "segments", "title_forms", "title_segment",
                 "words_end")  # fmt: skip

    acro: list[tuple[str, str]]
    forms: str
    n_tok: int
    segments: list[tuple[int, int]]  # each sentence's words in ``forms``, in order, then the title's (if any)
    title_forms: str
    title_segment: tuple[int, int] | None  # the title's words in ``forms`` (None when the paper has no title)
    words_end: int  # where the stems end in ``forms`` (0: no words)

    def __init__(self, title: str, abstract: str) -> None:
        self._fill(abstract, *_parts(title, abstract))

    def _fill(self, abstract: str, title: bool, title_words: list[str], sentences: list[list[str]],
              alt: str, title_alt: str, acro: list[tuple[str, str]]) -> None:  # fmt: skip
        words = title_words + [w for sentence in sentences for w in sentence]
        self._fill_words(abstract, title, len(title_words), [len(s) for s in sentences], words, " ".join(words), alt,
                         title_alt, acro)  # fmt: skip

    def _fill_words(self, abstract: str, title: bool, n_title: int, counts: list[int], words: list[str],
                    joined: str, alt: str, title_alt: str, acro: list[tuple[str, str]]) -> None:  # fmt: skip
        """``words``: the stems of the title's then the abstract's words (``counts`` a sentence), and ``joined`` the
        same blank-joined (the stored data's second line is that string: decoding need not join its words again)."""
        self.forms = _nul_join(joined, alt)
        self.words_end = len(joined) + 2 if joined.strip() else 0
        # each segment runs from the blank before its first word to the blank after its last (both included)
        lens = list(map(len, words))
        bounds: list[tuple[int, int]] = []
        pos, at = 0, 0
        for n in [n_title, *counts]:
            width = sum(lens[at : at + n]) + n
            bounds.append((pos, pos + width + 1) if n else (0, 0))
            pos += width
            at += n
        title_seg = bounds.pop(0)
        self.segments = [*bounds, title_seg] if title else bounds
        self.title_segment = title_seg if title else None
        self.title_forms = _nul_join(" ".join(words[:n_title]), title_alt) if title else ""
        self.acro = acro
        self.n_tok = sum(counts)
        self._abstract = abstract
        self._sets: tuple[list[frozenset[str]], frozenset[str], frozenset[str]] | None = None

    def find(self, padded: str, segment: tuple[int, int] | None = None) -> bool:
        """Whether the paper has this stem (given padded with a blank each side: " stem "): anywhere, or in one
        segment."""
        start, end = segment if segment is not None else (0, self.words_end)
        return self.forms.find(padded, start, end) >= 0

    def _stem_sets(self) -> tuple[list[frozenset[str]], frozenset[str], frozenset[str]]:
        if self._sets is None:
            forms = self.forms
            sent = [frozenset(forms[s:e].split()) for s, e in self.segments]
            title = sent[-1] if self.title_segment is not None else frozenset()
            self._sets = (sent, title, frozenset().union(*sent) if sent else frozenset())
        return self._sets

    @property
    def sent_stems(self) -> list[frozenset[str]]:
        """The stems of each sentence, in order, then the title's (if any)."""
        return self._stem_sets()[0]

    @property
    def title_stems(self) -> frozenset[str]:
        return self._stem_sets()[1]

    @property
    def all_stems(self) -> frozenset[str]:
        return self._stem_sets()[2]

    @property
    def word_stems(self) -> list[str]:
        """The stems of the title's then the abstract's words, in order (those of "title. abstract" as tokenised)."""
        return self.forms[1 : self.words_end - 1].split() if self.words_end else []

    @property
    def upper(self) -> str:
        return self._abstract.upper()

    @classmethod
    def decode(cls, data: bytes, abstract: str) -> DocText:
        """The text data :func:`encode` stored for a paper with this abstract (no tokenising or stemming)."""
        lines = zlib.decompress(data).decode("utf-8").split("\n")
        head = lines[0].split()
        title = head[0] != "-"
        n_title = int(head[0]) if title else 0
        acro = [(lf, a) for lf, _, a in (line.partition("\t") for line in lines[4:])]
        dt = cls.__new__(cls)
        dt._fill_words(abstract, title, n_title, list(map(int, head[1:])), lines[1].split(), lines[1], lines[2],
                       lines[3], acro)  # fmt: skip
        return dt


def _parts(title: str, abstract: str) -> tuple[bool, list[str], list[list[str]], str, str, list[tuple[str, str]]]:
    """What :class:`DocText` is made of: whether there is a title, the title's stems, each sentence's stems, the
    joined-hyphen forms of "title. abstract" and of the title, and the acronyms the abstract defines."""
    # Each word is tokenised and stemmed once. The abstract's words are its sentences' words, in order (sentences
    # are separated by blanks only, and lower-casing does not look across blanks), and the words of "title.
    # abstract" are the title's then the abstract's: the phrase forms reuse them.
    sentences = [list(map(stem, word_tokens(abstract[s:e]))) for s, e in sentence_spans(abstract)]
    title_words = list(map(stem, word_tokens(title))) if title else []
    words = [w for sentence in sentences for w in sentence]
    _, alt = _forms(f"{title}. {abstract}" if title else abstract, title_words + words)
    _, title_alt = _forms(title, title_words) if title else ("", "")
    acro = [(" " + " ".join(stems(lf)) + " ", a.lower()) for lf, a in acronym_definitions(abstract)]
    return bool(title), title_words, sentences, alt, title_alt, acro


def encode(title: str, abstract: str) -> bytes:
    """A paper's text data, compressed, for the lexical index: decoded by :meth:`DocText.decode` to what
    ``DocText(title, abstract)`` builds. Lines: the title's word count ("-" for no title) and each sentence's;
    the stems of the title's then the abstract's words; the two joined-hyphen forms; one line per acronym
    definition (long form's stems, TAB, acronym). Stems hold letters and digits only, acronyms letters, digits and
    hyphens, so blanks, tabs and line breaks separate them unambiguously."""
    has_title, title_words, sentences, alt, title_alt, acro = _parts(title, abstract)
    head = " ".join([str(len(title_words)) if has_title else "-", *(str(len(s)) for s in sentences)])
    words = " ".join(title_words + [w for s in sentences for w in s])
    lines = [head, words, alt, title_alt, *(f"{lf}\t{a}" for lf, a in acro)]
    return zlib.compress("\n".join(lines).encode("utf-8"), 6)
