"""The planner's and the matcher's store lookups, counted: corpus statistics are read once per store revision."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.api import AskPapers
from askpapers.vectorstore.lexical import LexicalIndex
from askpapers.vectorstore.pipeline import ingest
from tests.conftest import CORPUS

STATS = ["size", "phrase_count", "facet_count", "word_df", "words_with_stems", "venues"]
QUESTIONS = [
    "Which papers use information bottleneck?",
    "How many papers study federated learning?",
    "Which papers use graph neural networks or contrastive learning?",
]


def count_calls(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> Counter[str]:
    """Count the calls that reach the BM25 index (SQLite), by method."""
    calls: Counter[str] = Counter()

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    for name in names:
        monkeypatch.setattr(LexicalIndex, name, counted(name, getattr(LexicalIndex, name)))
    return calls


def test_corpus_statistics_are_read_once_per_store_revision(
    tmp_path: Path, fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings, warm=False)
    calls = count_calls(monkeypatch, STATS)
    first = [app.ask(q, mode="extractive") for q in QUESTIONS]
    assert calls["size"] <= 1 and calls["phrase_count"] > 0  # (the planner counted phrases)
    calls.clear()
    again = [app.ask(q, mode="extractive") for q in QUESTIONS]
    assert sum(calls.values()) == 0, f"statistics read again at the same revision: {dict(calls)}"
    assert [a.text for a in again] == [a.text for a in first]
    assert app.index.size() == 38
    before = app.index.phrase_count("information bottleneck")
    # a new paper stating the phrase: the next revision counts it
    f = tmp_path / "new.jsonl"
    f.write_text(json.dumps({"id": "ib1", "abstract": "We revisit the information bottleneck for speech."}) + "\n")
    ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert app.index.phrase_count("information bottleneck") == before + 1
    assert app.index.size() == 39
    assert calls["size"] == 1 and calls["phrase_count"] == 1


def test_the_paper_count_is_read_not_counted(fresh_settings: Any, embedder: Any) -> None:
    """The paper count comes from the index's own record of it (one row), not from ``count(*)`` over FTS5, which
    reads every row; both agree."""
    import sqlite3

    from askpapers.vectorstore.lexical import lexical_path

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    index = LexicalIndex(lexical_path(fresh_settings.store))
    traced: list[str] = []
    conn = index._conn()
    assert conn is not None
    conn.set_trace_callback(traced.append)
    assert index.size() == 38
    assert not any("count(*)" in sql.lower() for sql in traced), traced
    with sqlite3.connect(index.path) as raw:
        assert raw.execute("SELECT count(*) FROM papers").fetchone()[0] == 38
    raw.close()


def test_a_question_checks_the_store_once(fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """One request for the store's revision per question asked or searched: the lookups run on worker threads
    beside it (the fused search's dense retriever, each facet's dense searches) hold the question's pin instead of
    checking again, and the reading and the answer share one."""
    from askpapers.rag.retrieve import workers
    from askpapers.vectorstore.store import Store

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings, warm=False)
    app.ask(QUESTIONS[0], mode="extractive")  # (opens the store)
    checks: list[str] = []
    real = Store.revision.fget
    assert real is not None

    def revision(self: Store) -> str:
        checks.append(threading.current_thread().name)
        return str(real(self))

    beside: list[str] = []
    real_beside = workers.beside

    def counted_beside(*args: Any) -> Any:
        beside.append(getattr(args[1], "__name__", "?"))
        return real_beside(*args)

    monkeypatch.setattr(Store, "revision", property(revision))
    monkeypatch.setattr(workers, "beside", counted_beside)
    for q in QUESTIONS:
        checks.clear()
        app.ask(q, mode="extractive")
        assert checks == [threading.current_thread().name], (q, checks)
        checks.clear()
        assert app.search(q)
        assert checks == [threading.current_thread().name], (q, checks)
    assert len(beside) >= 2 * len(QUESTIONS)  # (the lookups did run on workers)
