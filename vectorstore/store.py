"""The Chroma store: the system of record for papers and their chunks.

Two collections: ``NAME`` holds chunks (one embedding per sentence window) and ``NAME_papers``
holds one record per paper (its abstract and metadata; the embedding is the mean of its chunks).
A paper's record is written after its chunks, so a paper is visible only once it is complete;
chunks without a paper record (left by a crash) are ignored by readers and rewritten by the next
ingest. The papers collection's metadata records the embedder and a revision marker that derived
indexes compare against.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from askpapers.vectorstore.chroma_client import Guarded, connect, reason
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.errors import EmbedderMismatchError, StoreError
from askpapers.vectorstore.records import StoredPaper, paper_from_record, paper_metadata
from askpapers.vectorstore.types import Chunk, ChunkHit, Paper

PAGE = 1000  # records read by id at a time
# records a listing reads at a time: each of Chroma's listing queries costs about 0.15 s at 1M papers before its
# first row (a filtered one: it evaluates the filter each time), so 5,000 papers took 1.25 s a page of 1,000 at a
# time and 0.70 s 5,000 at a time
LIST_PAGE = 5000
GUESSED_CHUNKS = 4  # chunk positions read by id per paper before a paper's other chunks are looked up (most have 1)


class Store:
    """A handle on the two collections, created if they do not exist yet."""

    def __init__(self, settings: StoreSettings, embedder_id: str, dim: int) -> None:
        self.settings = settings
        self.embedder_id = embedder_id
        self.dim = dim
        self.client = Guarded(connect(settings), settings)
        name = settings.collection
        try:
            self.chunks = self.client.get_or_create_collection(
                name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
            self.papers = self.client.get_or_create_collection(
                f"{name}_papers",
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embedder": embedder_id, "dim": dim, "revision": "empty"},
            )
        except StoreError:
            raise
        except Exception as e:  # chromadb raises many kinds; the user needs the path and the reason
            raise StoreError(f"cannot open {settings.describe()}: {reason(e, settings)}") from e
        self.chunks = Guarded(self.chunks, settings)
        self.papers = Guarded(self.papers, settings)
        meta = self.papers.metadata or {}
        built_with = meta.get("embedder")
        if built_with and built_with != embedder_id:
            raise EmbedderMismatchError(
                f"the store at {settings.data_dir} (collection '{name}') was built with embedder "
                f"'{built_with}', but askpapers is configured with '{embedder_id}'. "
                "Use another ASKPAPERS_DATA_DIR / ASKPAPERS_COLLECTION, or re-ingest into a new store."
            )

    # -- reading ---------------------------------------------------------------------------------
    @property
    def revision(self) -> str:
        col = self.client.get_collection(self.papers.name, embedding_function=None)
        return str((col.metadata or {}).get("revision", ""))

    def count(self) -> int:
        return int(self.papers.count())

    def stored(self, ids: Sequence[str] | None = None) -> dict[str, StoredPaper]:
        """Every committed paper's content hash, chunk count and title; with ``ids``, those of these papers only
        (read by id, a page at a time: adding a thousand papers to a large store reads a thousand records)."""
        out: dict[str, StoredPaper] = {}
        if ids is None:
            pages: Iterator[tuple[list[str], list[Any], list[dict[str, Any]]]] = self._pages(
                self.papers, include=["metadatas"]
            )
        else:
            pages = self._pages_of(list(dict.fromkeys(ids)))
        for found, _docs, metas in pages:
            for pid, m in zip(found, metas, strict=True):
                out[pid] = StoredPaper(str(m.get("hash", "")), int(m.get("n_chunks", 0)), str(m.get("title", "")))
        return out

    def _pages_of(self, ids: list[str]) -> Iterator[tuple[list[str], list[Any], list[dict[str, Any]]]]:
        for start in range(0, len(ids), PAGE):
            res = self.papers.get(ids=ids[start : start + PAGE], include=["metadatas"])
            found = res["ids"]
            yield found, [None] * len(found), [dict(m or {}) for m in (res.get("metadatas") or [{}] * len(found))]

    def iter_papers(self, since: float | None = None) -> Iterator[Paper]:
        """Every paper, or those written at or after ``since`` (a time.time() value)."""
        for p, _ in self.iter_stamped(since):
            yield p

    def iter_stamped(self, since: float | None = None) -> Iterator[tuple[Paper, float]]:
        """:meth:`iter_papers`, each paper with the time its record was written (``ingested_at``)."""
        where = None if since is None else {"ingested_at": {"$gte": since}}
        for ids, docs, metas in self._pages(self.papers, include=["documents", "metadatas"], where=where):
            for pid, doc, m in zip(ids, docs, metas, strict=True):
                yield paper_from_record(pid, doc, m), _stamp(m)

    def stamps_since(self, since: float) -> dict[str, float]:
        """The ids of the papers written at or after ``since``, each with the time its record was written (their
        metadata only: no abstract is read)."""
        out: dict[str, float] = {}
        for ids, _docs, metas in self._pages(
            self.papers, include=["metadatas"], where={"ingested_at": {"$gte": since}}
        ):
            out.update((pid, _stamp(m)) for pid, m in zip(ids, metas, strict=True))
        return out

    def iter_stamped_of(self, stamps: dict[str, float]) -> Iterator[tuple[Paper, float]]:
        """These papers (those in the store), a page at a time, each with its stamp from ``stamps``."""
        ids = list(stamps)
        for start in range(0, len(ids), PAGE):
            for pid, p in self.get_papers(ids[start : start + PAGE]).items():
                yield p, stamps[pid]

    def get_papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        if not ids:
            return {}
        res = self.papers.get(ids=list(dict.fromkeys(ids)), include=["documents", "metadatas"])
        docs = res.get("documents") or []
        metas = res.get("metadatas") or []
        return {
            pid: paper_from_record(pid, doc, dict(m or {})) for pid, doc, m in zip(res["ids"], docs, metas, strict=True)
        }

    def paper_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        out: dict[str, np.ndarray] = {}
        for res in self.papers.readable(ids, lambda papers, part: papers.get(ids=part, include=["embeddings"])):
            embs = res.get("embeddings")
            if embs is not None:
                out.update((pid, np.asarray(e, dtype=np.float32)) for pid, e in zip(res["ids"], embs, strict=True))
        return out

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Every chunk embedding of each paper (rows in chunk order), for the papers that have chunks."""
        if not ids:
            return {}
        # a chunk's id is "<paper id>:<position>" (see chunk.py), positions 0, 1, … with no gaps (a rewrite deletes
        # the positions past its last): the first GUESSED_CHUNKS positions of every paper are read by id (a
        # primary-key lookup; ids that do not exist cost next to nothing), and only the papers that fill all of
        # them are read again by their paper_id, for the rest (a metadata filter: three times slower at 50k papers)
        wanted = list(dict.fromkeys(ids))
        guessed = [f"{pid}:{i}" for pid in wanted for i in range(GUESSED_CHUNKS)]
        rows: dict[str, list[tuple[int, Any]]] = {}
        for res in self.chunks.readable(guessed, lambda chunks, part: chunks.get(ids=part, include=["embeddings"])):
            self._chunk_rows(res, rows)
        more = [pid for pid, r in rows.items() if len(r) >= GUESSED_CHUNKS]
        if more:
            for pid in more:
                del rows[pid]
            for res in self.chunks.readable(
                more, lambda chunks, part: chunks.get(where={"paper_id": {"$in": part}}, include=["embeddings"])
            ):
                self._chunk_rows(res, rows)
        return {
            pid: np.asarray([e for _, e in sorted(r, key=lambda x: x[0])], dtype=np.float32) for pid, r in rows.items()
        }

    @staticmethod
    def _chunk_rows(res: Any, rows: dict[str, list[tuple[int, Any]]]) -> None:
        """Add a ``get``'s chunk embeddings to ``rows`` (paper id -> (position, embedding) pairs)."""
        embs = res.get("embeddings")
        if embs is None:
            return
        for cid, e in zip(res["ids"], embs, strict=True):
            pid, _, pos = cid.rpartition(":")
            rows.setdefault(pid, []).append((int(pos), e))

    def nearest_paper_ids(self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None) -> list[str]:
        """The papers of the ``n`` nearest chunks, nearest first (ids only: no documents are read)."""
        res = self.chunks.query(query_embeddings=[vector.tolist()], n_results=max(1, n), where=where, include=[])
        return list(dict.fromkeys(cid.rsplit(":", 1)[0] for cid in (res.get("ids") or [[]])[0]))

    def nearest_chunk_ids(
        self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, similarity) of the ``n`` nearest chunks, nearest first: the ids and distances alone (reading
        the chunks' documents and metadata as well made the query five times slower)."""
        res = self.chunks.query(
            query_embeddings=[vector.tolist()], n_results=max(1, n), where=where, include=["distances"]
        )
        ids = (res.get("ids") or [[]])[0]
        dists = (res.get("distances") or [[]])[0]
        return [(str(cid), 1.0 - float(dist)) for cid, dist in zip(ids, dists, strict=True)]

    def chunk_texts(self, chunk_ids: Sequence[str] = (), paper_ids: Sequence[str] = ()) -> dict[str, str]:
        """The text of these chunks, or of every chunk of these papers, by chunk id."""
        if not chunk_ids and not paper_ids:
            return {}
        if chunk_ids:
            res = self.chunks.get(ids=list(chunk_ids), include=["documents"])
        else:
            res = self.chunks.get(where={"paper_id": {"$in": list(paper_ids)}}, include=["documents"])
        return {str(cid): d or "" for cid, d in zip(res["ids"], res.get("documents") or [], strict=True)}

    def query_chunks(self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None) -> list[ChunkHit]:
        """The nearest chunks, most similar first."""
        # Chroma returns fewer than n_results when the collection (or the filter) holds fewer, so no count()
        # first: at 50k papers that was a 4 ms request on every query.
        res = self.chunks.query(
            query_embeddings=[vector.tolist()],
            n_results=max(1, n),
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        docs = (res.get("documents") or [[]])[0]
        metas = (res.get("metadatas") or [[]])[0]
        dists = (res.get("distances") or [[]])[0]
        return [
            ChunkHit(str(m["paper_id"]), d or "", 1.0 - float(dist), int(m.get("position", 0)))  # type: ignore[arg-type]
            for d, m, dist in zip(docs, metas, dists, strict=True)
            if m
        ]

    def _pages(
        self, col: Any, include: list[str], where: dict[str, Any] | None = None
    ) -> Iterator[tuple[list[str], list[Any], list[dict[str, Any]]]]:
        offset = 0
        while True:
            res = col.get(limit=LIST_PAGE, offset=offset, include=include, where=where)
            ids = res["ids"]
            if not ids:
                return
            docs = res.get("documents") or [None] * len(ids)
            metas = [dict(m or {}) for m in (res.get("metadatas") or [{}] * len(ids))]
            yield ids, docs, metas
            if len(ids) < LIST_PAGE:  # (the last page: asking for the next one costs a query that finds nothing, 0.2 s
                return  # with a filter at 1M papers)
            offset += len(ids)

    # -- writing ---------------------------------------------------------------------------------
    def max_batch(self) -> int:
        try:
            return int(self.client.get_max_batch_size())
        except Exception:
            return 5000

    def write(self, items: Sequence[tuple[Paper, list[Chunk], np.ndarray]], old_counts: dict[str, int]) -> None:
        """Write papers with their chunks and chunk vectors: chunks first, then the paper records."""
        ids: list[str] = []
        docs: list[str] = []
        metas: list[dict[str, Any]] = []
        vecs: list[list[float]] = []
        stale: list[str] = []
        for paper, chunks, vectors in items:
            for c, v in zip(chunks, vectors, strict=True):
                ids.append(c.chunk_id)
                docs.append(c.text)
                meta: dict[str, Any] = {
                    "paper_id": paper.paper_id,
                    "title": paper.title,
                    "venue": paper.venue,
                    "has_code": paper.has_code,
                    "position": c.position,
                    "start": c.start,
                    "end": c.end,
                }
                if paper.year is not None:
                    meta["year"] = paper.year
                metas.append(meta)
                vecs.append(v.tolist())
            stale.extend(f"{paper.paper_id}:{i}" for i in range(len(chunks), old_counts.get(paper.paper_id, 0)))
        step = self.max_batch()
        for s in range(0, len(ids), step):
            self.chunks.upsert(
                ids=ids[s : s + step],
                documents=docs[s : s + step],
                metadatas=metas[s : s + step],
                embeddings=vecs[s : s + step],
            )  # type: ignore[arg-type]
        if stale:
            self.chunks.delete(ids=stale)
        now = time.time()
        pvecs = [mean_vector(vectors).tolist() for _paper, _chunks, vectors in items]
        for s in range(0, len(items), step):
            part = items[s : s + step]
            self.papers.upsert(
                ids=[p.paper_id for p, _, _ in part],
                documents=[p.abstract for p, _, _ in part],
                metadatas=[paper_metadata(p, len(c), now, [(x.start, x.end) for x in c]) for p, c, _ in part],  # type: ignore[misc]
                embeddings=pvecs[s : s + step],  # type: ignore[arg-type]
            )

    def bump_revision(self) -> str:
        rev = uuid.uuid4().hex
        self.papers.modify(metadata={"embedder": self.embedder_id, "dim": self.dim, "revision": rev})
        return rev


def _stamp(meta: dict[str, Any]) -> float:
    """When a paper's record was written (its ``ingested_at``; 0 for a record written before it was kept)."""
    return float(meta.get("ingested_at", 0.0) or 0.0)


def mean_vector(vectors: np.ndarray) -> np.ndarray:
    """A paper's embedding: the mean of its chunks' vectors, L2-normalised."""
    mean = vectors.mean(axis=0)
    return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-12))


def writable(directory: Path) -> bool:
    """Whether askpapers can write in ``directory`` (or create it); False on a read-only file system."""
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return os.access(probe, os.W_OK)


def read_only_snapshot(settings: StoreSettings) -> StoreSettings | None:
    """For an embedded store in a read-only directory: settings of a private copy that can answer questions.

    Chroma writes to its directory even to read, so a read-only data directory (a read-only mount, a shared
    snapshot) is copied once to a temporary directory. New papers cannot be added there; None when the data
    directory is writable or holds no store.
    """
    if settings.mode != "embedded" or writable(settings.data_dir):
        return None
    if not (settings.data_dir / "chroma.sqlite3").exists():
        return None
    copy = Path(tempfile.mkdtemp(prefix="askpapers-readonly-")) / "store"
    atexit.register(shutil.rmtree, copy.parent, ignore_errors=True)
    try:
        shutil.copytree(settings.data_dir, copy, ignore=shutil.ignore_patterns(".*.lock", "*.tmp*"))
    except OSError as e:
        raise StoreError(f"the data directory {settings.data_dir} is read-only and could not be copied: {e}") from e
    return settings.model_copy(update={"data_dir": copy})
