"""BM25 over the index's own postings (vectorstore.bm25) gives FTS5's bm25() scores to the bit, in FTS5's order,
after a rebuild and after updates that add and replace papers (and the postings of the words as written find what
an FTS5 table of them finds); a search without filters reads the postings and
never asks FTS5 to score (FTS5's cost grows with every paper holding a word), and a filtered one still does."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from askpapers.vectorstore import bm25
from askpapers.vectorstore.lexical import (
    LexicalIndex,
    all_words_expression,
    match_expression,
    phrase_expression,
    rowid_of,
)
from askpapers.vectorstore.types import Filters, Paper

VOCABULARY = ("graph neural network networks networked diffusion model models modelling policy reinforcement learning "
              "learned learner optimisation optimization bandit regret kernel kernels transformer attention sparse "
              "sparsity robust robustness quokka café naïve")  # fmt: skip
WORDS = VOCABULARY.split()
QUERIES = ["graph neural networks", "diffusion models for reinforcement learning", "network networks networked",
           "regret of bandit kernels", "café naïve robustness", "quokka", "attention is sparse",
           "optimisation optimization learner"]  # fmt: skip


def _papers(rng: random.Random, n: int, prefix: str = "p") -> list[Paper]:
    return [Paper(paper_id=f"{prefix}{i}", title=" ".join(rng.choices(WORDS, k=rng.randint(0, 7))),
                  abstract=" ".join(rng.choices(WORDS, k=rng.randint(3, 90))) + ".", venue="V", year=2020 + i % 3)
            for i in range(n)]  # fmt: skip


def _fts(path: Path, query: str, n: int) -> list[tuple[str, float]]:
    """FTS5's own ranking of the query's words: bm25() over every matching paper."""
    conn = sqlite3.connect(path)
    try:
        sql = ("SELECT paper_id, bm25(papers, 0, 1.0, 1.0) AS s FROM papers WHERE papers MATCH ? "
               "ORDER BY s, rowid LIMIT ?")  # fmt: skip
        return [(str(p), -float(s)) for p, s in conn.execute(sql, (match_expression(query), n))]
    finally:
        conn.close()


def _fts_fields(path: Path, query: str, ids: list[str]) -> dict[str, tuple[float, float, float]]:
    conn = sqlite3.connect(path)
    try:
        sql = ("SELECT paper_id, bm25(papers, 0, 1.0, 1.0), bm25(papers, 0, 1.0, 0.0), bm25(papers, 0, 0.0, 1.0) "
               f"FROM papers WHERE papers MATCH ? AND paper_id IN ({','.join('?' * len(ids))})")  # fmt: skip
        return {str(p): (-a, -t, -b) for p, a, t, b in conn.execute(sql, [match_expression(query), *ids])}
    finally:
        conn.close()


PHRASES = [["graph neural network", "neural networks"], ["reinforcement learning"], ["model model", "modelling"],
           ["café naïve", "naive cafe", "the quokka"], ["sparse attention transformer", "robust kernel"],
           ["learned learner learning"], ["bandit regret", "kernel"]]  # fmt: skip


def _surface_oracle(path: Path, queries: list[list[list[str]]], in_a_row: bool) -> set[str]:
    """The papers an FTS5 table of the words as written (the index's surface tokenizer, its live texts) finds
    for the queries: each a phrase for every choice of one word per slot, or each slot's words anywhere."""
    from askpapers.vectorstore.lexical import SURFACE_TOKENIZE, surface_slots

    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"ATTACH DATABASE '{path}' AS i")
        conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(title, abstract, tokenize = '{SURFACE_TOKENIZE}')")
        conn.execute("INSERT INTO s(rowid, title, abstract) SELECT rowid, title, abstract FROM i.papers")
        found: set[str] = set()
        for query in queries:
            slots = surface_slots(query)
            if slots is None:
                continue
            if in_a_row:
                phrases = [""]
                for slot in slots:
                    phrases = [f"{p} {w}".strip() for p in phrases for w in slot]
                expr = " OR ".join(f'"{p}"' for p in phrases)
            else:
                expr = " AND ".join("(" + " OR ".join(f'"{w}"' for w in slot) + ")" for slot in slots)
            sql = "SELECT p.paper_id FROM s JOIN i.papers AS p ON p.rowid = s.rowid WHERE s MATCH ?"
            found |= {str(pid) for (pid,) in conn.execute(sql, (expr,))}
        return found
    finally:
        conn.close()


def _surface_queries(rng: random.Random, n: int) -> list[list[list[str]]]:
    written = [*WORDS, "Networks", "CAFÉ", "naive", "cafe"]
    return [[rng.sample(written, rng.randint(1, 3)) for _ in range(rng.randint(1, 3))] for _ in range(n)]


def _ordered(ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """FTS5's ranking with ties put in row id order, as the postings put them."""
    return sorted(ranked, key=lambda r: (-r[1], rowid_of(r[0])))


def _agrees(index: LexicalIndex, n: int = 25) -> None:
    for q in QUERIES:
        assert index.search(q, n) == _fts(index.path, q, n), q
        ids = [pid for pid, _ in _fts(index.path, q, 40)] + ["nobody"]
        assert index.field_scores(q, ids) == _fts_fields(index.path, q, ids), q
    for phrases in PHRASES:
        expr = phrase_expression(phrases)
        assert index.phrase_ids(phrases) == index._ids(expr, None), phrases
        assert index.phrase_search(phrases, 1000) == _ordered(index._match(expr, 1000, None)), phrases
        assert index.phrase_count(phrases[0]) == len(index._ids(phrase_expression(phrases[:1]), None))
        words = all_words_expression(phrases)
        assert index.all_words_ids(phrases) == index._ids(words, None), phrases
        assert index.all_words_search(phrases, 1000) == _ordered(index._match(words, 1000, None)), phrases
    rng = random.Random(len(index.listing()))
    for in_a_row in (True, False):
        for _ in range(12):
            queries = _surface_queries(rng, rng.randint(1, 3))
            assert index.surface_ids(queries, in_a_row) == _surface_oracle(index.path, queries, in_a_row), queries
    for facets in zip(PHRASES, PHRASES[1:] + PHRASES[:1], strict=True):
        both = " AND ".join(f"({phrase_expression(f)})" for f in facets)
        assert index.facet_count(list(facets)) == len(index._ids(both, None)), facets
        assert index.facet_search(list(facets), 1000) == _ordered(index._match(both, 1000, None)), facets


def test_scores_and_order_are_fts5s_after_a_rebuild(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(1), 300), "r1")
    _agrees(index)
    assert len(index.search("graph neural networks", 1000)) == len(_fts(index.path, "graph neural networks", 1000))


def test_scores_stay_fts5s_through_updates_that_add_and_replace(tmp_path: Path) -> None:
    rng = random.Random(2)
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(rng, 200), "r1")
    # new papers and papers replaced, then some of them replaced again, then one more time
    index.update(_papers(rng, 40, "q") + _papers(rng, 30), "r2", since=1.0)
    _agrees(index)
    index.update(_papers(rng, 5) + _papers(rng, 20, "s"), "r3", since=2.0)
    _agrees(index)
    index.update([Paper(paper_id="p3", title="Quokka", abstract="A quokka, a quokka and a kernel.")], "r4", since=3.0)
    _agrees(index)
    assert index.search("quokka", 1)[0][0] == "p3"


def test_segments_of_a_rebuild_and_batches_of_an_update_read_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25, "SEGMENT_PAPERS", 2000)  # (a rebuild adds papers 2,000 at a time)
    monkeypatch.setattr(bm25, "UPDATE_BATCH", 7)
    rng = random.Random(6)
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(rng, 4100), "r1")  # three segments
    conn = sqlite3.connect(index.path)
    try:
        assert conn.execute("SELECT count(DISTINCT key & 1048575) FROM bm25_postings").fetchone() == (3,)
    finally:
        conn.close()
    _agrees(index)
    index.update(_papers(rng, 30, "q") + _papers(rng, 12), "r2", since=1.0)
    _agrees(index)


def test_a_search_reads_postings_and_a_filtered_one_asks_fts5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(3), 100), "r1")
    expected = _fts(index.path, "kernel regret", 10)
    asked: list[str] = []
    scored = LexicalIndex._match

    def counted(self: LexicalIndex, expr: str, n: int, filters: Filters | None) -> list[tuple[str, float]]:
        asked.append(expr)
        return scored(self, expr, n, filters)

    monkeypatch.setattr(LexicalIndex, "_match", counted)
    assert index.search("kernel regret", 10) == expected and asked == []
    filtered = index.search("kernel regret", 10, Filters(year=2021))
    assert asked and filtered and all(int(pid[1:]) % 3 == 1 for pid, _ in filtered)


def test_the_reader_maps_row_ids_to_live_papers_only(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(4), 10), "r1")
    index.update(_papers(random.Random(5), 3), "r2", since=1.0)  # p0..p2 replaced: new numbers, old ones dead
    conn = sqlite3.connect(index.path)
    try:
        reader = bm25.Reader(conn)
        numbers = reader.numbers([rowid_of("p0"), rowid_of("p9"), rowid_of("nobody")])
        assert reader.n == 10 and len(reader.rowids) == 13
        assert numbers.tolist()[1:] == [9, -1] and numbers[0] >= 10 and reader.alive[numbers[0]]
    finally:
        conn.close()


def test_a_paper_listed_twice_in_a_rebuild_counts_once_as_its_last_text(tmp_path: Path) -> None:
    rng = random.Random(7)
    papers = _papers(rng, 60)
    again = Paper(paper_id="p5", title="Wombat wombat", abstract="Wombat kernels, a wombat bandit and graph networks.")
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild([*papers, again], "r1")
    _agrees(index)
    assert index.phrase_ids(["wombat kernels"]) == {"p5"} and [p for p, _ in index.search("wombat", 5)] == ["p5"]


def test_a_words_share_of_the_score_is_worked_out_once_per_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(8), 120), "r1")
    first = index.search("kernel regret networks", 30)
    worked: list[int] = []
    idf = bm25.Reader.idf

    def counted(self: bm25.Reader, papers: int) -> float:
        worked.append(papers)
        return idf(self, papers)

    monkeypatch.setattr(bm25.Reader, "idf", counted)
    assert index.search("kernel regret networks", 30) == first and worked == []  # (the revision's reader kept them)
    assert index.search("regret kernel quokka", 30) == _fts(index.path, "regret kernel quokka", 30)
    assert len(worked) == 1  # (only the new word's)
    index.update(_papers(random.Random(9), 5, "q"), "r2", since=1.0)
    assert index.search("kernel regret networks", 30) == _fts(index.path, "kernel regret networks", 30)
    assert len(worked) == 4  # (a new revision: its own shares)


def test_a_word_states_its_postings_uncopied_until_a_paper_dies(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(10), 40), "r1")
    conn = sqlite3.connect(index.path)
    try:
        reader = bm25.Reader(conn)
        assert reader.stated(conn, ("kernel",)) is reader.postings(conn, "kernel")
        index.update(_papers(random.Random(11), 3), "r2", since=1.0)  # p0..p2 replaced: their old numbers die
        reader = bm25.Reader(conn)
        stated, held = reader.stated(conn, ("kernel",)), reader.postings(conn, "kernel")
        assert stated is not held and reader.alive[stated.docs].all() and not reader.alive[held.docs].all()
    finally:
        conn.close()


def test_a_search_scores_only_the_rarer_words_papers_when_no_other_can_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(12)
    filler = [w for w in WORDS if not w.startswith("kernel")]

    def paper(pid: str, *extra: str) -> Paper:
        return Paper(paper_id=pid, title="", abstract=" ".join([*rng.choices(filler, k=30), *extra]) + ".")

    # "kernel" in a third of the papers, "wombat" in 20 of them
    papers = [paper(f"p{i}", *(["kernel"] * rng.randint(1, 4) if i % 3 == 0 else [])) for i in range(300)]
    wombats = [paper(f"w{i}", "wombat", *(["kernel"] if i % 2 else [])) for i in range(20)]
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(papers + wombats, "r1")
    everyone: list[int] = []
    scores = bm25.Reader.scores

    def counted(self: bm25.Reader, conn: sqlite3.Connection, expr: bm25.Expression) -> tuple[object, object]:
        everyone.append(len(expr))
        return scores(self, conn, expr)

    monkeypatch.setattr(bm25.Reader, "scores", counted)
    # the best 5 of "wombat kernel" hold "wombat": only the 20 papers holding it are scored, as FTS5 ranks them
    best = index.search("wombat kernel", 5)
    assert best == _ordered(_fts(index.path, "wombat kernel", 5)) and everyone == []
    assert {p for p, _ in best} <= {w.paper_id for w in wombats}
    # 40 cannot come from 20 papers: every paper holding either word is scored
    assert index.search("wombat kernel", 40) == _ordered(_fts(index.path, "wombat kernel", 40)) and everyone
    # whichever papers it scores, the ranking is FTS5's
    for n in (1, 3, 10, 19, 20, 21, 60, 400):
        for query in ("kernel wombat", "wombat kernel kernel", "kernel"):
            assert index.search(query, n) == _ordered(_fts(index.path, query, n)), (query, n)


def test_a_count_reads_the_papers_stating_its_phrases_not_a_mask_of_every_paper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    index.rebuild(_papers(random.Random(13), 150), "r1")
    passes: list[int] = []
    groups = bm25.Reader.groups

    def counted(self: bm25.Reader, conn: sqlite3.Connection, expr: bm25.Expression) -> list[object]:
        passes.append(len(expr))
        return list(groups(self, conn, expr))

    monkeypatch.setattr(bm25.Reader, "groups", counted)
    counts = {phrase: index.phrase_count(phrase) for phrase in ("neural network", "kernel", "reinforcement learning")}
    assert counts == {p: len(index._ids(phrase_expression([p]), None)) for p in counts} and all(counts.values())
    both = [["neural network", "graph"], ["kernel"]]
    expr = " AND ".join(f"({phrase_expression(f)})" for f in both)
    assert index.facet_count(both) == len(index._ids(expr, None)) > 0
    assert passes == []  # (no mask over every paper: the papers of the phrases, then of the other facets' among them)
