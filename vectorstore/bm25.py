"""BM25 over postings kept beside the FTS5 table, scored with numpy (issue 25).

FTS5's ``bm25()`` scores every paper that holds a query word, at about 2 µs each: at 200k papers that was a third
of a first-time search, and it grows with the corpus. The lexical index therefore also keeps each term's postings
(the papers holding it, with how often the title and the abstract state it) and each paper's length, and a search
reads the postings of its few terms and scores them with array arithmetic.

The scores are FTS5's own, to the bit: the terms and their counts come from FTS5's tokenizer (an in-memory FTS5
table of the same tokenizer, read through ``fts5vocab``), and the formula, its constants and the order of its
floating-point operations are those of ``fts5Bm25Function`` (SQLite's ``ext/fts5/fts5_aux.c``): for each phrase of
the query in order, ``idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))`` with
``idf = log((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive), ``f`` the weighted count of the term in the
paper, ``D`` the paper's tokens and ``avgdl`` the mean over the papers.

Papers are numbered densely in the order they were indexed; a paper replaced by an update gets a new number and its
old one is marked dead. An update writes one new segment of postings for each term it touches, so it costs what the
new papers cost, not what the index holds; a rebuild writes one segment per term.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

K1, B = 1.2, 0.75  # FTS5's bm25() constants
SEGMENT_BITS = 20  # a postings row's key: the term's id shifted by this, plus the segment (an update's number)
POSTINGS_CACHE = 64 * 2**20  # bytes of decoded postings kept per index revision (the commonest terms recur)

SCHEMA = """
CREATE TABLE bm25_terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE bm25_postings(key INTEGER PRIMARY KEY, docs BLOB NOT NULL, tf BLOB NOT NULL);
CREATE TABLE bm25_docs(key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""
# bm25_postings: docs int32 (the papers' numbers, ascending), tf uint16 pairs (title, abstract);
# bm25_docs: 'rowids' int64 (each number's row id), 'lengths' int32 (tokens), 'alive' uint8, 'order' int32 (the
# numbers sorted by row id, stable), 'segment' (the last one written)


@dataclass(frozen=True)
class Postings:
    """A term's postings: the papers' numbers (ascending) and the term's count in each one's title and abstract."""

    docs: np.ndarray
    title: np.ndarray
    abstract: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.title.nbytes + self.abstract.nbytes)


def _scratch(tokenize: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, abstract, tokenize = '{tokenize}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return conn


def postings_of(
    rows: Sequence[tuple[str, str]], tokenize: str
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The terms FTS5's tokenizer makes of each (title, abstract): (term of each posting, row of each posting,
    count in the title, count in the abstract), ordered by term and then row, with every row's total tokens."""
    conn = _scratch(tokenize)
    try:
        conn.executemany("INSERT INTO t(rowid, title, abstract) VALUES (?,?,?)",
                         [(i, title, abstract) for i, (title, abstract) in enumerate(rows)])  # fmt: skip
        got = conn.execute(
            "SELECT term, doc, sum(col = 'title'), sum(col = 'abstract') FROM v GROUP BY term, doc ORDER BY term, doc"
        ).fetchall()
    finally:
        conn.close()
    n = len(got)
    terms = [g[0] for g in got]
    docs = np.fromiter((g[1] for g in got), dtype=np.int64, count=n)
    title = np.fromiter((g[2] for g in got), dtype=np.int64, count=n)
    abstract = np.fromiter((g[3] for g in got), dtype=np.int64, count=n)
    lengths = np.bincount(docs, weights=title + abstract, minlength=len(rows)).astype(np.int64)
    return terms, docs, title, abstract, lengths


_query_terms = threading.local()


def query_terms(words: Sequence[str], tokenize: str) -> list[list[str]]:
    """The terms FTS5 searches for each word quoted alone (one term for a plain word)."""
    conn = getattr(_query_terms, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _query_terms.conn = conn
    out: list[list[str]] = [[] for _ in words]
    with conn:
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?,?)", list(enumerate(words)))
        for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
            out[int(doc)].append(str(term))
        conn.execute("DELETE FROM t")
    return out


def _pack(title: np.ndarray, abstract: np.ndarray) -> bytes:
    cap = np.iinfo(np.uint16).max
    return np.stack([np.minimum(title, cap), np.minimum(abstract, cap)], axis=1).astype(np.uint16).tobytes()


def _write_postings(
    conn: sqlite3.Connection, ids: np.ndarray, docs: np.ndarray, title: np.ndarray, abstract: np.ndarray, segment: int
) -> None:
    """One row per term of these postings (ordered by term id, then paper number), in ``segment``."""
    if not len(ids):
        return
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    conn.executemany(
        "INSERT OR REPLACE INTO bm25_postings(key, docs, tf) VALUES (?,?,?)",
        (((int(ids[s]) << SEGMENT_BITS) + segment, docs[s:e].astype(np.int32).tobytes(),
          _pack(title[s:e], abstract[s:e])) for s, e in zip(starts, ends, strict=True)),
    )  # fmt: skip


def _write_docs(conn: sqlite3.Connection, rowids: np.ndarray, lengths: np.ndarray, alive: np.ndarray, seg: int) -> None:
    order = np.argsort(rowids, kind="stable")  # (sorted once here, not by each reader: 0.1 s at 1M papers)
    conn.executemany(
        "INSERT OR REPLACE INTO bm25_docs(key, value) VALUES (?,?)",
        [("rowids", rowids.astype(np.int64).tobytes()), ("lengths", lengths.astype(np.int32).tobytes()),
         ("alive", alive.astype(np.uint8).tobytes()), ("order", order.astype(np.int32).tobytes()),
         ("segment", str(seg).encode())],
    )  # fmt: skip


class Builder:
    """The postings of a full rebuild, gathered batch by batch and written once (one segment per term)."""

    def __init__(self, tokenize: str) -> None:
        self.tokenize = tokenize
        self.ids: dict[str, int] = {}
        self.rowids: list[int] = []
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.lengths: list[np.ndarray] = []

    def add(self, rows: Sequence[tuple[int, str, str]]) -> None:
        """Add papers given as (row id, title, abstract), as the papers table holds them."""
        if not rows:
            return
        terms, docs, title, abstract, lengths = postings_of([(r[1], r[2]) for r in rows], self.tokenize)
        ids = self.ids
        tid = np.fromiter((ids.setdefault(t, len(ids)) for t in terms), dtype=np.int64, count=len(terms))
        self.parts.append((tid, docs + len(self.rowids), title, abstract))
        self.rowids.extend(r[0] for r in rows)
        self.lengths.append(lengths)

    def write(self, conn: sqlite3.Connection) -> None:
        """Write the postings, the terms' document frequencies and the papers' numbers into ``conn`` (whose tables
        :data:`SCHEMA` made)."""
        rowids = np.asarray(self.rowids, dtype=np.int64)
        # a row id given twice (a paper listed twice): the last one stands, as INSERT OR REPLACE leaves it
        last = np.zeros(len(rowids), dtype=bool)
        if len(rowids):
            _, first_of_reversed = np.unique(rowids[::-1], return_index=True)
            last[len(rowids) - 1 - first_of_reversed] = True
        number = np.cumsum(last) - 1  # the kept papers renumbered densely
        cat = [np.concatenate(x) if x else np.zeros(0, dtype=np.int64) for x in zip(*self.parts, strict=True)]
        tid, docs, title, abstract = cat if self.parts else [np.zeros(0, dtype=np.int64)] * 4
        keep = last[docs]
        tid, docs, title, abstract = tid[keep], number[docs[keep]], title[keep], abstract[keep]
        order = np.argsort(tid, kind="stable")  # (within a term, the papers stay in their ascending order)
        tid, docs, title, abstract = tid[order], docs[order], title[order], abstract[order]
        df = np.bincount(tid, minlength=len(self.ids))
        conn.executemany("INSERT INTO bm25_terms(term, id, df) VALUES (?,?,?)",
                         ((t, i, int(df[i])) for t, i in self.ids.items() if df[i]))  # fmt: skip
        _write_postings(conn, tid, docs, title, abstract, 0)
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int64)
        _write_docs(conn, rowids[last], lengths[last], np.ones(int(last.sum()), dtype=bool), 0)


def update(conn: sqlite3.Connection, tokenize: str, new: Sequence[tuple[int, str, str]],
           old: Iterable[tuple[str, str]]) -> None:  # fmt: skip
    """Add papers (row id, title, abstract) to the postings in ``conn``, in one new segment; ``old`` are the texts
    (title, abstract) the replaced ones among them were indexed with, whose terms lose a paper."""
    docs_rows = dict(conn.execute("SELECT key, value FROM bm25_docs").fetchall())
    rowids = np.frombuffer(docs_rows["rowids"], dtype=np.int64)
    lengths = np.frombuffer(docs_rows["lengths"], dtype=np.int32).astype(np.int64)
    alive = np.frombuffer(docs_rows["alive"], dtype=np.uint8).astype(bool)
    segment = int(bytes(docs_rows["segment"]).decode()) + 1
    if segment >= 1 << SEGMENT_BITS:
        raise OverflowError("the BM25 postings have too many segments: rebuild the index")
    latest: dict[int, tuple[str, str]] = {}
    for rowid, title_text, abstract_text in new:  # (a row id given twice: the last one stands)
        latest.pop(rowid, None)
        latest[rowid] = (title_text, abstract_text)
    change: dict[str, int] = {}
    gone = list(old)
    if gone:
        for t in postings_of(gone, tokenize)[0]:
            change[t] = change.get(t, 0) - 1
    wanted = np.fromiter(latest, dtype=np.int64, count=len(latest))
    alive = alive & ~np.isin(rowids, wanted)  # (a replaced paper's numbers, the old and any older, are dead)
    terms, docs, title, abstract, new_lengths = postings_of(list(latest.values()), tokenize)
    for t in terms:
        change[t] = change.get(t, 0) + 1
    known: dict[str, tuple[int, int]] = {}
    names = list(change)
    for i in range(0, len(names), 500):
        part = names[i : i + 500]
        marks = ",".join("?" * len(part))
        for term, tid, df in conn.execute(f"SELECT term, id, df FROM bm25_terms WHERE term IN ({marks})", part):
            known[str(term)] = (int(tid), int(df))
    next_id = int(conn.execute("SELECT coalesce(max(id), -1) + 1 FROM bm25_terms").fetchone()[0])
    rows = []
    for t, d in change.items():
        tid, df = known.get(t, (-1, 0))
        if tid < 0:
            tid, next_id = next_id, next_id + 1
        known[t] = (tid, df)
        rows.append((t, tid, df + d))
    conn.executemany("INSERT OR REPLACE INTO bm25_terms(term, id, df) VALUES (?,?,?)", rows)
    tid_arr = np.fromiter((known[t][0] for t in terms), dtype=np.int64, count=len(terms))
    order = np.lexsort((docs, tid_arr))
    base = len(rowids)
    _write_postings(conn, tid_arr[order], docs[order] + base, title[order], abstract[order], segment)
    _write_docs(conn, np.concatenate([rowids, wanted]), np.concatenate([lengths, new_lengths]),
                np.concatenate([alive, np.ones(len(wanted), dtype=bool)]), segment)  # fmt: skip


class Reader:
    """Scores over the postings of one revision of an index (see the module's docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        rows = dict(conn.execute("SELECT key, value FROM bm25_docs").fetchall())
        self.rowids = np.frombuffer(rows["rowids"], dtype=np.int64)
        self.alive = np.frombuffer(rows["alive"], dtype=np.uint8).astype(bool)
        length = np.frombuffer(rows["lengths"], dtype=np.int32).astype(np.float64)
        self.n = int(self.alive.sum())
        avgdl = float(np.sum(length[self.alive], dtype=np.int64)) / self.n if self.n else 1.0
        self.norm = K1 * (1 - B + B * length / avgdl)  # (the denominator's part a paper's length sets)
        self.order = np.frombuffer(rows["order"], dtype=np.int32).astype(np.int64)  # the numbers by row id
        self._cache: OrderedDict[str, tuple[int, Postings]] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()

    def numbers(self, rowids: Sequence[int]) -> np.ndarray:
        """The numbers of these row ids' live papers, -1 for a row id the postings do not hold."""
        order = self.order
        want = np.asarray(rowids, dtype=np.int64)
        sorted_ids = self.rowids[order]
        at = np.minimum(np.searchsorted(sorted_ids, want), max(len(order) - 1, 0))
        out = np.full(len(want), -1, dtype=np.int64)
        if len(order):
            hit = sorted_ids[at] == want
            # (a replaced paper's old number sorts before its new one: the live one is the last of its row id)
            right = np.searchsorted(sorted_ids, want, side="right") - 1
            number = order[np.maximum(right, 0)]
            hit &= self.alive[number]
            out[hit] = number[hit]
        return out

    def postings(self, conn: sqlite3.Connection, term: str) -> tuple[int, Postings]:
        """(document frequency, postings) of a term; (0, empty) for a term no paper holds."""
        with self._lock:
            got = self._cache.get(term)
            if got is not None:
                self._cache.move_to_end(term)
                return got
        row = conn.execute("SELECT id, df FROM bm25_terms WHERE term = ?", (term,)).fetchone()
        empty = np.zeros(0, dtype=np.int64)
        if row is None:
            return 0, Postings(empty, empty, empty)
        tid, df = int(row[0]), int(row[1])
        docs, tfs = [], []
        lo = tid << SEGMENT_BITS
        for d, tf in conn.execute("SELECT docs, tf FROM bm25_postings WHERE key >= ? AND key < ? ORDER BY key",
                                  (lo, lo + (1 << SEGMENT_BITS))):  # fmt: skip
            docs.append(np.frombuffer(d, dtype=np.int32))
            tfs.append(np.frombuffer(tf, dtype=np.uint16).reshape(-1, 2))
        all_docs = np.concatenate(docs).astype(np.int64) if docs else empty
        tf_all = np.concatenate(tfs) if tfs else np.zeros((0, 2), dtype=np.uint16)
        keep = all_docs < len(self.alive)  # (postings written after this reader's papers were read)
        p = Postings(all_docs[keep], tf_all[keep, 0].astype(np.float64), tf_all[keep, 1].astype(np.float64))
        with self._lock:
            self._cache[term] = (df, p)
            self._cached += p.nbytes
            while self._cached > POSTINGS_CACHE and len(self._cache) > 1:
                _, (_, old) = self._cache.popitem(last=False)
                self._cached -= old.nbytes
        return df, p

    def idf(self, df: int) -> float:
        idf = math.log((self.n - df + 0.5) / (df + 0.5))
        return idf if idf > 0.0 else 1e-6

    def search(self, conn: sqlite3.Connection, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        """(row id, score) of the best ``n`` live papers holding any of the terms (each term a phrase of the query,
        in order; title and abstract weighted 1), best first; ties by row id."""
        scores = np.zeros(len(self.alive))
        hit = np.zeros(len(self.alive), dtype=bool)
        for term in terms:
            df, p = self.postings(conn, term)
            if not len(p.docs):
                continue
            f = p.title + p.abstract
            scores[p.docs] += self.idf(df) * ((f * (K1 + 1.0)) / (f + self.norm[p.docs]))
            hit[p.docs] = True
        found = np.flatnonzero(hit & self.alive)
        if len(found) > n:
            s = scores[found]
            cut = np.partition(s, len(s) - n)[len(s) - n]  # the n-th best score: every paper at it may rank
            found = found[s >= cut]
        key = np.lexsort((self.rowids[found], -scores[found]))[:n]
        return [(int(self.rowids[found[i]]), float(scores[found[i]])) for i in key]

    def field_scores(
        self, conn: sqlite3.Connection, terms: Sequence[str], rowids: Sequence[int]
    ) -> dict[int, tuple[float, float, float]]:
        """Per given row id holding any of the terms: the BM25 of (title and abstract, title only, abstract only)."""
        numbers = self.numbers(rowids)
        live = numbers >= 0
        want = numbers[live]
        out = np.zeros((3, len(want)))
        hit = np.zeros(len(want), dtype=bool)
        if len(want):
            norm = self.norm[want]
            for term in terms:
                df, p = self.postings(conn, term)
                if not len(p.docs):
                    continue
                at = np.minimum(np.searchsorted(p.docs, want), len(p.docs) - 1)
                has = p.docs[at] == want
                idf = self.idf(df)
                title = np.where(has, p.title[at], 0.0)
                abstract = np.where(has, p.abstract[at], 0.0)
                for row, f in enumerate((title + abstract, title, abstract)):
                    out[row] += idf * ((f * (K1 + 1.0)) / (f + norm))
                hit |= has
        ids = np.asarray(rowids, dtype=np.int64)[live]
        return {int(ids[i]): (float(out[0, i]), float(out[1, i]), float(out[2, i])) for i in np.flatnonzero(hit)}
