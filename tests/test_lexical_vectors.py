"""The BM25 index keeps each paper's stored embeddings (its vector and its chunks'), so that the reranker reads a
question's few hundred from SQLite rather than from Chroma (whose get of 250 papers' vectors cost 6 ms at 50k
papers): the same float32 values, kept up to date with the papers, and read from Chroma only for papers the index
does not hold them for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.retrieve.chroma_index import PaperIndex
from askpapers.rag.retrieve.retrieval import hybrid
from askpapers.rag.settings import RetrievalSettings, Settings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.lexical import LexicalIndex
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.types import Paper
from tests.conftest import CORPUS, make_settings
from tests.test_rerank_cache import assert_same_pools, pools


def _jsonl(path: Path, papers: list[Paper]) -> Path:
    path.write_text("".join(json.dumps({"id": p.paper_id, "title": p.title, "abstract": p.abstract}) + "\n"
                            for p in papers))  # fmt: skip
    return path


def assert_held_as_stored(index: PaperIndex, ids: list[str]) -> None:
    """The index holds every paper's vectors, bit for bit those Chroma returns."""
    held = index.lexical.vectors(ids)
    assert set(held) == set(ids)
    papers, chunks = index.store.paper_vectors(ids), index.store.chunk_vectors(ids)
    for pid in ids:
        v, c = held[pid]
        assert v.dtype == np.float32 and np.array_equal(v, papers[pid]), pid
        assert c.dtype == np.float32 and np.array_equal(c, chunks[pid]), pid


def no_vectors_from_chroma(index: PaperIndex) -> None:
    def fail(*_: object) -> NoReturn:
        raise AssertionError("vectors read from Chroma")

    index.store.paper_vectors = fail  # type: ignore[method-assign]
    index.store.chunk_vectors = fail  # type: ignore[method-assign]


def test_the_index_holds_the_stores_vectors(corpus_settings: Settings, embedder: Embedder) -> None:
    index = PaperIndex(corpus_settings.store, embedder)
    ids = [p.paper_id for p in index.all_papers()]
    assert len(ids) == 38
    assert_held_as_stored(index, ids)
    assert any(len(c) > 1 for _, c in index.lexical.vectors(ids).values())  # (papers of several chunks, in order)


def test_first_time_searches_read_no_vectors_from_chroma(
    corpus_settings: Settings, embedder: Embedder, app: AskPapers
) -> None:
    """A new index (nothing cached) builds the reranker's pools without one read of vectors from Chroma, and the
    pools are those built from Chroma's vectors (an index whose BM25 file holds none)."""
    index = PaperIndex(corpus_settings.store, embedder)
    index.refresh()
    no_vectors_from_chroma(index)
    got = pools(hybrid(index, RetrievalSettings()), app)

    class Without(LexicalIndex):  # (the BM25 index of an older format: no vectors held)
        def vectors(self, paper_ids: object) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            return {}

    chroma = PaperIndex(corpus_settings.store, embedder)
    lexical = chroma.refresh()
    lexical.__class__ = Without
    reads: list[int] = []
    real = chroma.store.paper_vectors

    def counted(ids: list[str]) -> dict[str, np.ndarray]:
        reads.append(len(ids))
        return real(ids)

    chroma.store.paper_vectors = counted  # type: ignore[method-assign]
    assert_same_pools(got, pools(hybrid(chroma, RetrievalSettings()), app))
    assert reads  # (that one read them from Chroma)


def test_the_vectors_follow_the_papers(tmp_path: Path, embedder: Embedder) -> None:
    """Papers added later, and a paper whose abstract changed, are held with their new vectors (the index is
    updated, not rebuilt)."""
    papers = parse_paths([CORPUS]).papers
    settings = make_settings(tmp_path / "store")
    ingest([_jsonl(tmp_path / "a.jsonl", papers[:20])], settings.store, progress=False, embedder=embedder)
    index = PaperIndex(settings.store, embedder)
    index.refresh()
    path = index.lexical.path
    assert_held_as_stored(index, [p.paper_id for p in papers[:20]])
    before = index.lexical.vectors([papers[0].paper_id])[papers[0].paper_id][0].copy()

    changed = Paper(paper_id=papers[0].paper_id, title=papers[0].title,
                    abstract="We count quokka burrows on Rottnest Island. Quokkas dig shallow burrows.")  # fmt: skip
    ingest([_jsonl(tmp_path / "b.jsonl", [changed, *papers[20:]])], settings.store, progress=False, embedder=embedder)
    inode = path.stat().st_ino
    index.refresh()
    assert path.stat().st_ino == inode  # (updated in place: a rebuild swaps a new file in)
    assert_held_as_stored(index, [p.paper_id for p in papers])
    after = index.lexical.vectors([changed.paper_id])[changed.paper_id][0]
    assert not np.array_equal(before, after)


def test_an_update_without_vectors_drops_the_stale_ones(tmp_path: Path) -> None:
    """A paper upserted without vectors (a caller with none to give) no longer has its old ones: a reader then
    takes them from Chroma."""
    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    papers = [Paper(paper_id=f"p{i}", title=f"T {i}", abstract=f"Abstract {i} about graphs.") for i in range(3)]

    def source(ids: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        vec = {pid: np.full(4, float(i), dtype=np.float32) for i, pid in enumerate(ids)}
        return vec, {pid: np.stack([v, v + 1]) for pid, v in vec.items()}

    index.rebuild(papers, "r1", vectors=source)
    held = index.vectors(["p0", "p1", "p2", "nope"])
    assert set(held) == {"p0", "p1", "p2"}
    assert held["p1"][1].shape == (2, 4) and held["p1"][1][1][0] == 2.0
    index.update([papers[1]], "r2", since=1.0)
    assert set(index.vectors(["p0", "p1", "p2"])) == {"p0", "p2"}
    index.update([papers[1]], "r3", since=2.0, vectors=source)
    assert set(index.vectors(["p0", "p1", "p2"])) == {"p0", "p1", "p2"}


@pytest.mark.parametrize("chunks", [0, 1, 3])
def test_a_paper_of_any_number_of_chunks(tmp_path: Path, chunks: int) -> None:
    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    v = np.arange(6, dtype=np.float32)
    rows = np.arange(6 * chunks, dtype=np.float32).reshape(chunks, 6)

    def source(ids: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        return {"p": v}, ({"p": rows} if chunks else {})

    index.rebuild([Paper(paper_id="p", title="T", abstract="A.")], "r1", vectors=source)
    got_v, got_rows = index.vectors(["p"])["p"]
    assert np.array_equal(got_v, v) and got_rows.shape == (chunks, 6) and np.array_equal(got_rows, rows)
