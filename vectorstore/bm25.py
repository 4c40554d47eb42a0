"""BM25 and phrase matching over postings kept beside the FTS5 table, with numpy (issue 25).

FTS5 costs about 2 µs for every paper that holds a query word or states a phrase (its ``bm25()`` and its position
lists are read row by row): at 200k papers the BM25 search over a question's words was a third of a first-time
search, and the phrase lists and counts of the planner and the matcher most of the rest, all growing with the
corpus. The lexical index therefore also keeps each term's postings (the papers holding it, how often the title and
the abstract state it, and where) and each paper's length; a query reads its few terms' postings and works on whole
arrays.

Everything is FTS5's own, to the bit. The terms, their counts and positions come from FTS5's tokenizer (an
in-memory FTS5 table of the same tokenizer, read through ``fts5vocab``); a phrase is its terms at consecutive
positions of one column; an expression is FTS5's ``OR`` of groups, each an ``AND`` of slots, each an ``OR`` of
phrases, and a phrase counts towards a paper's score only where its group matches (FTS5 clears the positions of a
branch that does not). Scores follow ``fts5Bm25Function`` (SQLite's ``ext/fts5/fts5_aux.c``), its constants and the
order of its floating-point operations: for each phrase in order, ``idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b *
D / avgdl)))`` with ``idf = log((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive), ``f`` the phrase's weighted
count in the paper, ``n`` the papers stating it, ``D`` the paper's tokens and ``avgdl`` the mean over the papers.

The same machinery keeps a second family of postings, ``surface``: the words as written (lower-cased, no stems, the
tokenizer :data:`~vectorstore.lexical.SURFACE_TOKENIZE`), for the papers that state a phrase in the forms the
matcher accepts (:meth:`Reader.in_a_row`); it shares the papers' numbers and lengths with the ranked family and is
matched, never scored. (It replaced an FTS5 table of those words, whose phrase queries read every paper holding a
word: a third of a first-time answer at 900k papers.)

Papers are numbered in the order they were indexed; a paper written again gets a new number and its old one is
marked dead. A rebuild writes a segment of postings per term for every :data:`SEGMENT_PAPERS` papers (so its
memory stays bounded), an update one segment for each term its papers hold: it costs what the new papers cost, not
what the index holds.
"""

from __future__ import annotations

import copy
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

K1, B = 1.2, 0.75  # FTS5's bm25() constants
SEGMENT_BITS = 20  # a postings row's key: the term's id shifted by this, plus the segment's number
SEGMENT_PAPERS = 100_000  # papers a rebuild gathers before writing their postings as one segment
UPDATE_BATCH = 2_000  # papers an update tokenizes at a time (its postings are written as one segment)
# bytes of decoded postings and phrase matches kept per index revision: at 1M papers the common words' postings and
# positions (50 MB for "of") overflowed 256 MB within 40 questions (37 of 356 terms read again, 90 ms of reading)
POSTINGS_CACHE = 2**30
ABSTRACT = 1 << 31  # a position's column bit: set for the abstract, clear for the title

RANKED, SURFACE = "bm25", "surface"  # the families of postings: their tables' prefixes
SCHEMA = """
CREATE TABLE bm25_terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE bm25_postings(key INTEGER PRIMARY KEY, docs BLOB NOT NULL, tf BLOB NOT NULL, pos BLOB NOT NULL);
CREATE TABLE bm25_docs(key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE surface_terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE surface_postings(key INTEGER PRIMARY KEY, docs BLOB NOT NULL, tf BLOB NOT NULL, pos BLOB NOT NULL);
"""
# bm25_postings (and surface_postings): docs int32 (the papers' numbers, ascending), tf uint32 pairs (title,
# abstract), pos uint32 (each posting's positions in order: the column bit, ABSTRACT, and the token's offset in the
# column);
# bm25_docs: 'rowids' int64 (each number's row id), 'ids' (the paper ids, UTF-8, one after another) and 'ids_end'
# int64 (where each ends), 'lengths' int32 (tokens), 'alive' uint8, 'order' int32 (the numbers sorted by row id,
# stable), 'segment' (the last one written)

Phrase = tuple[str, ...]  # terms at consecutive positions
# FTS5's OR over groups; a group: AND over slots; a slot: OR over phrases
Expression = list[list[list[Phrase]]]


@dataclass(frozen=True)
class Postings:
    """Papers by number (ascending) and how often each states a term or a phrase, in its title and its abstract:
    a term's postings as stored (dead papers too), or the live papers stating a phrase (:meth:`Reader.stated`)."""

    docs: np.ndarray
    title: np.ndarray
    abstract: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.title.nbytes + self.abstract.nbytes)


_EMPTY = np.zeros(0, dtype=np.int64)
_NOTHING = Postings(_EMPTY, np.zeros(0), np.zeros(0))  # (no paper states it)


def _scratch(tokenize: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, abstract, tokenize = '{tokenize}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return conn


@dataclass(frozen=True)
class Batch:
    """The postings of a batch of papers, ordered by term and then paper: each posting's term, paper (its place in
    the batch) and counts; the positions, posting after posting; each paper's tokens."""

    terms: list[str]
    docs: np.ndarray
    title: np.ndarray
    abstract: np.ndarray
    pos: np.ndarray
    lengths: np.ndarray


def postings_of(rows: Sequence[tuple[str, str]], tokenize: str) -> Batch:
    """The postings FTS5's tokenizer makes of each (title, abstract)."""
    conn = _scratch(tokenize)
    try:
        conn.executemany("INSERT INTO t(rowid, title, abstract) VALUES (?,?,?)",
                         [(i, title, abstract) for i, (title, abstract) in enumerate(rows)])  # fmt: skip
        got = conn.execute(
            "SELECT term, doc, col = 'abstract', offset FROM v ORDER BY term, doc, col = 'abstract', offset"
        ).fetchall()
    finally:
        conn.close()
    n = len(got)
    doc = np.fromiter((g[1] for g in got), dtype=np.int64, count=n)
    col = np.fromiter((g[2] for g in got), dtype=np.int64, count=n)
    offset = np.fromiter((g[3] for g in got), dtype=np.int64, count=n)
    # a posting starts where the term or the paper changes
    new = np.ones(n, dtype=bool)
    if n:
        same_term = np.fromiter((got[i][0] == got[i - 1][0] for i in range(1, n)), dtype=bool, count=n - 1)
        new[1:] = ~(same_term & (doc[1:] == doc[:-1]))
    starts = np.flatnonzero(new)
    posting = np.cumsum(new) - 1
    abstract = np.bincount(posting, weights=col, minlength=len(starts)).astype(np.int64)
    title = np.bincount(posting, minlength=len(starts)).astype(np.int64) - abstract
    return Batch(terms=[got[i][0] for i in starts], docs=doc[starts], title=title, abstract=abstract,
                 pos=(offset + col * ABSTRACT).astype(np.uint32),
                 lengths=np.bincount(doc, minlength=len(rows)).astype(np.int64))  # fmt: skip


_query_terms = threading.local()


def query_terms(texts: Sequence[str], tokenize: str) -> list[list[str]]:
    """The terms FTS5 searches for each text quoted as a phrase, in order."""
    conns: dict[str, sqlite3.Connection] = _query_terms.__dict__.setdefault("conns", {})  # (one per tokenizer)
    conn = conns.get(tokenize)
    if conn is None:
        conn = conns[tokenize] = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    out: list[list[str]] = [[] for _ in texts]
    with conn:
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?,?)", list(enumerate(texts)))
        for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
            out[int(doc)].append(str(term))
        conn.execute("DELETE FROM t")
    return out


def _term_ids(conn: sqlite3.Connection, terms: Sequence[str], family: str) -> dict[str, int]:
    """The ids of these terms, new ones given the next free ids (and written)."""
    wanted = list(dict.fromkeys(terms))
    known: dict[str, int] = {}
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT term, id FROM {family}_terms WHERE term IN ({marks})"  # (names of this module)
        known.update(conn.execute(sql, part).fetchall())
    fresh = [t for t in wanted if t not in known]
    if fresh:
        start = int(conn.execute(f"SELECT coalesce(max(id), -1) + 1 FROM {family}_terms").fetchone()[0])
        new = {t: start + i for i, t in enumerate(fresh)}
        conn.executemany(f"INSERT INTO {family}_terms(term, id) VALUES (?,?)", new.items())
        known.update(new)
    return known


def _write_segment(conn: sqlite3.Connection, batches: list[tuple[Batch, int]], segment: int, family: str) -> None:
    """One postings row per term of these batches (each with the number of its first paper), as ``segment`` of
    the ``family``'s postings."""
    if segment >= 1 << SEGMENT_BITS:
        raise OverflowError("the BM25 postings have too many segments: rebuild the index")
    ids = _term_ids(conn, [t for b, _ in batches for t in b.terms], family)
    tid = np.concatenate([np.fromiter((ids[t] for t in b.terms), dtype=np.int64, count=len(b.terms))
                          for b, _ in batches])  # fmt: skip
    docs = np.concatenate([b.docs + first for b, first in batches])
    title = np.concatenate([b.title for b, _ in batches])
    abstract = np.concatenate([b.abstract for b, _ in batches])
    pos = np.concatenate([b.pos for b, _ in batches])
    counts = title + abstract
    pos_start = np.cumsum(counts) - counts
    order = np.lexsort((docs, tid))
    tid, docs, title, abstract, counts, pos_start = (
        tid[order], docs[order], title[order], abstract[order], counts[order], pos_start[order])  # fmt: skip
    if not len(tid):
        return
    # the positions in the new order of the postings: each posting's run, one after another
    ends_at = np.cumsum(counts)
    where = np.repeat(pos_start - (ends_at - counts), counts) + np.arange(int(ends_at[-1]))
    pos = pos[where]
    starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
    ends = np.r_[starts[1:], len(tid)]
    inst = np.r_[0, ends_at]

    def rows() -> Iterator[tuple[int, bytes, bytes, bytes]]:
        for s, e in zip(starts, ends, strict=True):
            yield ((int(tid[s]) << SEGMENT_BITS) + segment, docs[s:e].astype(np.int32).tobytes(),
                   np.stack([title[s:e], abstract[s:e]], axis=1).astype(np.uint32).tobytes(),
                   pos[inst[s] : inst[e]].tobytes())  # fmt: skip

    conn.executemany(f"INSERT INTO {family}_postings(key, docs, tf, pos) VALUES (?,?,?,?)", rows())


def _write_docs(
    conn: sqlite3.Connection, rowids: np.ndarray, ids: bytes, ids_end: np.ndarray, lengths: np.ndarray,
    alive: np.ndarray, seg: int,
) -> None:  # fmt: skip
    order = np.argsort(rowids, kind="stable")  # (sorted once here, not by each reader: 0.1 s at 1M papers)
    conn.executemany(
        "INSERT OR REPLACE INTO bm25_docs(key, value) VALUES (?,?)",
        [("rowids", rowids.astype(np.int64).tobytes()), ("lengths", lengths.astype(np.int32).tobytes()),
         ("ids", ids), ("ids_end", ids_end.astype(np.int64).tobytes()),
         ("alive", alive.astype(np.uint8).tobytes()), ("order", order.astype(np.int32).tobytes()),
         ("segment", str(seg).encode())],
    )  # fmt: skip


class Builder:
    """The postings of a full rebuild, gathered batch by batch and written a segment at a time: the ranked
    family's with ``tokenize``, the surface family's with ``surface``."""

    def __init__(self, conn: sqlite3.Connection, tokenize: str, surface: str) -> None:
        self.conn, self.tokenizers = conn, {RANKED: tokenize, SURFACE: surface}
        self.rowids: list[int] = []
        self.ids: list[bytes] = []
        self.lengths: list[np.ndarray] = []
        self.pending: dict[str, list[tuple[Batch, int]]] = {family: [] for family in self.tokenizers}
        self.first = 0  # the number of the first paper pending
        self.segment = -1

    def add(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Add papers given as (row id, paper id, title, abstract), as the papers table holds them."""
        if not rows:
            return
        texts = [(r[2], r[3]) for r in rows]
        for family, tokenize in self.tokenizers.items():
            self.pending[family].append((postings_of(texts, tokenize), len(self.rowids)))
        self.rowids.extend(r[0] for r in rows)
        self.ids.extend(r[1].encode("utf-8") for r in rows)
        self.lengths.append(self.pending[RANKED][-1][0].lengths)
        if len(self.rowids) - self.first >= SEGMENT_PAPERS:
            self._flush()

    def _flush(self) -> None:
        if self.pending[RANKED]:
            self.segment += 1
            for family, batches in self.pending.items():
                _write_segment(self.conn, batches, self.segment, family)
            self.pending = {family: [] for family in self.tokenizers}
            self.first = len(self.rowids)

    def write(self) -> None:
        """Write what is left, and the papers' numbers (a row id given twice: the last one stands, as INSERT OR
        REPLACE leaves it)."""
        self._flush()
        rowids = np.asarray(self.rowids, dtype=np.int64)
        alive = np.zeros(len(rowids), dtype=bool)
        if len(rowids):
            _, first_of_reversed = np.unique(rowids[::-1], return_index=True)
            alive[len(rowids) - 1 - first_of_reversed] = True
        lengths = np.concatenate(self.lengths) if self.lengths else _EMPTY
        ends = np.cumsum([len(i) for i in self.ids], dtype=np.int64)
        _write_docs(self.conn, rowids, b"".join(self.ids), ends, lengths, alive, max(self.segment, 0))


def update(conn: sqlite3.Connection, tokenize: str, surface: str, new: Sequence[tuple[int, str, str, str]]) -> None:
    """Add papers (row id, paper id, title, abstract) to the postings in ``conn`` (both families: see
    :class:`Builder`) as one new segment; the numbers of those already there are marked dead."""
    docs_rows = dict(conn.execute("SELECT key, value FROM bm25_docs").fetchall())
    rowids = np.frombuffer(docs_rows["rowids"], dtype=np.int64)
    lengths = np.frombuffer(docs_rows["lengths"], dtype=np.int32).astype(np.int64)
    alive = np.frombuffer(docs_rows["alive"], dtype=np.uint8).astype(bool)
    segment = int(bytes(docs_rows["segment"]).decode()) + 1
    latest: dict[int, tuple[str, str, str]] = {}
    for rowid, paper_id, title_text, abstract_text in new:  # (a row id given twice: the last one stands)
        latest.pop(rowid, None)
        latest[rowid] = (paper_id, title_text, abstract_text)
    if not latest:
        return
    wanted = np.fromiter(latest, dtype=np.int64, count=len(latest))
    alive = alive & ~np.isin(rowids, wanted)  # (a paper written again: its numbers, the old and any older, die)
    texts = [(t, a) for _, t, a in latest.values()]
    step = UPDATE_BATCH
    batches = [(postings_of(texts[i : i + step], tokenize), len(rowids) + i) for i in range(0, len(texts), step)]
    _write_segment(conn, batches, segment, RANKED)
    written = [(postings_of(texts[i : i + step], surface), len(rowids) + i) for i in range(0, len(texts), step)]
    _write_segment(conn, written, segment, SURFACE)
    old_end = np.frombuffer(docs_rows["ids_end"], dtype=np.int64)
    new_ids = [pid.encode("utf-8") for pid, _, _ in latest.values()]
    ends = np.concatenate([old_end, (old_end[-1] if len(old_end) else 0) + np.cumsum([len(i) for i in new_ids])])
    lengths = np.concatenate([lengths, *(b.lengths for b, _ in batches)])
    alive = np.concatenate([alive, np.ones(len(wanted), dtype=bool)])
    ids = bytes(docs_rows["ids"]) + b"".join(new_ids)
    _write_docs(conn, np.concatenate([rowids, wanted]), ids, ends, lengths, alive, segment)


def _in_sorted(values: np.ndarray, sorted_array: np.ndarray) -> np.ndarray:
    """Which of ``values`` occur in ``sorted_array`` (ascending)."""
    if not len(sorted_array):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_array, values), len(sorted_array) - 1)
    out: np.ndarray = sorted_array[at] == values
    return out


class _Cache:
    """Decoded postings and phrase matches, the least recently used dropped past :data:`POSTINGS_CACHE` bytes."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[object, ...], tuple[object, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> object | None:
        with self._lock:
            got = self._kept.get(key)
            if got is None:
                return None
            self._kept.move_to_end(key)
            return got[0]

    def put(self, key: tuple[object, ...], value: object, nbytes: int) -> None:
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (value, nbytes)
                self._size += nbytes
            while self._size > POSTINGS_CACHE and len(self._kept) > 1:
                _, (_, size) = self._kept.popitem(last=False)
                self._size -= size


class Reader:
    """Matches and scores over the postings of one revision of an index (see the module's docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        rows = dict(conn.execute("SELECT key, value FROM bm25_docs").fetchall())
        self.rowids = np.frombuffer(rows["rowids"], dtype=np.int64)
        self._ids, self._ids_end = bytes(rows["ids"]), np.frombuffer(rows["ids_end"], dtype=np.int64)
        self.alive = np.frombuffer(rows["alive"], dtype=np.uint8).astype(bool)
        self.order = np.frombuffer(rows["order"], dtype=np.int32).astype(np.int64)  # the numbers by row id
        self.sorted_rowids = self.rowids[self.order]  # (gathered once: 8 ms at 1M papers, for every search)
        length = np.frombuffer(rows["lengths"], dtype=np.int32).astype(np.float64)
        self.n = int(self.alive.sum())
        avgdl = float(np.sum(length[self.alive], dtype=np.int64)) / self.n if self.n else 1.0
        self.norm = K1 * (1 - B + B * length / avgdl)  # (the denominator's part a paper's length sets)
        self.family = RANKED
        self._cache = _Cache()

    def written(self) -> Reader:
        """This reader over the surface family's postings (the words as written): the same papers and cache."""
        other = copy.copy(self)
        other.family = SURFACE
        return other

    # -- reading ---------------------------------------------------------------------------------------------
    def _cached_get(self, key: tuple[str, Phrase]) -> object | None:
        return self._cache.get((self.family, *key))

    def _cache_put(self, key: tuple[str, Phrase], value: object, nbytes: int) -> None:
        self._cache.put((self.family, *key), value, nbytes)

    def _rows(self, conn: sqlite3.Connection, term: str, columns: str) -> list[tuple[bytes, ...]]:
        row = conn.execute(f"SELECT id FROM {self.family}_terms WHERE term = ?", (term,)).fetchone()
        if row is None:
            return []
        lo = int(row[0]) << SEGMENT_BITS
        sql = f"SELECT {columns} FROM {self.family}_postings WHERE key >= ? AND key < ? ORDER BY key"  # (our names)
        return list(conn.execute(sql, (lo, lo + (1 << SEGMENT_BITS))).fetchall())

    def postings(self, conn: sqlite3.Connection, term: str) -> Postings:
        """A term's postings (empty for a term no paper holds); the segments follow each other in number order."""
        got = self._cached_get(("postings", (term,)))
        if isinstance(got, Postings):
            return got
        rows = self._rows(conn, term, "docs, tf")
        docs = np.concatenate([np.frombuffer(d, dtype=np.int32) for d, _ in rows]).astype(np.int64) if rows else _EMPTY
        tf = (np.concatenate([np.frombuffer(t, dtype=np.uint32).reshape(-1, 2) for _, t in rows])
              if rows else np.zeros((0, 2), dtype=np.uint32))  # fmt: skip
        # the papers this reader knows: the numbers ascend from segment to segment, so postings written after its
        # papers were read come last (a slice, not a mask: copying a common word's postings by mask took 13-18 ms
        # at 1M papers)
        keep = int(np.searchsorted(docs, len(self.alive)))
        p = Postings(docs[:keep], tf[:keep, 0].astype(np.float64), tf[:keep, 1].astype(np.float64))
        self._cache_put(("postings", (term,)), p, p.nbytes)
        return p

    def _instances(self, conn: sqlite3.Connection, term: str) -> np.ndarray:
        """Each position of the term as one sorted key: the paper's number, the column bit and the offset."""
        got = self._cached_get(("instances", (term,)))
        if isinstance(got, np.ndarray):
            return got
        p = self.postings(conn, term)
        pos, _ = self._positions(conn, term)
        keys = (np.repeat(p.docs, (p.title + p.abstract).astype(np.int64)) << 32) | pos.astype(np.int64)
        self._cache_put(("instances", (term,)), keys, keys.nbytes)
        return keys

    def stated(self, conn: sqlite3.Connection, phrase: Phrase) -> Postings:
        """The live papers stating the phrase (its terms at consecutive positions of one column), with counts."""
        if len(phrase) == 1 and self.n == len(self.alive):  # (no paper is dead: the postings as they are, uncopied)
            return self.postings(conn, phrase[0])
        got = self._cached_get(("stated", phrase))
        if isinstance(got, Postings):
            return got
        if len(phrase) == 1:
            p = self.postings(conn, phrase[0])
            live = self.alive[p.docs]
            out = Postings(p.docs[live], p.title[live], p.abstract[live])
        else:
            out = self._consecutive(conn, phrase)
        self._cache_put(("stated", phrase), out, out.nbytes)
        return out

    def in_a_row(self, conn: sqlite3.Connection, slots: Sequence[Sequence[str]]) -> np.ndarray:
        """The numbers of the live papers holding one term of each slot at consecutive positions of one column,
        ascending: FTS5's OR over the phrase of every choice of one term per slot, without making the choices."""
        if not slots or not all(slots):
            return _EMPTY
        # (each term's positions are sorted; a slot's terms are never merged into one array: sorting millions of
        # positions of a common word's forms took seconds at 1M papers)
        at = [[self._instances(conn, t) for t in dict.fromkeys(slot)] for slot in slots]
        rare = int(np.argmin([sum(len(keys) for keys in slot) for slot in at]))
        anchor = np.concatenate(at[rare])
        start = anchor[(anchor & (ABSTRACT - 1)) >= rare] - rare
        for j, slot in enumerate(at):
            if j != rare and len(start):
                hit = np.zeros(len(start), dtype=bool)
                for keys in slot:
                    hit |= _in_sorted(start + j, keys)
                start = start[hit]
        docs = start >> 32
        if len(at[rare]) == 1:  # (sorted: one term's positions, kept in order)
            docs = docs[np.r_[True, docs[1:] != docs[:-1]]] if len(docs) else docs
        else:
            docs = np.unique(docs)
        out: np.ndarray = docs[self.alive[docs]]
        return out

    def _positions(self, conn: sqlite3.Connection, term: str) -> tuple[np.ndarray, np.ndarray]:
        """A term's positions as stored (each posting's run of column bit and offset, one run after another, for
        the postings :meth:`postings` keeps) and where each posting's run starts, then where the last one ends."""
        got = self._cached_get(("positions", (term,)))
        if isinstance(got, tuple):
            return got
        p = self.postings(conn, term)
        counts = (p.title + p.abstract).astype(np.int64)
        pos = np.zeros(0, dtype=np.uint32)
        if len(p.docs):
            # (postings() keeps a prefix of the stored ones: the positions of the first papers, in the same order)
            pos = np.concatenate([np.frombuffer(r[0], dtype=np.uint32) for r in self._rows(conn, term, "pos")])
        out = (pos[: int(counts.sum())], np.r_[0, np.cumsum(counts)])
        self._cache_put(("positions", (term,)), out, out[0].nbytes + out[1].nbytes)
        return out

    def _holds(self, conn: sqlite3.Connection, term: str) -> np.ndarray:
        """Which papers (by number) the term's postings hold, as a mask over every number."""
        got = self._cached_get(("holds", (term,)))
        if isinstance(got, np.ndarray):
            return got
        holds = np.zeros(len(self.alive), dtype=bool)
        holds[self.postings(conn, term).docs] = True
        self._cache_put(("holds", (term,)), holds, holds.nbytes)
        return holds

    def _instances_in(self, conn: sqlite3.Connection, term: str, docs: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """The term's position keys (see :meth:`_instances`) in these papers (ascending numbers whose postings
        hold the term; ``chosen`` marks them among every number), sorted; all of its keys when those are at hand."""
        full = self._cached_get(("instances", (term,)))
        if isinstance(full, np.ndarray):
            return full
        # (where the term's postings hold the papers, by one pass over them: a binary search per paper took 7 ms
        # for 200k papers in the 711k postings of 'model' at 1M papers)
        at = np.flatnonzero(chosen[self.postings(conn, term).docs])
        pos, bounds = self._positions(conn, term)
        starts = bounds[at]
        counts = bounds[at + 1] - starts
        ends = np.cumsum(counts)
        where = np.repeat(starts - (ends - counts), counts) + np.arange(int(ends[-1]) if len(ends) else 0)
        out: np.ndarray = (np.repeat(docs, counts) << 32) | pos[where].astype(np.int64)
        return out

    def _consecutive(self, conn: sqlite3.Connection, phrase: Phrase) -> Postings:
        # the papers holding every term; in them, the rarest term's positions anchor the phrase and each other term
        # must sit at its offset from there (only those papers' positions are read out: a common word holds
        # millions of positions at 1M papers)
        sizes = [len(self.postings(conn, t).docs) for t in phrase]
        if min(sizes) == 0:
            return _NOTHING
        rare = int(np.argmin(sizes))
        docs = self.postings(conn, phrase[rare]).docs
        for j in sorted(range(len(phrase)), key=lambda j: sizes[j])[1:]:
            if len(docs):  # (by masks: a binary search per paper took 8 ms for 'language' in 'model' at 1M)
                docs = docs[self._holds(conn, phrase[j])[docs]]
        if not len(docs):
            return _NOTHING
        chosen = np.zeros(len(self.alive), dtype=bool)
        chosen[docs] = True
        keys = self._instances_in(conn, phrase[rare], docs, chosen)
        start = keys[(keys & (ABSTRACT - 1)) >= rare] - rare
        for j, term in enumerate(phrase):
            if j != rare and len(start):
                start = start[_in_sorted(start + j, self._instances_in(conn, term, docs, chosen))]
        # (the starts stay sorted: each paper's are a run)
        of = start >> 32
        first = np.flatnonzero(np.r_[True, of[1:] != of[:-1]]) if len(of) else _EMPTY
        per = np.diff(np.r_[first, len(of)]).astype(np.float64)
        in_abstract = np.add.reduceat(((start >> 31) & 1).astype(np.float64), first) if len(first) else np.zeros(0)
        found = of[first]
        live = self.alive[found]
        return Postings(found[live], (per - in_abstract)[live], in_abstract[live])

    # -- expressions ----------------------------------------------------------------------------------------
    def groups(self, conn: sqlite3.Connection, expr: Expression) -> list[np.ndarray]:
        """For each group of the expression, which papers (by number) it matches."""
        out = []
        for group in expr:
            mask = self.alive.copy()
            for slot in group:
                in_slot = np.zeros(len(self.alive), dtype=bool)
                for phrase in slot:
                    in_slot[self.stated(conn, phrase).docs] = True
                mask &= in_slot
            out.append(mask)
        return out

    def matches(self, conn: sqlite3.Connection, expr: Expression) -> np.ndarray:
        """The numbers of the live papers the expression matches, ascending: each group's from its smallest slot's
        papers, kept where every other slot holds them (masks over every number, then a pass over them all, took
        3 ms a count at 1M papers)."""
        found = []
        for group in expr:
            if not group:
                found.append(np.flatnonzero(self.alive))
                continue
            slots = sorted(
                ([self.stated(conn, p).docs for p in slot] for slot in group), key=lambda s: sum(map(len, s))
            )
            docs = self._union(slots[0])
            for other in slots[1:]:
                if len(docs):
                    held = np.zeros(len(self.alive), dtype=bool)
                    for d in other:
                        held[d] = True
                    docs = docs[held[docs]]
            found.append(docs)
        return self._union(found) if found else _EMPTY

    def _union(self, arrays: list[np.ndarray]) -> np.ndarray:
        """The numbers in any of these ascending arrays, ascending, once each."""
        if len(arrays) == 1:
            return arrays[0]
        if sum(map(len, arrays)) * 16 < len(self.alive):
            return np.unique(np.concatenate(arrays)) if arrays else _EMPTY
        held = np.zeros(len(self.alive), dtype=bool)
        for a in arrays:
            held[a] = True
        return np.flatnonzero(held)

    def idf(self, papers: int) -> float:
        idf = math.log((self.n - papers + 0.5) / (papers + 0.5))
        return idf if idf > 0.0 else 1e-6

    def scores(
        self, conn: sqlite3.Connection, expr: Expression, weights: tuple[float, float] = (1.0, 1.0)
    ) -> tuple[np.ndarray, np.ndarray]:
        """(numbers of the matching papers, their BM25 over the expression's phrases in order), FTS5's bm25() with
        these column weights (title, abstract)."""
        masks = self.groups(conn, expr)
        if not masks:
            return _EMPTY, np.zeros(0)
        scores = np.zeros(len(self.alive))
        for mask, group in zip(masks, expr, strict=True):
            for slot in group:
                for phrase in slot:
                    docs, impact = self._impact(conn, phrase, weights)
                    where = mask[docs]
                    if where.all():  # (the group is this phrase alone, or every paper stating it meets it)
                        scores[docs] += impact
                    else:
                        scores[docs[where]] += impact[where]
        found = np.flatnonzero(np.logical_or.reduce(masks))
        return found, scores[found]

    def ranked(self, conn: sqlite3.Connection, expr: Expression, n: int) -> list[tuple[int, float]]:
        """:meth:`best` of :meth:`scores`: the best ``n`` (row id, score). An expression of one slot (any of its
        phrases: a search over a question's words) scores only the papers its rarer phrases hold when the papers
        holding none of them cannot reach the n-th score (at most the sum of the commoner phrases' largest
        shares); it scored every paper a common word holds before (350k papers for 'optimization' at 1M)."""
        if len(expr) == 1 and len(expr[0]) == 1 and n > 0:
            got = self._ranked_any(conn, expr[0][0], n)
            if got is not None:
                return got
        return self.best(*self.scores(conn, expr), n)

    def _ranked_any(self, conn: sqlite3.Connection, phrases: list[Phrase], n: int) -> list[tuple[int, float]] | None:
        parts = [self._impact(conn, phrase, (1.0, 1.0)) for phrase in phrases]
        by_size = sorted((i for i, (docs, _) in enumerate(parts) if len(docs)), key=lambda i: len(parts[i][0]))
        # the rarest phrase's papers first, then all but the commonest phrase's
        for k in dict.fromkeys(k for k in (1, len(by_size) - 1) if 0 < k < len(by_size)):
            got = self._ranked_among(parts, set(by_size[:k]), n)
            if got is not None:
                return got
        return None

    def _ranked_among(
        self, parts: list[tuple[np.ndarray, np.ndarray]], rare: set[int], n: int
    ) -> list[tuple[int, float]] | None:
        """:meth:`best` over the papers the ``rare`` phrases hold, or None when a paper holding only the others
        might rank (or fewer than ``n`` papers hold a rare one)."""
        held = np.zeros(len(self.alive), dtype=bool)
        for i in rare:
            held[parts[i][0]] = True
        # (one rare phrase: its papers as they are, ascending; a pass over every number took 1.4 ms at 1M papers)
        found = parts[next(iter(rare))][0] if len(rare) == 1 else np.flatnonzero(held)
        if len(found) < n:
            return None
        rank = np.empty(len(self.alive), dtype=np.int32)  # (read only where held: no need to clear 4 MB)
        rank[found] = np.arange(len(found), dtype=np.int32)
        scores = np.zeros(len(found))
        bound = 0.0
        for i, (docs, impact) in enumerate(parts):  # (in order: each paper's sum is scores()'s, to the bit)
            if i in rare:
                scores[rank[docs]] += impact
            elif len(docs):
                hit = np.flatnonzero(held[docs])
                scores[rank[docs[hit]]] += impact[hit]
                bound += float(impact.max())  # (every share is positive: a paper's sum never exceeds this)
        if np.partition(scores, len(scores) - n)[len(scores) - n] <= bound:
            return None
        return self.best(found, scores, n)

    def _impact(
        self, conn: sqlite3.Connection, phrase: Phrase, weights: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The live papers stating the phrase and what it adds to each one's BM25 (see :meth:`scores`), kept: a
        common word's is a few arithmetic passes over 700k postings at 1M papers, and common words recur."""
        key = (f"impact{weights}", phrase)
        got = self._cached_get(key)
        if isinstance(got, tuple):
            return got
        s = self.stated(conn, phrase)
        f = s.title * weights[0] + s.abstract * weights[1]
        out = (s.docs, self.idf(len(s.docs)) * ((f * (K1 + 1.0)) / (f + self.norm[s.docs])))
        self._cache_put(key, out, out[1].nbytes)
        return out

    def best(self, found: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
        """(row id, score) of the best ``n``, best first; ties by row id."""
        if len(found) > n:
            cut = np.partition(scores, len(scores) - n)[len(scores) - n]  # every paper at the n-th score may rank
            keep = scores >= cut
            found, scores = found[keep], scores[keep]
        key = np.lexsort((self.rowids[found], -scores))[:n]
        return [(int(self.rowids[found[i]]), float(scores[i])) for i in key]

    def paper_ids(self, numbers: np.ndarray) -> list[str]:
        """The paper ids of these numbers."""
        ends = self._ids_end[numbers].tolist()
        starts = np.where(numbers > 0, self._ids_end[np.maximum(numbers - 1, 0)], 0).tolist()
        blob = self._ids
        return [blob[s:e].decode("utf-8") for s, e in zip(starts, ends, strict=True)]

    def numbers(self, rowids: Sequence[int]) -> np.ndarray:
        """The numbers of these row ids' live papers, -1 for a row id the postings do not hold."""
        order = self.order
        want = np.asarray(rowids, dtype=np.int64)
        out = np.full(len(want), -1, dtype=np.int64)
        if len(order):
            # (a paper written again sorts after its older numbers: the live one is the last of its row id)
            right = np.searchsorted(self.sorted_rowids, want, side="right") - 1
            number = order[np.maximum(right, 0)]
            hit = (right >= 0) & (self.rowids[number] == want) & self.alive[number]
            out[hit] = number[hit]
        return out

    def field_scores(
        self, conn: sqlite3.Connection, terms: Sequence[str], rowids: Sequence[int]
    ) -> dict[int, tuple[float, float, float]]:
        """Per given row id holding any of the terms: the BM25 of (title and abstract, title only, abstract only)
        over the terms' OR."""
        numbers = self.numbers(rowids)
        live = numbers >= 0
        want = numbers[live]
        out = np.zeros((3, len(want)))
        hit = np.zeros(len(want), dtype=bool)
        if len(want):
            norm = self.norm[want]
            for term in terms:
                s = self.stated(conn, (term,))
                has = _in_sorted(want, s.docs)
                at = np.minimum(np.searchsorted(s.docs, want), max(len(s.docs) - 1, 0))
                title = np.where(has, s.title[at] if len(s.docs) else 0.0, 0.0)
                abstract = np.where(has, s.abstract[at] if len(s.docs) else 0.0, 0.0)
                idf = self.idf(len(s.docs))
                for row, f in enumerate((title + abstract, title, abstract)):
                    out[row] += idf * ((f * (K1 + 1.0)) / (f + norm))
                hit |= has
        ids = np.asarray(rowids, dtype=np.int64)[live]
        return {int(ids[i]): (float(out[0, i]), float(out[1, i]), float(out[2, i])) for i in np.flatnonzero(hit)}
