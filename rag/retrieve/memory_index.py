"""An :class:`~rag.retrieve.index.Index` held in memory: papers in a dict, chunk vectors in a numpy matrix, BM25 in
Python.

The small twin of :class:`rag.retrieve.chroma_index.PaperIndex`, in the spirit of paper-qa's ``NumpyVectorStore``: the
same interface and the same semantics on a corpus that fits in memory, with no Chroma and no SQLite file. Papers are
chunked and embedded as an ingest does it (:func:`vectorstore.pipeline.embed_batch`), and only when a vector is
first asked for (the planner's statistics need no model). The lexical side reads titles and abstracts as the FTS5
index does: the same tokens (:func:`vectorstore.text.tokens`), the same vocabulary (:func:`vectorstore.lexical.
indexed_words`), the same query expressions, and FTS5's ``bm25`` formula; words are compared on their stems
(:func:`vectorstore.text.stem`, the Snowball stemmer, where FTS5 uses the Porter one: the two agree on most words).

Tests use it where a real store adds nothing; :meth:`MemoryIndex.add` changes the corpus (a new revision).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from askpapers.rag.retrieve.index import CHUNKS_PER_PAPER, Index, best_chunk_per_paper
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.lexical import (
    all_words_expression,
    common_words,
    indexed_words,
    match_expression,
    phrase_expression,
    query_words,
    rowid_of,
)
from askpapers.vectorstore.pipeline import embed_batch, read_papers
from askpapers.vectorstore.store import mean_vector
from askpapers.vectorstore.text import stem, tokens
from askpapers.vectorstore.types import ChunkHit, Filters, Listed, Paper

if TYPE_CHECKING:
    from askpapers.rag.retrieve.chroma_index import PaperIndex

K1, B = 1.2, 0.75  # FTS5's bm25 constants
IDF_CACHE = 50_000  # phrases whose idf is kept
QUERY_CACHE = 256  # query embeddings kept
# A match expression as FTS5 reads the ones of vectorstore.lexical: any of the groups, each holding all its phrases
# (a phrase: a tuple of stems, consecutive in one column).
Phrase = tuple[str, ...]
Expression = list[list[Phrase]]


def _parse(expr: str) -> Expression:
    """The groups of an FTS5 MATCH string made by :mod:`vectorstore.lexical` (quoted words, AND, OR, brackets):
    ``"a b" OR ("c" AND "d")``. Its words are stemmed as the index's tokenizer stems them."""
    groups: Expression = []
    for part in expr.split(" OR ") if expr else []:
        phrases = part.strip().strip("()").split(" AND ")
        groups.append([tuple(stem(w) for w in p.strip().strip("()").strip('"').split()) for p in phrases])
    return [g for g in groups if g and all(g)]


def _and(exprs: list[str]) -> Expression:
    """Every combination of one group of each expression (FTS5's ``(A) AND (B)``)."""
    out: Expression = [[]]
    for e in exprs:
        out = [a + b for a in out for b in _parse(e)]
    return out if exprs else []


def _surface_meets(p: Paper, slots: list[set[str]], in_a_row: bool) -> bool:
    """Whether the paper's words as written (its real title's, or its abstract's) meet the slots, as the index's
    surface postings find them: consecutive in one column, or each anywhere."""
    columns = [tokens(p.title) if not p.title_derived else [], tokens(p.abstract)]
    if not in_a_row:
        held = set(columns[0]) | set(columns[1])
        return all(slot & held for slot in slots)
    n = len(slots)
    return any(all(words[i + j] in slots[j] for j in range(n)) for words in columns for i in range(len(words) - n + 1))


@dataclass(frozen=True)
class _Doc:
    """One paper as the lexical index holds it: its title's and abstract's stems, and its filter fields."""

    paper: Paper
    title: tuple[str, ...]
    abstract: tuple[str, ...]
    words: frozenset[str]
    at: tuple[dict[str, list[int]], dict[str, list[int]]]  # where each stem stands in the title, in the abstract

    @classmethod
    def of(cls, p: Paper) -> _Doc:
        title = "" if p.title_derived else p.title
        columns = (tuple(stem(t) for t in tokens(title)), tuple(stem(t) for t in tokens(p.abstract)))
        at: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        for column, where in zip(columns, at, strict=True):
            for i, s in enumerate(column):
                where.setdefault(s, []).append(i)
        return cls(p, *columns, frozenset(indexed_words(title, p.abstract)), at)

    def hits(self, phrase: Phrase, column: int) -> int:
        """How often the phrase stands in a column (0: the title, 1: the abstract)."""
        starts = self.at[column].get(phrase[0], [])
        if len(phrase) == 1:
            return len(starts)
        text = (self.title, self.abstract)[column]
        return sum(text[i : i + len(phrase)] == phrase for i in starts)

    def has(self, phrase: Phrase) -> bool:
        return bool(self.hits(phrase, 0) or self.hits(phrase, 1))

    def passes(self, filters: Filters | None) -> bool:
        p = self.paper
        if filters is None:
            return True
        return (
            (filters.venue is None or p.venue == filters.venue)
            and (filters.year is None or p.year == filters.year)
            and (not filters.has_code or p.has_code)
        )


class MemoryIndex:
    """Papers, their chunk vectors and a BM25 index, in memory (see the module's docstring)."""

    def __init__(
        self, papers: Iterable[Paper] = (), embedder: Embedder | None = None, settings: StoreSettings | None = None
    ) -> None:
        """``embedder`` embeds the chunks (when a vector is first needed) and the queries; ``settings`` say how
        papers are chunked (the store's defaults when not given)."""
        self._embedder = embedder
        self._chunking = settings or StoreSettings()
        self._lock = threading.RLock()
        self._docs: dict[str, _Doc] = {}
        self._revision_n = 0
        self._vectors_of = -1  # the revision the vectors below were made at
        self._chunks: list[ChunkHit] = []  # every chunk (similarity unused), rows of the matrix below
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._paper_vectors: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}
        self._idfs: dict[tuple[int, Phrase], float] = {}
        self._stats_of = -1  # the revision the statistics below were counted at
        self._stats_cache: tuple[float, dict[str, int]] = (0.0, {})
        self.add(papers)

    @classmethod
    def from_files(
        cls, paths: Iterable[str | os.PathLike[str]], embedder: Embedder | None = None,
        settings: StoreSettings | None = None,
    ) -> MemoryIndex:  # fmt: skip
        """The papers of corpus files, read as an ingest reads them into an empty store."""
        return cls(read_papers(paths), embedder, settings)

    # -- writing ---------------------------------------------------------------------------------------------------
    def add(self, papers: Iterable[Paper]) -> None:
        """Add papers, or replace those with the same ids: a new revision."""
        with self._lock:
            for p in papers:
                self._docs[p.paper_id] = _Doc.of(p)
            self._revision_n += 1

    # -- freshness -------------------------------------------------------------------------------------------------
    def refresh(self) -> object:
        return None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        yield

    def carried(self) -> Callable[[], AbstractContextManager[None]]:
        return self.pinned

    @property
    def revision(self) -> str:
        return f"memory-{self._revision_n}"

    @property
    def seen_revision(self) -> str:
        return self.revision

    # -- paper reads -----------------------------------------------------------------------------------------------
    def papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        return {pid: d.paper for pid in dict.fromkeys(ids) if (d := self._docs.get(pid)) is not None}

    def all_papers(self, most: int | None = None) -> list[Paper]:
        docs = list(self._docs.values())[:most]
        return sorted((d.paper for d in docs), key=lambda p: p.title.lower())

    def count(self) -> int:
        return len(self._docs)

    def doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        out = {}
        for pid, p in self.papers(ids).items():
            out[pid] = DocText("" if p.title_derived else p.title, p.abstract)
        return out

    def preload(self, most: int, stop: threading.Event | None = None) -> list[Paper]:
        return list(d.paper for d in self._docs.values())[: max(most, 0)]

    # -- vector search ---------------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise ValueError("this MemoryIndex was made without an embedder: it has no vectors")
        return self._embedder

    def _vectors(self) -> tuple[list[ChunkHit], np.ndarray]:
        """Every chunk and its vector (made now when the papers changed since the last time)."""
        with self._lock:
            if self._vectors_of != self._revision_n:
                papers = [d.paper for d in self._docs.values()]
                chunks: list[ChunkHit] = []
                rows: list[np.ndarray] = []
                self._paper_vectors = {}
                for p, cs, vecs in embed_batch(papers, self.embedder, self._chunking) if papers else []:
                    chunks += [ChunkHit(p.paper_id, c.text, 0.0, c.position) for c in cs]
                    rows.append(np.asarray(vecs, dtype=np.float32))
                    self._paper_vectors[p.paper_id] = np.asarray(mean_vector(vecs), dtype=np.float32)
                dim = self.embedder.dim
                self._chunks = chunks
                self._matrix = np.concatenate(rows) if rows else np.zeros((0, dim), dtype=np.float32)
                self._vectors_of = self._revision_n
            return self._chunks, self._matrix

    def embed(self, text: str) -> np.ndarray:
        vec = self._queries.get(text)
        if vec is None:
            if len(self._queries) >= QUERY_CACHE:
                self._queries.clear()
            vec = self._queries[text] = self.embedder.embed_query(text)
        return vec

    def _nearest(self, vector: np.ndarray, n: int, keep: set[str] | None = None) -> list[ChunkHit]:
        """The ``n`` chunks most similar to ``vector`` (cosine), of the papers in ``keep`` when given."""
        chunks, matrix = self._vectors()
        if not chunks:
            return []
        v = np.asarray(vector, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(v)), 1e-12)
        sims = (matrix @ v) / np.maximum(norms, 1e-12)
        rows = [i for i in np.argsort(-sims, kind="stable") if keep is None or chunks[i].paper_id in keep]
        return [ChunkHit(chunks[i].paper_id, chunks[i].text, float(sims[i]), chunks[i].position) for i in rows[:n]]

    def _passing(self, filters: Filters | None) -> set[str] | None:
        if filters is None or filters.empty:
            return None
        return {pid for pid, d in self._docs.items() if d.passes(filters)}

    def nearest_paper_ids(self, vector: np.ndarray, n: int, filters: Filters | None = None) -> list[str]:
        return list(dict.fromkeys(c.paper_id for c in self._nearest(vector, max(1, n), self._passing(filters))))

    def nearest_chunks(self, text: str, n: int, filters: Filters | None = None) -> list[ChunkHit]:
        return self._nearest(self.embed(text), max(1, n), self._passing(filters))

    def best_chunks(self, text: str, n: int, filters: Filters | None = None) -> dict[str, ChunkHit]:
        return best_chunk_per_paper(self.nearest_chunks(text, n, filters))

    def best_chunks_within(self, text: str, paper_ids: Sequence[str]) -> dict[str, ChunkHit]:
        if not paper_ids:
            return {}
        hits = self._nearest(self.embed(text), CHUNKS_PER_PAPER * len(paper_ids), set(paper_ids))
        return best_chunk_per_paper(hits)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._vectors()
        return {pid: v for pid in dict.fromkeys(ids) if (v := self._paper_vectors.get(pid)) is not None}

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        chunks, matrix = self._vectors()
        rows: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            rows.setdefault(c.paper_id, []).append(i)
        return {pid: matrix[rows[pid]] for pid in dict.fromkeys(ids) if pid in rows}

    # -- lexical search (FTS5's bm25 over title and abstract) --------------------------------------------------------
    def _stats(self) -> tuple[float, dict[str, int]]:
        """The mean paper length in tokens, and each word's document frequency (kept until the papers change)."""
        with self._lock:
            if self._stats_of != self._revision_n:
                total = sum(len(d.title) + len(d.abstract) for d in self._docs.values())
                df: dict[str, int] = {}
                for d in self._docs.values():
                    for w in d.words:
                        df[w] = df.get(w, 0) + 1
                self._stats_cache = (total / max(len(self._docs), 1), df)
                self._stats_of = self._revision_n
            return self._stats_cache

    def _idf(self, phrase: Phrase) -> float:
        """FTS5's idf of a phrase (the papers stating it, anywhere): kept until the papers change."""
        key = (self._revision_n, phrase)
        idf = self._idfs.get(key)
        if idf is None:
            n = len(self._docs)
            hit = sum(1 for d in self._docs.values() if d.has(phrase))
            idf = math.log((n - hit + 0.5) / (hit + 0.5))
            idf = idf if idf > 0 else 1e-6
            if len(self._idfs) > IDF_CACHE:
                self._idfs.clear()
            self._idfs[key] = idf
        return idf

    def _bm25(self, doc: _Doc, phrases: list[Phrase], idf: dict[Phrase, float], weights: tuple[float, float]) -> float:
        dl = len(doc.title) + len(doc.abstract)
        norm = K1 * (1 - B + B * dl / max(self._stats()[0], 1e-12))
        score = 0.0
        for ph in phrases:
            f = weights[0] * doc.hits(ph, 0) + weights[1] * doc.hits(ph, 1)
            score += idf[ph] * (f * (K1 + 1)) / (f + norm)
        return score

    def _matches(self, doc: _Doc, expr: Expression) -> bool:
        return any(all(doc.has(ph) for ph in g) for g in expr)

    def _match(self, expr: Expression, n: int, filters: Filters | None) -> list[tuple[str, float]]:
        if not expr:
            return []
        phrases = [ph for g in expr for ph in g]  # (FTS5 scores each phrase of the expression, repeats included)
        idf = {ph: self._idf(ph) for ph in phrases}
        found = [
            (pid, self._bm25(d, phrases, idf, (1.0, 1.0)))
            for pid, d in self._docs.items()
            if d.passes(filters) and self._matches(d, expr)
        ]
        return sorted(found, key=lambda x: -x[1])[: max(n, 0)]

    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        words = query_words(query)  # (as the BM25 index: the words that score)
        common = common_words(words, lambda w: sum(1 for d in self._docs.values() if d.has((stem(w),))), self.size())
        return self._match(_parse(match_expression(query, leave_out=common)), n, filters)

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self._match(_parse(phrase_expression(phrases)), n, filters)

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self._match(_and([e for f in facets if (e := phrase_expression(f))]), n, filters)

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        return self._match(_parse(all_words_expression(phrases)), n, filters)

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        return self._ids(_parse(phrase_expression(phrases)), filters)

    def all_words_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        return self._ids(_parse(all_words_expression(phrases)), filters)

    def surface_ids(self, queries: list[list[list[str]]], in_a_row: bool = True) -> set[str]:
        slotted = [[{t for w in slot for t in tokens(w)[:1]} for slot in q] for q in queries]
        slotted = [q for q in slotted if q and all(q)]
        return {pid for pid, d in self._docs.items() if any(_surface_meets(d.paper, q, in_a_row) for q in slotted)}

    def _ids(self, expr: Expression, filters: Filters | None) -> set[str]:
        if not expr:
            return set()
        return {pid for pid, d in self._docs.items() if d.passes(filters) and self._matches(d, expr)}

    def field_scores(self, query: str, paper_ids: Sequence[str]) -> dict[str, tuple[float, float, float]]:
        expr = _parse(match_expression(query))
        if not expr:
            return {}
        phrases = [ph for g in expr for ph in g]
        idf = {ph: self._idf(ph) for ph in phrases}
        out = {}
        for pid in dict.fromkeys(paper_ids):
            d = self._docs.get(pid)
            if d is not None and self._matches(d, expr):
                both, title, abstract = (self._bm25(d, phrases, idf, w) for w in ((1.0, 1.0), (1.0, 0.0), (0.0, 1.0)))
                out[pid] = (both, title, abstract)
        return out

    # -- lexical statistics ----------------------------------------------------------------------------------------
    def size(self) -> int:
        return len(self._docs)

    def _df(self) -> dict[str, int]:
        return self._stats()[1]

    def word_df(self, words: Sequence[str]) -> dict[str, int]:
        df = self._df()
        return {w: df[w] for w in dict.fromkeys(words) if w in df}

    def words_with_stems(self, stems: Sequence[str]) -> list[tuple[str, int]]:
        wanted = set(stems)
        return [(w, n) for w, n in sorted(self._df().items()) if stem(w) in wanted]

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        return [(w, n) for w, n in sorted(self._df().items()) if n >= min_df]

    def phrase_count(self, phrase: str) -> int:
        expr = _parse(phrase_expression([phrase]))
        return sum(self._matches(d, expr) for d in self._docs.values()) if expr else 0

    def facet_count(self, facets: list[list[str]]) -> int:
        parts = [phrase_expression(f) for f in facets]
        if not all(parts):
            return 0
        expr = _and(parts)
        return sum(self._matches(d, expr) for d in self._docs.values()) if expr else 0

    def venues(self) -> list[str]:
        return sorted({d.paper.venue for d in self._docs.values() if d.paper.venue})

    def years(self) -> list[int]:
        return sorted({d.paper.year for d in self._docs.values() if d.paper.year is not None}, reverse=True)

    def listing(self) -> list[Listed]:
        return [Listed(p.paper_id, p.title, p.venue, p.year) for p in (d.paper for d in self._docs.values())]

    def sample_ids(self, n: int) -> list[str]:
        return sorted(self._docs, key=rowid_of)[: max(n, 0)]


def _both_are_indexes(memory: MemoryIndex, chroma: PaperIndex) -> tuple[Index, Index]:
    """(For the type checker: each implementation is an :class:`~rag.retrieve.index.Index`.)"""
    return memory, chroma
