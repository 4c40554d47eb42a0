"""BM25 over papers with SQLite FTS5, derived from the Chroma papers collection.

The index file is a cache: it records the store revision and paper count it reflects, and the time
up to which it holds every written paper. When the store changes, the papers written since then are
upserted (rows are keyed by a hash of the paper id); when that does not bring the counts level, or the
file is missing or from an older format, it is rebuilt into a temporary file and swapped in.
User text never reaches FTS5 as syntax: queries are reduced to quoted word tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from askpapers.vectorstore import bm25
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.features import DocText, encode
from askpapers.vectorstore.store import Store
from askpapers.vectorstore.text import STOPWORDS, stem, tokens
from askpapers.vectorstore.types import Filters, Listed, Paper

TOKENIZE = "porter unicode61 remove_diacritics 2"  # FTS5's tokenizer for titles and abstracts (and queries)
# The surface postings' (vectorstore.bm25, family "surface"): the words as written, lower-cased, split as
# vectorstore.text.tokens splits them (letters and digits), without stems, so that a query can ask for the forms a
# phrase's words take ("transformer", "transformers") and not every word of their stem ("transform",
# "transformation").
SURFACE_TOKENIZE = "unicode61 remove_diacritics 0"
_SCHEMA = (
    f"""
CREATE VIRTUAL TABLE papers USING fts5(
    paper_id UNINDEXED, title, abstract, venue UNINDEXED, year UNINDEXED, has_code UNINDEXED,
    tokenize = '{TOKENIZE}'
);
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE words(word TEXT PRIMARY KEY, stem TEXT NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX words_by_stem ON words(stem);
CREATE TABLE features(rowid INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE listing(rowid INTEGER PRIMARY KEY, paper_id TEXT NOT NULL, title TEXT NOT NULL, venue TEXT NOT NULL,
    year INTEGER);
CREATE TABLE records(rowid INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE vectors(rowid INTEGER PRIMARY KEY, paper BLOB NOT NULL, chunks BLOB NOT NULL);
"""
    + bm25.SCHEMA
)
# A source of stored embeddings: the paper vectors and the chunk vectors (rows in chunk order) of these papers, as
# Store.paper_vectors and Store.chunk_vectors read them from Chroma.
VectorSource = Callable[[list[str]], tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]
MAX_WORD = 40  # longer tokens (hashes, URLs run together) are not vocabulary


def phrase_expression(phrases: list[str], max_phrases: int = 8) -> str:
    """An FTS5 MATCH string for any of the phrases, each as consecutive (stemmed) words."""
    return " OR ".join(f'"{part}"' for part in _phrase_parts(phrases, max_phrases))


def _phrase_parts(phrases: list[str], max_phrases: int = 8) -> list[str]:
    """The phrases :func:`phrase_expression` quotes, each once."""
    parts = []
    for ph in phrases[:max_phrases]:
        words = _phrase_words(ph)
        if words:
            parts.append(" ".join(words))
    return list(dict.fromkeys(parts))


def _phrase_words(phrase: str) -> list[str]:
    """The words of a phrase as :func:`phrase_expression` quotes them."""
    return tokens(phrase)[:12]


def phrase_key(phrase: str) -> str:
    """The terms FTS5 searches for the phrase (its tokenizer's, Porter stems over unicode61, in order): phrases of
    one key state the same papers ("generative models", "generative modelling", "generatively modeling"), so a
    count of one is the count of all. FTS5's own tokenizer says it, not a stemmer of ours: PyStemmer's Porter
    differs from it on about 90 of wordfreq's 47k commonest words ("technology": "technologi" against
    "technolog")."""
    text = " ".join(_phrase_words(phrase))
    return " ".join(bm25.query_terms([text], TOKENIZE)[0]) if text else ""


def all_words_expression(phrases: list[str], max_phrases: int = 8) -> str:
    """An FTS5 MATCH string for papers holding every content word of any one phrase, anywhere."""
    return " OR ".join(
        "(" + " AND ".join(f'"{w}"' for w in part) + ")" for part in _all_words_parts(phrases, max_phrases)
    )


def _all_words_parts(phrases: list[str], max_phrases: int = 8) -> list[tuple[str, ...]]:
    """The groups of words :func:`all_words_expression` asks for, each once."""
    parts = []
    for ph in phrases[:max_phrases]:
        words = tuple(w for w in dict.fromkeys(tokens(ph)) if w not in STOPWORDS)[:8]
        if words:
            parts.append(words)
    return list(dict.fromkeys(parts))


def surface_slots(query: list[list[str]]) -> list[list[str]] | None:
    """A surface query's slots as the words asked for (each word's first token: only letters and digits are
    words), or None when a slot asks for no word (the query matches nothing)."""
    slots = [list(dict.fromkeys(t for word in slot for t in tokens(word)[:1])) for slot in query]
    return slots if slots and all(slots) else None


def match_expression(query: str, max_terms: int = 32, leave_out: Collection[str] = ()) -> str:
    """An FTS5 MATCH string: the query's content words (but those in ``leave_out``), each quoted, OR-ed together."""
    words = [t for t in query_words(query)[:max_terms] if t not in leave_out]
    return " OR ".join(f'"{w}"' for w in words)


def query_words(query: str) -> list[str]:
    """The distinct content words of a BM25 query, in order."""
    return [t for t in dict.fromkeys(tokens(query)) if t not in STOPWORDS]


def common_words(words: Iterable[str], papers_with: Callable[[str], int], n: int) -> set[str]:
    """The words a BM25 search may leave out of its match: those at least half of the ``n`` papers hold
    (``papers_with``: how many papers hold a word, as the index's tokenizer stems it). BM25 as FTS5 scores it gives
    such a word an idf of 1e-6 (``log((n - df + 0.5) / (df + 0.5))`` is not positive), so matching on it only adds
    papers that score about nothing, while reading its postings (half the papers or more) was a third of a search
    at 50k papers. None when every word is that common (the search then matches on them all)."""
    words = list(words)
    common = {w for w in words if n > 0 and 2 * papers_with(w) >= n}
    return common if len(common) < len(words) else set()


# rows keyed by rowid_of(paper_id); the surface vocabulary with document frequencies; text features; the listing
# (each paper's shown title, venue and year: what the Papers tab sorts and filters by, without the abstracts); the
# records (each paper's stored fields and chunk offsets, so that questions read papers and chunk texts here, not
# from Chroma, whose reads of documents cost about half a millisecond each); the vectors (each paper's embedding and
# its chunks', float32 as Chroma holds them: the reranker reads a few hundred per question, and Chroma's get of them
# cost 6 ms per 250 papers at 50k)
# the BM25 postings of the words as stemmed and as written (the latter for the papers stating a phrase in the
# forms the matcher accepts: they replaced an FTS5 table of those words in format 12)
FORMAT = "12"


def rowid_of(paper_id: str) -> int:
    """A stable 63-bit row id for a paper id."""
    return int.from_bytes(hashlib.blake2b(paper_id.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def indexed_words(title: str, abstract: str) -> set[str]:
    """The distinct lower-case words of a paper's indexed text (its real title and its abstract)."""
    return {w for w in tokens(f"{title} {abstract}") if len(w) <= MAX_WORD}


def _count_words(conn: sqlite3.Connection, counts: dict[str, int]) -> None:
    """Add ``counts`` (word -> change in document frequency) to the vocabulary; words at 0 are dropped."""
    conn.executemany(
        "INSERT INTO words(word, stem, df) VALUES (?,?,?) ON CONFLICT(word) DO UPDATE SET df = df + excluded.df",
        [(w, stem(w), n) for w, n in counts.items() if n],
    )
    conn.execute("DELETE FROM words WHERE df <= 0")


def _vector_rows(ids: list[str], vectors: VectorSource) -> list[tuple[int, bytes, bytes]]:
    """The vectors table's rows of these papers (those the source has a paper vector for): float32 bytes, the
    chunks' rows one after another (empty for a paper without chunks)."""
    papers, chunks = vectors(ids)
    empty = np.zeros((0,), dtype=np.float32)
    return [(rowid_of(pid), np.asarray(v, dtype=np.float32).tobytes(),
             np.asarray(chunks.get(pid, empty), dtype=np.float32).tobytes()) for pid, v in papers.items()]  # fmt: skip


def _features(batch: list[tuple[Any, ...]]) -> list[tuple[int, bytes]]:
    """The reranker's text data of each row (rowid, title, abstract), derived once here rather than per query."""
    return [(r[0], encode(r[2], r[3])) for r in batch]


def _record(p: Paper, stamp: float | None = None) -> tuple[int, str]:
    """A paper's stored fields but its abstract (the papers table holds that), its chunks' offsets, and when its
    record was written to the store (``stamp``, if known: an update skips the papers it has at that stamp)."""
    data = {"title": p.title, "title_derived": p.title_derived, "venue": p.venue, "year": p.year, "url": p.url,
            "authors": list(p.authors), "keywords": list(p.keywords), "code_urls": list(p.code_urls),
            "source": p.source, "spans": [list(x) for x in p.spans]}  # fmt: skip
    if stamp is not None:
        data["stamp"] = stamp
    return rowid_of(p.paper_id), json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _records(chunk: list[Paper], stamps: dict[str, float] | None) -> list[tuple[int, str]]:
    """The records of these papers, each with its stamp taken out of ``stamps`` (a rebuild's grows as the papers
    come: it holds only those not yet written)."""
    return [_record(p, stamps.pop(p.paper_id, None) if stamps is not None else None) for p in chunk]


def _from_record(paper_id: str, abstract: str, data: str) -> Paper:
    d = json.loads(data)
    return Paper(paper_id=paper_id, title=d["title"], abstract=abstract, venue=d["venue"], year=d["year"],
                 url=d["url"], authors=tuple(d["authors"]), keywords=tuple(d["keywords"]),
                 code_urls=tuple(d["code_urls"]), title_derived=d["title_derived"], source=d["source"],
                 spans=tuple((int(a), int(b)) for a, b in d["spans"]))  # fmt: skip


def _listed(p: Paper) -> tuple[Any, ...]:
    return (rowid_of(p.paper_id), p.paper_id, p.title, p.venue, p.year)


def _row(p: Paper) -> tuple[Any, ...]:
    return (rowid_of(p.paper_id), p.paper_id, p.title if not p.title_derived else "", p.abstract, p.venue, p.year,
            int(p.has_code))  # fmt: skip


class LexicalIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._counted: dict[str, int] = {}  # papers holding a common word (FTS5's count), for _counted_key
        self._counted_key: tuple[int, str, int] | None = None
        self._bm25: tuple[tuple[int, str, str], bm25.Reader] | None = None  # (index revision, its postings' reader)

    def _conn(self) -> sqlite3.Connection | None:
        try:  # (one stat: whether the file is there, and whether it is still the one this thread opened)
            ino = self.path.stat().st_ino
        except FileNotFoundError:
            return None
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "ino", None) != ino:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            self._local.conn, self._local.ino = conn, ino
        return conn

    def journal(self) -> Path:
        """SQLite's rollback journal of the index file: left behind ("hot") by a writer killed mid-update."""
        return self.path.with_name(self.path.name + "-journal")

    def recover(self) -> None:
        """Roll back an update a killed writer left half done. SQLite does it when it opens the file for writing;
        a read-only reader cannot ("attempt to write a readonly database"), so it would take the index for damaged
        and rebuild it whole (20 minutes at 700k papers), where the rolled-back index only needs the papers written
        since its time mark."""
        if not (self.path.exists() and self.journal().exists()):
            return
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError:
            pass  # (damaged: state() says so, and the index is rebuilt)
        finally:
            conn.close()

    def state(self) -> dict[str, str] | None:
        """The index's meta data (revision, count, since), or None when it is missing, damaged or outdated."""
        conn = self._conn()
        if conn is None:
            return None
        try:
            rows = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}
        except sqlite3.DatabaseError:
            return None
        return rows if rows.get("format") == FORMAT else None

    def built_from(self) -> tuple[str, int] | None:
        st = self.state()
        return None if st is None else (st.get("revision", ""), int(st.get("count", -1)))

    def rebuild(
        self, papers: Iterable[Paper], revision: str, since: float = 0.0, vectors: VectorSource | None = None,
        stamps: dict[str, float] | None = None,
    ) -> int:  # fmt: skip
        """Write a fresh index from ``papers`` (and their stored embeddings from ``vectors``, if given; the times
        their records were written from ``stamps``, taken out as each paper is written) and swap it in atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        n = 0
        try:
            conn.executescript(_SCHEMA)
            counts: Counter[str] = Counter()
            venues: set[str] = set()
            years: set[int] = set()
            postings = bm25.Builder(conn, TOKENIZE, SURFACE_TOKENIZE)
            for chunk in _batches(papers, 2000):
                batch = [_row(p) for p in chunk]
                postings.add([r[:4] for r in batch])
                venues.update(p.venue for p in chunk if p.venue)
                years.update(p.year for p in chunk if p.year is not None)
                conn.executemany("INSERT OR REPLACE INTO papers(rowid, paper_id, title, abstract, venue, year, "
                                 "has_code) VALUES (?,?,?,?,?,?,?)", batch)  # fmt: skip
                conn.executemany("INSERT OR REPLACE INTO features(rowid, data) VALUES (?,?)", _features(batch))
                conn.executemany("INSERT OR REPLACE INTO listing VALUES (?,?,?,?,?)", [_listed(p) for p in chunk])
                conn.executemany("INSERT OR REPLACE INTO records VALUES (?,?)", _records(chunk, stamps))
                if vectors is not None:
                    rows = _vector_rows([p.paper_id for p in chunk], vectors)
                    conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?,?,?)", rows)
                for row in batch:
                    counts.update(indexed_words(row[2], row[3]))
            _count_words(conn, counts)
            postings.write()
            n = int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])
            meta = [("revision", revision), ("count", str(n)), ("since", repr(since)), ("format", FORMAT),
                    *_facets_meta(venues, years)]  # fmt: skip
            conn.executemany("INSERT INTO meta VALUES (?,?)", meta)
            conn.commit()
            # The full-text index merged into one segment, and the file rewritten table by table (the batches above
            # interleave the tables' pages): at 50k papers, 2.7 s more, and BM25 searches 10.1 -> 9.2 ms.
            conn.execute("INSERT INTO papers(papers) VALUES ('optimize')")
            conn.commit()
            conn.execute("VACUUM")
        finally:
            conn.close()
        # A journal beside the file is the old file's (the new one was written under another name): SQLite would
        # roll its pages back into the new file at the next write, which damages it. It goes first.
        self.journal().unlink(missing_ok=True)
        os.replace(tmp, self.path)
        return n

    def update(
        self, papers: Iterable[Paper], revision: str, since: float, vectors: VectorSource | None = None,
        stamps: dict[str, float] | None = None,
    ) -> int:  # fmt: skip
        """Upsert ``papers`` (and their embeddings from ``vectors``; without, their stored ones are dropped, as
        they may be stale; their stamps as :meth:`rebuild` takes them) in place, in one transaction; returns the
        number of papers the index now holds."""
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            with conn:
                meta_now = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                known = meta_now.get("count", "")
                n = int(known) if known.isdigit() else int(conn.execute("SELECT count(*) FROM listing").fetchone()[0])
                venues, years = _facets_of(meta_now)
                moved = False  # a replaced paper whose venue or year changed
                added: list[tuple[int, str, str, str]] = []  # the BM25 postings' new rows
                for chunk in _batches(papers, 2000):
                    batch = [_row(p) for p in chunk]
                    counts: Counter[str] = Counter()
                    for r in batch:  # the vocabulary loses the replaced text's words and gains the new ones
                        old = conn.execute("SELECT title, abstract, venue, year FROM papers WHERE rowid = ?",
                                           (r[0],)).fetchone()  # fmt: skip
                        if old is not None:
                            counts.subtract(indexed_words(old[0], old[1]))
                            moved = moved or (old[2] or "") != (r[4] or "") or _year(old[3]) != _year(r[5])
                        else:
                            n += 1
                        counts.update(indexed_words(r[2], r[3]))
                    added += [r[:4] for r in batch]
                    if venues is not None and years is not None:
                        venues.update(p.venue for p in chunk if p.venue)
                        years.update(p.year for p in chunk if p.year is not None)
                    _count_words(conn, counts)
                    conn.executemany("DELETE FROM papers WHERE rowid = ?", [(r[0],) for r in batch])
                    conn.executemany("INSERT INTO papers(rowid, paper_id, title, abstract, venue, year, has_code) "
                                     "VALUES (?,?,?,?,?,?,?)", batch)  # fmt: skip
                    conn.executemany("INSERT OR REPLACE INTO features(rowid, data) VALUES (?,?)", _features(batch))
                    conn.executemany("INSERT OR REPLACE INTO listing VALUES (?,?,?,?,?)", [_listed(p) for p in chunk])
                    conn.executemany("INSERT OR REPLACE INTO records VALUES (?,?)", _records(chunk, stamps))
                    conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(r[0],) for r in batch])
                    if vectors is not None:
                        rows = _vector_rows([p.paper_id for p in chunk], vectors)
                        conn.executemany("INSERT INTO vectors VALUES (?,?,?)", rows)
                bm25.update(conn, TOKENIZE, SURFACE_TOKENIZE, added)
                # (a paper that moved to another venue or year may have taken the last paper of its old one away:
                # counted again then; a scan of every row, 0.5 s at 900k papers)
                if moved or venues is None or years is None:
                    venues, years = _scanned_facets(conn)
                meta = [("revision", revision), ("count", str(n)), ("since", repr(since)), *_facets_meta(venues, years)]
                conn.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", meta)
        finally:
            conn.close()
        return n

    def stamps(self, paper_ids: Iterable[str]) -> dict[str, float]:
        """When the store's records of these papers were written, for those the index holds as written then (a
        paper indexed before stamps were kept has none)."""
        conn = self._conn()
        wanted = list(dict.fromkeys(paper_ids))
        out: dict[str, float] = {}
        if conn is None:
            return out
        for i in range(0, len(wanted), 500):
            part = {rowid_of(pid): pid for pid in wanted[i : i + 500]}
            sql = ("SELECT l.rowid, l.paper_id, json_extract(r.data, '$.stamp') FROM listing AS l JOIN records AS r "
                   f"ON r.rowid = l.rowid WHERE l.rowid IN ({','.join('?' * len(part))})")  # fmt: skip
            for rowid, pid, stamp in conn.execute(sql, list(part)):
                if stamp is not None and part.get(rowid) == pid:
                    out[str(pid)] = float(stamp)
        return out

    def doc_texts(self, paper_ids: Iterable[str]) -> dict[str, DocText]:
        """The reranker's text data of these papers (those the index holds), as stored when they were indexed."""
        return {
            pid: DocText.decode(data, abstract) for pid, data, abstract in self._with_abstract("features", paper_ids)
        }

    def papers(self, paper_ids: Iterable[str]) -> dict[str, Paper]:
        """The stored records of these papers (those the index holds), as they were when indexed."""
        return {
            pid: _from_record(pid, abstract, data) for pid, data, abstract in self._with_abstract("records", paper_ids)
        }

    def _with_abstract(self, table: str, paper_ids: Iterable[str]) -> Iterator[tuple[str, Any, str]]:
        """(paper id, data, abstract) of these papers' rows of ``table`` (features or records; a name from this
        module, never user text), read 500 rows a query."""
        conn = self._conn()
        rowids = {rowid_of(pid): pid for pid in dict.fromkeys(paper_ids)}
        if conn is None or not rowids:
            return
        for batch in _batches(list(rowids), 500):
            marks = ",".join("?" * len(batch))
            sql = (f"SELECT t.rowid, t.data, p.abstract FROM {table} AS t JOIN papers AS p ON p.rowid = t.rowid "
                   f"WHERE t.rowid IN ({marks})")  # fmt: skip
            for rowid, data, abstract in conn.execute(sql, batch):
                yield rowids[rowid], data, abstract

    def vectors(self, paper_ids: Iterable[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The stored embeddings of these papers (those the index holds them for): the paper's vector and its
        chunks' (one row each, in chunk order; no rows for a paper without chunks), as Chroma held them when the
        papers were indexed."""
        conn = self._conn()
        rowids = {rowid_of(pid): pid for pid in dict.fromkeys(paper_ids)}
        if conn is None or not rowids:
            return {}
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for batch in _batches(list(rowids), 500):
            marks = ",".join("?" * len(batch))
            for rowid, paper, chunks in conn.execute(
                f"SELECT rowid, paper, chunks FROM vectors WHERE rowid IN ({marks})", batch
            ):
                v = np.frombuffer(paper, dtype=np.float32)
                out[rowids[rowid]] = (v, np.frombuffer(chunks, dtype=np.float32).reshape(-1, len(v)))
        return out

    def chunk_texts(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        """The text of these chunks (ids ``<paper id>:<position>``), cut from their abstracts by the offsets the
        store recorded; chunks of papers without recorded offsets are left out (read them from Chroma)."""
        wanted: dict[str, list[tuple[str, int]]] = {}
        for cid in dict.fromkeys(chunk_ids):
            pid, _, position = cid.rpartition(":")
            if position.isdigit():
                wanted.setdefault(pid, []).append((cid, int(position)))
        out: dict[str, str] = {}
        for pid, p in self.papers(list(wanted)).items():
            for cid, i in wanted[pid]:
                if i < len(p.spans):
                    s, e = p.spans[i]
                    out[cid] = p.abstract[s:e]
        return out

    # -- the vocabulary, for reading questions ---------------------------------------------------------------
    def word_df(self, words: Iterable[str]) -> dict[str, int]:
        """Document frequency of each word the corpus uses (words it never uses are left out)."""
        conn = self._conn()
        wanted = list(dict.fromkeys(words))
        if conn is None or not wanted:
            return {}
        out: dict[str, int] = {}
        for batch in _batches(wanted, 500):
            marks = ",".join("?" * len(batch))
            out.update(conn.execute(f"SELECT word, df FROM words WHERE word IN ({marks})", batch).fetchall())
        return out

    def words_with_stems(self, stems: Iterable[str]) -> list[tuple[str, int]]:
        """(word, document frequency) of the corpus words whose stem is one of ``stems``."""
        conn = self._conn()
        wanted = list(dict.fromkeys(stems))
        if conn is None or not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        return list(conn.execute(f"SELECT word, df FROM words WHERE stem IN ({marks})", wanted).fetchall())

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        """Every word the corpus uses at least ``min_df`` times, with its document frequency."""
        conn = self._conn()
        if conn is None:
            return []
        return list(conn.execute("SELECT word, df FROM words WHERE df >= ?", (min_df,)).fetchall())

    def phrase_count(self, phrase: str, filters: Filters | None = None) -> int:
        """How many papers state the phrase (consecutive stemmed words)."""
        expr = phrase_expression([phrase])
        conn = self._conn()
        if not expr or conn is None:
            return 0
        found = self._postings_matches([[_phrase_parts([phrase])]])
        if found is not None:
            return len(found)
        return int(conn.execute("SELECT count(*) FROM papers WHERE papers MATCH ?", (expr,)).fetchone()[0])

    def facet_count(self, facets: list[list[str]]) -> int:
        """How many papers state a phrase of every facet (each facet: any of its phrases)."""
        parts = [phrase_expression(f) for f in facets]
        conn = self._conn()
        if conn is None or not all(parts):
            return 0
        found = self._postings_matches([[_phrase_parts(f) for f in facets]])
        if found is not None:
            return len(found)
        expr = " AND ".join(f"({p})" for p in parts)
        return int(conn.execute("SELECT count(*) FROM papers WHERE papers MATCH ?", (expr,)).fetchone()[0])

    def venues(self) -> list[str]:
        """The distinct venues of the indexed papers."""
        conn = self._conn()
        if conn is None:
            return []
        venues, _ = _facets_of(dict(conn.execute("SELECT key, value FROM meta WHERE key = 'venues'").fetchall()))
        if venues is None:  # (an index written before they were recorded)
            venues, _ = _scanned_facets(conn)
        return sorted(venues)

    def years(self) -> list[int]:
        """The distinct years of the indexed papers, newest first."""
        conn = self._conn()
        if conn is None:
            return []
        _, years = _facets_of(dict(conn.execute("SELECT key, value FROM meta WHERE key = 'years'").fetchall()))
        if years is None:  # (an index written before they were recorded)
            _, years = _scanned_facets(conn)
        return sorted(years, reverse=True)

    def listing(self) -> list[Listed]:
        """Every paper's id, title (as shown: derived when it had none), venue and year, in row order (from the
        listing table: no abstract is read)."""
        conn = self._conn()
        if conn is None:
            return []
        rows = conn.execute("SELECT paper_id, title, venue, year FROM listing")
        return [Listed(str(pid), str(t or ""), str(v or ""), _year(y)) for pid, t, v, y in rows]

    def sample_ids(self, n: int) -> list[str]:
        """The ids of the ``n`` papers with the smallest row ids: a hash of the id (:func:`rowid_of`), so a sample
        that does not depend on the order papers came in, and stays the same as papers are added (each is in or
        out by its own id). Reads ``n`` rows of the listing, in row-id order."""
        conn = self._conn()
        if conn is None or n <= 0:
            return []
        return [str(pid) for (pid,) in conn.execute("SELECT paper_id FROM listing ORDER BY rowid LIMIT ?", (n,))]

    def size(self) -> int:
        """Papers in the index: the count its last build or update recorded (one row read; ``count(*)`` of an FTS5
        table reads every row)."""
        conn = self._conn()
        if conn is None:
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key = 'count'").fetchone()
        return int(row[0]) if row is not None else int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])

    def search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """(paper_id, bm25 score; higher is better) for the best ``n`` papers with any of the query's words that
        score (words at least half the papers hold are left out: :func:`common_words`)."""
        words = query_words(query)
        leave_out = self._common(words)
        kept = [w for w in words[:32] if w not in leave_out]
        return self._ranked([[kept]] if kept else [], match_expression(query, leave_out=leave_out), n, filters)

    def _reader(self, conn: sqlite3.Connection) -> bm25.Reader:
        """The BM25 postings' reader of the index's current revision (loaded once per revision)."""
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('revision', 'count')").fetchall())
        key = (self._local.ino, meta.get("revision", ""), meta.get("count", ""))
        with self._lock:
            if self._bm25 is not None and self._bm25[0] == key:
                return self._bm25[1]
        reader = bm25.Reader(conn)
        with self._lock:
            self._bm25 = (key, reader)
        return reader

    def _expression(self, texts: list[list[list[str]]]) -> bm25.Expression | None:
        """The postings' form of an FTS5 expression given as texts (OR over groups, AND over slots, OR over the
        texts FTS5 quotes): each text as the terms FTS5's tokenizer makes of it. None when a text makes no term
        (FTS5 then reads the expression) or the index has no postings."""
        flat = [t for group in texts for slot in group for t in slot]
        terms = iter(bm25.query_terms(flat, TOKENIZE))
        expr = [[[tuple(next(terms)) for _ in slot] for slot in group] for group in texts]
        return None if any(not ph for group in expr for slot in group for ph in slot) else expr

    def _postings_matches(self, texts: list[list[list[str]]]) -> np.ndarray | None:
        """The numbers of the papers an expression (see :meth:`_expression`) matches, from the postings."""
        conn = self._conn()
        expr = self._expression(texts)
        if conn is None or expr is None:
            return None
        return self._reader(conn).matches(conn, expr)

    def _ranked(
        self, texts: list[list[list[str]]], fts: str, n: int, filters: Filters | None
    ) -> list[tuple[str, float]]:
        """The best ``n`` papers an expression matches, by bm25: from the postings (``texts``, see
        :meth:`_expression`) without filters, else FTS5 (``fts``, the same expression as its MATCH string)."""
        conn = self._conn()
        if not fts or conn is None:
            return []
        expr = self._expression(texts) if filters is None or filters.empty else None
        if expr is None:
            return self._match(fts, n, filters)
        return _with_ids(conn, self._reader(conn).ranked(conn, expr, n))

    def _paper_ids(self, numbers: np.ndarray) -> set[str]:
        conn = self._conn()
        return set() if conn is None or not len(numbers) else set(self._reader(conn).paper_ids(numbers))

    def _common(self, words: list[str]) -> set[str]:
        """:func:`common_words` as FTS5 counts them. Only a word whose family (the corpus words of its stem) is
        held by half the papers, counted with repeats, can be that common; FTS5 then counts it exactly (a few ms
        for a word that common), kept for the index's revision (the common words of a corpus are few, and recur)."""
        conn = self._conn()
        if conn is None or not words:
            return set()
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('revision', 'count')").fetchall())
        total = int(meta.get("count", 0))
        key = (self._local.ino, meta.get("revision", ""), total)
        by_stem = {w: stem(w) for w in words}
        marks = ",".join("?" * len(set(by_stem.values())))
        family = dict(conn.execute(f"SELECT stem, sum(df) FROM words WHERE stem IN ({marks}) GROUP BY stem",
                                   list(set(by_stem.values()))).fetchall())  # fmt: skip

        def papers_with(word: str) -> int:
            if 2 * family.get(by_stem[word], 0) < total:
                return 0  # (at most that many: not common)
            with self._lock:
                if self._counted_key != key:
                    self._counted, self._counted_key = {}, key
                got = self._counted.get(word)
            if got is None:
                sql = "SELECT count(*) FROM papers WHERE papers MATCH ?"
                got = int(conn.execute(sql, (f'"{word}"',)).fetchone()[0])
                with self._lock:
                    if self._counted_key == key:
                        self._counted[word] = got
            return got

        return common_words(words, papers_with, total)

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers that contain one of the phrases (words consecutive, after stemming), best bm25 first."""
        return self._ranked([[_phrase_parts(phrases)]], phrase_expression(phrases), n, filters)

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers that state a phrase of every facet (each facet: any of its phrases), best bm25 first."""
        parts = [phrase_expression(f) for f in facets]
        expr = " AND ".join(f"({p})" for p in parts if p)
        return self._ranked([[_phrase_parts(f) for f, p in zip(facets, parts, strict=True) if p]], expr, n, filters)

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers holding every content word of one of the phrases, anywhere (stemmed), best bm25 first."""
        groups = [[[w] for w in part] for part in _all_words_parts(phrases)]
        return self._ranked(groups, all_words_expression(phrases), n, filters)

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper :meth:`phrase_search` finds, unranked: no BM25 score or sort for each of thousands."""
        return self._unranked([[_phrase_parts(phrases)]], phrase_expression(phrases), filters)

    def all_words_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper :meth:`all_words_search` finds, unranked."""
        groups = [[[w] for w in part] for part in _all_words_parts(phrases)]
        return self._unranked(groups, all_words_expression(phrases), filters)

    def _unranked(self, texts: list[list[list[str]]], fts: str, filters: Filters | None) -> set[str]:
        """Every paper an expression matches: from the postings (``texts``, see :meth:`_expression`) without
        filters, else FTS5 (``fts``, its MATCH string)."""
        if not fts:
            return set()
        found = self._postings_matches(texts) if filters is None or filters.empty else None
        return self._ids(fts, filters) if found is None else self._paper_ids(found)

    def surface_ids(self, queries: list[list[list[str]]], in_a_row: bool = True) -> set[str]:
        """Every paper whose words, as written (no stems), meet one of the queries. A query is a list of slots,
        each slot the words that may fill it: with ``in_a_row``, the slots' words consecutive (a phrase: "graph
        neural network" or "graph neural networks"); without, each slot's word anywhere in the paper."""
        conn = self._conn()
        asked = [slots for query in queries if (slots := surface_slots(query)) is not None]
        if conn is None or not asked:
            return set()
        reader = self._reader(conn).written()
        words = list(dict.fromkeys(w for slots in asked for slot in slots for w in slot))
        terms = dict(zip(words, map(tuple, bm25.query_terms(words, SURFACE_TOKENIZE)), strict=True))
        found: list[np.ndarray] = []
        for slots in asked:
            options = [[terms[w] for w in slot if terms[w]] for slot in slots]
            if not all(options):
                continue  # (a word no term is made of: FTS5 finds nothing for it)
            if not in_a_row:
                found.append(reader.matches(conn, [options]))
            elif all(len(t) == 1 for slot in options for t in slot):
                found.append(reader.in_a_row(conn, [[t[0] for t in slot] for slot in options]))
            else:  # (a word of several terms: each choice of one word per slot as one phrase)
                phrases: list[bm25.Phrase] = [()]
                for slot in options:
                    phrases = [p + t for p in phrases for t in slot]
                found.append(reader.matches(conn, [[phrases]]))
        return self._paper_ids(np.unique(np.concatenate(found))) if found else set()

    def field_scores(self, query: str, paper_ids: list[str]) -> dict[str, tuple[float, float, float]]:
        """BM25 of the query's words in each given paper: (title and abstract, title only, abstract only); higher
        is better, and a paper holding none of the words is left out. One scan, bounded by the ids given."""
        expr = match_expression(query)
        conn = self._conn()
        if not expr or conn is None or not paper_ids:
            return {}
        rowids = {rowid_of(pid): pid for pid in paper_ids}
        words = query_words(query)[:32]
        terms = bm25.query_terms(words, TOKENIZE)
        if all(len(t) == 1 for t in terms):
            got = self._reader(conn).field_scores(conn, [t[0] for t in terms], list(rowids))
            return {rowids[r]: s for r, s in got.items()}
        marks = ",".join("?" * len(rowids))
        sql = (
            "SELECT rowid, bm25(papers, 0, 1.0, 1.0), bm25(papers, 0, 1.0, 0.0), bm25(papers, 0, 0.0, 1.0) "
            f"FROM papers WHERE papers MATCH ? AND +rowid IN ({marks})"  # one MATCH scan, then the filter
        )
        rows = conn.execute(sql, [expr, *rowids]).fetchall()
        return {rowids[r]: (-float(a), -float(t), -float(b)) for r, a, t, b in rows if r in rowids}

    def _ids(self, expr: str, filters: Filters | None) -> set[str]:
        conn = self._conn()
        if not expr or conn is None:
            return set()
        # The matching row ids come from the full-text index alone; their paper ids from the listing. Reading
        # paper_id from the FTS5 table loads each matching row's stored text, abstract and all: at 50k papers,
        # 16 ms for the 3,876 papers stating "language models", against 7 ms this way.
        sql, args = _filtered("SELECT rowid FROM papers WHERE papers MATCH ?", expr, filters)
        return {str(pid) for (pid,) in conn.execute(f"SELECT paper_id FROM listing WHERE rowid IN ({sql})", args)}

    def _match(self, expr: str, n: int, filters: Filters | None) -> list[tuple[str, float]]:
        conn = self._conn()
        if not expr or conn is None:
            return []
        # Rank by row id first, then look up the ids of the top n only: reading paper_id for every matching
        # row (tens of thousands for a common word at 50k papers) cost a fifth of the query.
        sql, args = _filtered("SELECT rowid, bm25(papers, 0, 1.0, 1.0) AS s FROM papers WHERE papers MATCH ?", expr,
                              filters)  # fmt: skip
        sql += " ORDER BY s LIMIT ?"
        args.append(n)
        return _with_ids(conn, [(r, -float(s)) for r, s in conn.execute(sql, args).fetchall()])


def _with_ids(conn: sqlite3.Connection, ranked: list[tuple[int, float]]) -> list[tuple[str, float]]:
    """(paper id, score) for ranked (row id, score): the ids of these rows only, looked up in the listing."""
    if not ranked:
        return []
    marks = ",".join("?" * len(ranked))
    ids = dict(conn.execute(f"SELECT rowid, paper_id FROM listing WHERE rowid IN ({marks})", [r for r, _ in ranked]))
    return [(str(ids[r]), s) for r, s in ranked if r in ids]


def _filtered(sql: str, expr: str, filters: Filters | None) -> tuple[str, list[Any]]:
    """An FTS5 ``MATCH`` query with the filters' conditions, and its arguments."""
    args: list[Any] = [expr]
    if filters is not None:
        if filters.venue is not None:
            sql += " AND venue = ?"
            args.append(filters.venue)
        if filters.year is not None:
            sql += " AND year = ?"
            args.append(filters.year)
        if filters.has_code:
            sql += " AND has_code = 1"
    return sql, args


def _facets_meta(venues: set[str], years: set[int]) -> list[tuple[str, str]]:
    """The distinct venues and years, as meta rows (read per question by the planner: a ``DISTINCT`` over every
    row took a second at 200k papers)."""
    return [("venues", json.dumps(sorted(venues), ensure_ascii=False)), ("years", json.dumps(sorted(years)))]


def _scanned_facets(conn: sqlite3.Connection) -> tuple[set[str], set[int]]:
    """The distinct venues and years, by a scan of the listing (every row)."""
    venues = {str(v) for (v,) in conn.execute("SELECT DISTINCT venue FROM listing") if v}
    years = {y for (v,) in conn.execute("SELECT DISTINCT year FROM listing") if (y := _year(v)) is not None}
    return venues, years


def _facets_of(meta: dict[str, str]) -> tuple[set[str] | None, set[int] | None]:
    """The venues and years recorded in ``meta`` (None for either one not recorded)."""
    venues = set(json.loads(meta["venues"])) if "venues" in meta else None
    years = {int(y) for y in json.loads(meta["years"])} if "years" in meta else None
    return venues, years


def _year(value: object) -> int | None:
    try:
        return int(value) if value not in (None, "") else None  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _batches(rows: Iterable[Any], size: int) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for r in rows:
        batch.append(r)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def lexical_path(settings: StoreSettings) -> Path:
    """Where the derived BM25 index lives: in the data directory, named after the store it derives from."""
    if settings.mode == "embedded":
        return settings.data_dir / f"{settings.collection}.lexical.sqlite"
    where = f"{settings.chroma_host}-{settings.chroma_port}" if settings.mode == "server" else "cloud"
    key = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{where}-{settings.chroma_tenant}-{settings.chroma_database}")
    return settings.data_dir / f"{settings.collection}@{key}.lexical.sqlite"


LEXICAL_SLACK = 120.0  # seconds: papers written this long before the index's mark are fetched again


def sync_lexical(store: Store, settings: StoreSettings, force: bool = False) -> LexicalIndex:
    """The BM25 index, brought up to date with the store.

    Papers written since the index's time mark are upserted (cheap while another process ingests); the
    index is rebuilt from every paper when it is missing, damaged, forced, or still disagrees on the count.
    """
    index = LexicalIndex(lexical_path(settings))
    revision, count = store.revision, store.count()
    index.recover()
    state = None if force else index.state()
    if state is not None and (state.get("revision"), int(state.get("count", -1))) == (revision, count):
        return index
    started = time.time()

    def vectors(ids: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        return store.paper_vectors(ids), store.chunk_vectors(ids)

    if state is not None:
        since = float(state.get("since", "0") or 0.0)
        # the papers written since the mark, and those in the LEXICAL_SLACK before it that the index does not hold
        # as written then (the slack's papers are mostly the last ones the previous sync indexed: listed by their
        # stamps, not read again; at 900k papers an update re-read and re-wrote 12,000 of them in 40 s)
        written = store.stamps_since(since - LEXICAL_SLACK)
        held = index.stamps(written)
        todo = {pid: t for pid, t in written.items() if held.get(pid) != t}
        n = index.update(_papers(store.iter_stamped_of(todo), None), revision, since=started, vectors=vectors,
                         stamps=dict(todo))  # fmt: skip
        # a count taken again covers papers another ingest committed while the update ran (no rebuild for them)
        if n == count or n == store.count():
            return index
    stamps: dict[str, float] = {}
    index.rebuild(_papers(store.iter_stamped(), stamps), revision, since=started, vectors=vectors, stamps=stamps)
    return index


def _papers(stamped: Iterable[tuple[Paper, float]], stamps: dict[str, float] | None) -> Iterator[Paper]:
    """The papers, each one's stamp put in ``stamps`` (if given) before it is yielded."""
    for p, t in stamped:
        if stamps is not None:
            stamps[p.paper_id] = t
        yield p
