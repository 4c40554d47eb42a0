"""A freshly built BM25 index is compact: its full-text index is one segment (FTS5 flushes a segment for every
megabyte of pending text while the papers are written, and a search reads every segment's postings for each of
its words), and the file is rewritten table by table. Searches then read fewer pages; their results are the same."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from askpapers.vectorstore.lexical import LexicalIndex
from askpapers.vectorstore.types import Paper


def test_a_rebuilt_index_is_one_segment(tmp_path: Path) -> None:
    rng = random.Random(0)
    words = [f"w{i}x" for i in range(3000)]
    papers = [Paper(paper_id=f"p{i}", title=" ".join(rng.choices(words, k=6)),
                    abstract=" ".join(rng.choices(words, k=60)) + ".") for i in range(3000)]  # fmt: skip
    papers.append(Paper(paper_id="quokka", title="Quokka burrows", abstract="We count quokka burrows on islands."))
    index = LexicalIndex(tmp_path / "index.sqlite")
    assert index.rebuild(papers, "r1") == 3001
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    try:
        assert conn.execute("SELECT count(DISTINCT segid) FROM papers_idx").fetchone() == (1,)
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
    finally:
        conn.close()
    assert [pid for pid, _ in index.search("quokka burrows", 5)] == ["quokka"]


def test_the_surface_postings_forget_a_replaced_text(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index.sqlite")
    papers = [Paper(paper_id="a", title="Quokka burrows", abstract="We count quokka burrows on islands."),
              Paper(paper_id="b", title="Wombat burrows", abstract="Wombats dig burrows.")]  # fmt: skip
    index.rebuild(papers, "r1")
    assert index.surface_ids([[["quokka"], ["burrows"]]]) == {"a"}
    assert index.surface_ids([[["burrows"]]]) == {"a", "b"}
    index.update([Paper(paper_id="a", title="Numbat nests", abstract="We count numbat nests.")], "r2", since=1.0)
    assert index.surface_ids([[["quokka"]]]) == set() and index.surface_ids([[["burrows"]]]) == {"b"}
    assert index.surface_ids([[["numbat"], ["nests"]]]) == {"a"}
    assert index.phrase_ids(["numbat nests"]) == {"a"}  # (the stemmed table agrees)
