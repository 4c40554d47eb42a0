"""A writer killed in the middle of an update of the BM25 index (a stopped ingest) leaves SQLite's rollback journal
beside the file. The index is then rolled back, not rebuilt; and a rebuild never inherits the old file's journal."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from askpapers.vectorstore.lexical import LexicalIndex
from askpapers.vectorstore.types import Paper

# a writer that dies in the middle of a transaction, after SQLite has written pages of it to the file
KILLED_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA cache_size = 5")
conn.execute("BEGIN")
conn.execute("UPDATE listing SET title = 'half-written'")
conn.execute("DELETE FROM records")
conn.execute("INSERT INTO papers(rowid, paper_id, title, abstract) SELECT rowid + 1000000, paper_id || '-copy', title, "
             "abstract FROM papers")
os._exit(0)
"""


def _papers(prefix: str, n: int) -> list[Paper]:
    return [
        Paper(paper_id=f"{prefix}{i}", title=f"Title {prefix} {i}", venue="ICML", year=2024,
              abstract=f"We study {prefix} topic number {i} with quokka {i % 7} and wombat {i % 11} in depth. " * 3)
        for i in range(n)
    ]  # fmt: skip


def _killed_update(index: LexicalIndex) -> None:
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(index.path)], check=True, timeout=60)
    assert index.journal().exists() and index.journal().stat().st_size > 0


def test_an_update_left_half_done_is_rolled_back(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    index.rebuild(_papers("a", 300), "r1", since=5.0)
    _killed_update(index)
    assert index.state() is None  # a read-only reader cannot roll it back: it takes the index for damaged
    index.recover()
    assert not index.journal().exists()
    state = index.state()
    assert state is not None and (state["revision"], state["count"], state["since"]) == ("r1", "300", "5.0")
    assert {x.title for x in index.listing()} == {f"Title a {i}" for i in range(300)}
    assert len(index.papers([f"a{i}" for i in range(300)])) == 300
    assert index.phrase_ids(["quokka 3"]) == {f"a{i}" for i in range(300) if i % 7 == 3}


def test_a_rebuild_does_not_inherit_the_old_files_journal(tmp_path: Path) -> None:
    """The new file is written under another name and swapped in; the journal beside the old one would be rolled
    back into it at the next write, and damage it."""
    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    index.rebuild(_papers("a", 300), "r1")
    _killed_update(index)
    index.rebuild(_papers("b", 400), "r2")
    assert index.update(_papers("c", 1), "r3", since=1.0) == 401
    conn = sqlite3.connect(index.path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM listing").fetchone()[0] == 401
    finally:
        conn.close()
    assert index.phrase_ids(["quokka 3"]) == {f"b{i}" for i in range(400) if i % 7 == 3}


def test_the_store_sync_rolls_back_and_updates_instead_of_rebuilding(  # type: ignore[no-untyped-def]
    tmp_path, fresh_settings, embedder, monkeypatch
) -> None:
    """After an ingest stopped in the middle of the index's update, the next sync takes in only the papers written
    since the index's time mark."""
    import json

    from askpapers.rag.api import AskPapers
    from askpapers.vectorstore.lexical import lexical_path, sync_lexical
    from askpapers.vectorstore.pipeline import ingest
    from tests.conftest import CORPUS

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings, warm=False)
    assert app.search("Which papers study contextual bandits?")  # the index exists now
    index = LexicalIndex(lexical_path(fresh_settings.store))
    _killed_update(index)
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "q1", "abstract": "Quokka populations on Rottnest island."}) + "\n")
    rebuilds: list[int] = []
    real = LexicalIndex.rebuild
    monkeypatch.setattr(LexicalIndex, "rebuild", lambda self, *a, **k: rebuilds.append(1) or real(self, *a, **k))
    ingest([new], fresh_settings.store, progress=False, embedder=embedder)
    synced = sync_lexical(app.index.store, fresh_settings.store)
    assert rebuilds == [] and not index.journal().exists()
    assert [pid for pid, _ in synced.search("quokka", 5)] == ["q1"]
    assert synced.built_from() == (app.index.store.revision, 39)
