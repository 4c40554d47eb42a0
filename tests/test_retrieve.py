"""Hybrid retrieval: reciprocal rank fusion, paper aggregation, filters, derived BM25 index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.retrieve.index import best_chunk_per_paper
from askpapers.rag.retrieve.retrieval import rrf
from askpapers.vectorstore.errors import QuestionError
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.lexical import match_expression
from askpapers.vectorstore.types import ChunkHit
from tests.conftest import CORPUS


def test_rrf_sums_reciprocal_ranks() -> None:
    scores = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert max(scores, key=scores.__getitem__) == "b"  # in both lists beats first in one


def test_chunks_aggregate_to_their_best_per_paper() -> None:
    hits = [ChunkHit("p1", "x", 0.9, 0), ChunkHit("p2", "y", 0.8, 0), ChunkHit("p1", "z", 0.95, 1),
            ChunkHit("p2", "w", 0.1, 2)]  # fmt: skip
    best = best_chunk_per_paper(hits)
    assert {pid: (h.similarity, h.text) for pid, h in best.items()} == {"p1": (0.95, "z"), "p2": (0.8, "y")}


def test_search_returns_each_paper_once(app) -> None:  # type: ignore[no-untyped-def]
    hits = app.search("information bottleneck representation", k=20)
    ids = [h.paper_id for h in hits]
    assert len(ids) == len(set(ids)) == 20
    assert all(h.snippet and h.snippet in h.abstract for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_finds_the_obvious_paper_first(app) -> None:  # type: ignore[no-untyped-def]
    assert (
        app.search("reservoir computing echo state network", k=3)[0].title == "Parallel Echo State Network (ParalESN)"
    )
    koopman = app.search("Koopman operator time series forecasting", k=3)[0]
    assert "Koopman operator" in koopman.abstract and "time series forecasting" in koopman.abstract.lower()


def test_filters(app) -> None:  # type: ignore[no-untyped-def]
    with_code = app.search("learning", k=50, filters={"has_code": True})
    assert with_code and all(h.code_urls for h in with_code)
    assert len(with_code) < 38
    assert app.search("learning", k=5, filters={"venue": "NeurIPS 2019"}) == []
    assert len(app.search("learning", k=50, filters={"year": 2026})) > 5
    with pytest.raises(QuestionError, match="invalid filters: colour: unknown name"):
        app.search("learning", filters={"colour": "red"})


def test_lexical_syntax_never_reaches_fts5() -> None:
    expr = match_expression('foo" OR bar* NEAR(x) ^y -z : (a)')
    assert expr == '"foo" OR "bar" OR "near" OR "x" OR "y" OR "z"'


def test_lexical_index_is_rebuilt_when_the_store_changes(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.api import AskPapers
    from askpapers.vectorstore.lexical import lexical_path
    from askpapers.vectorstore.pipeline import ingest

    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps({"id": "a", "abstract": "Zebrafish swim patterns under hypoxia."}) + "\n")
    ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings)
    assert app.search("zebrafish", k=1)[0].paper_id == "a"
    lexical_path(fresh_settings.store).unlink()  # derived: can be rebuilt from Chroma at any time
    g = tmp_path / "b.jsonl"
    g.write_text(json.dumps({"id": "b", "abstract": "Quokka populations on Rottnest island."}) + "\n")
    ingest([g], fresh_settings.store, progress=False, embedder=embedder)
    assert [pid for pid, _ in app.index.lexical.search("quokka", 5)] == ["b"]  # count changed: rebuilt
    lexical_path(fresh_settings.store).unlink()  # same count, index gone: rebuilt too
    assert [pid for pid, _ in app.index.lexical.search("zebrafish", 5)] == ["a"]


def test_phrase_search_finds_consecutive_words_only(app) -> None:  # type: ignore[no-untyped-def]
    lex = app.index.lexical
    ids = {pid for pid, _ in lex.phrase_search(["information bottleneck"], 50)}
    titles = {p.title for p in app.index.papers(list(ids)).values()}
    assert (
        "SymSpectra: Functional group imbalance" in titles
        and "CGTFra: Consistent inter-variate dependency modeling" in titles
        and len(ids) == 6
    )
    assert lex.phrase_search(["bottleneck information"], 50) == []  # order matters
    assert lex.phrase_search(['"; DROP TABLE papers; --'], 5) is not None  # never reaches FTS5 as syntax


def test_which_papers_search_ranks_the_topic_first(app) -> None:  # type: ignore[no-untyped-def]
    hits = app.search("Which papers use or study the information bottleneck?", k=6)
    assert sum("ottleneck" in h.abstract for h in hits) == 6


def test_bm25_takes_in_only_what_changed_while_another_ingest_runs(  # type: ignore[no-untyped-def]
    tmp_path, fresh_settings, embedder, monkeypatch
) -> None:
    """Papers written since the index's time mark are upserted in place; a full rebuild is the fallback."""
    from askpapers.vectorstore.lexical import LexicalIndex, lexical_path
    from askpapers.vectorstore.pipeline import ingest

    def write(name: str, records: list[dict[str, str]]) -> Path:
        path = tmp_path / name
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        return path

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings)
    assert app.search("Which papers study contextual bandits?")  # the index exists now
    path = lexical_path(fresh_settings.store)
    rebuilds: list[int] = []
    real = LexicalIndex.rebuild
    monkeypatch.setattr(LexicalIndex, "rebuild", lambda self, *a, **k: rebuilds.append(1) or real(self, *a, **k))
    inode = path.stat().st_ino
    ingest([write("new.jsonl", [{"id": "q1", "abstract": "Quokka populations on Rottnest island."}])],
           fresh_settings.store, progress=False, embedder=embedder)  # fmt: skip
    assert [pid for pid, _ in app.index.lexical.search("quokka", 5)] == ["q1"]
    # an updated abstract (same count) is picked up too
    ingest([write("new.jsonl", [{"id": "q1", "abstract": "Wombat burrows in Tasmania."}])],
           fresh_settings.store, progress=False, embedder=embedder)  # fmt: skip
    assert [pid for pid, _ in app.index.lexical.search("wombat", 5)] == ["q1"]
    assert app.index.lexical.search("quokka", 5) == []
    assert rebuilds == [] and path.stat().st_ino == inode, "updated in place, not rebuilt"
    assert app.index.lexical.built_from() == (app.index.store.revision, 39)
    # the reranker's text data of the updated paper was derived again with it
    (stored,) = app.index.lexical.doc_texts(["q1"]).values()
    expected = DocText("", "Wombat burrows in Tasmania.")
    assert {n: getattr(stored, n) for n in DocText.FIELDS} == {n: getattr(expected, n) for n in DocText.FIELDS}
    path.write_bytes(b"damaged" * 100)  # a damaged file is rebuilt from Chroma
    ingest([write("more.jsonl", [{"id": "q2", "abstract": "Kiwi birds of New Zealand."}])],
           fresh_settings.store, progress=False, embedder=embedder)  # fmt: skip
    assert [pid for pid, _ in app.index.lexical.search("kiwi", 5)] == ["q2"]
    assert rebuilds and app.index.lexical.built_from() == (app.index.store.revision, 40)


def test_bm25_update_is_not_thrown_away_when_papers_land_during_it(  # type: ignore[no-untyped-def]
    tmp_path, fresh_settings, embedder, monkeypatch
) -> None:
    """Another ingest committing while the index updates makes the first count stale; that is no reason to
    rebuild the whole index (12 s at 50k papers)."""
    from askpapers.vectorstore.lexical import LexicalIndex, sync_lexical
    from askpapers.vectorstore.pipeline import ingest

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings)
    assert app.search("Which papers study contextual bandits?")
    f = tmp_path / "new.jsonl"
    f.write_text(json.dumps({"id": "q1", "abstract": "Quokka populations on Rottnest island."}) + "\n")
    ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    store = app.index.store
    real_count, counts = type(store).count, []

    def count_before_q1_landed(self):  # type: ignore[no-untyped-def]
        counts.append(1)
        return real_count(self) - (1 if len(counts) == 1 else 0)  # the first count predates q1

    rebuilds: list[int] = []
    real = LexicalIndex.rebuild
    monkeypatch.setattr(LexicalIndex, "rebuild", lambda self, *a, **k: rebuilds.append(1) or real(self, *a, **k))
    monkeypatch.setattr(type(store), "count", count_before_q1_landed)
    index = sync_lexical(store, fresh_settings.store, force=False)
    assert [pid for pid, _ in index.search("quokka", 5)] == ["q1"]
    assert rebuilds == [] and len(counts) == 2


def test_an_index_without_text_data_is_rebuilt_with_it(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    """An index file of the previous format (FTS5 and the vocabulary, no per-paper text data) is rebuilt from the
    store: every paper's text data is then stored, equal to what its text gives."""
    import sqlite3

    from askpapers.vectorstore.lexical import lexical_path
    from askpapers.vectorstore.parse import parse_paths
    from askpapers.vectorstore.pipeline import ingest

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    path = lexical_path(fresh_settings.store)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE features")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'format'")
    conn.close()
    app = AskPapers(fresh_settings, warm=False)
    assert app.search("Which papers study contextual bandits?")
    papers = parse_paths([CORPUS]).papers
    stored = app.index.lexical.doc_texts([p.paper_id for p in papers])
    assert set(stored) == {p.paper_id for p in papers}
    for p in papers:
        expected = DocText("" if p.title_derived else p.title, p.abstract)
        got = stored[p.paper_id]
        assert all(getattr(got, n) == getattr(expected, n) for n in DocText.FIELDS), p.paper_id
