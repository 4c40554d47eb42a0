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
import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .config import StoreSettings
from .errors import EmbedderMismatchError, StoreError
from .types import Chunk, ChunkHit, Filters, Paper

PAGE = 1000


def content_hash(p: Paper) -> str:
    """Changes when anything a user gave for the paper changes (a derived title does not count)."""
    parts = [p.abstract, p.venue, str(p.year or ""), p.url, "|".join(p.authors), "|".join(p.keywords)]
    if not p.title_derived:
        parts.append(p.title)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:20]


def where_clause(filters: Filters | None) -> dict[str, Any] | None:
    """The Chroma ``where`` for validated filters (venue, year, has_code), or None for no filter."""
    conds: list[dict[str, Any]] = []
    if filters is not None:
        if filters.venue is not None:
            conds.append({"venue": filters.venue})
        if filters.year is not None:
            conds.append({"year": filters.year})
        if filters.has_code:
            conds.append({"has_code": True})
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else {"$and": conds}


def paper_metadata(p: Paper, n_chunks: int, ingested_at: float = 0.0) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "paper_id": p.paper_id,
        "title": p.title,
        "title_derived": p.title_derived,
        "venue": p.venue,
        "url": p.url,
        "authors": json.dumps(list(p.authors), ensure_ascii=False),
        "keywords": json.dumps(list(p.keywords), ensure_ascii=False),
        "code_urls": json.dumps(list(p.code_urls)),
        "has_code": p.has_code,
        "source": p.source,
        "hash": content_hash(p),
        "n_chunks": n_chunks,
        "ingested_at": ingested_at,  # when this record was written: derived indexes fetch what changed since
    }
    if p.year is not None:
        meta["year"] = p.year
    return meta


def paper_from_record(pid: str, document: str | None, meta: dict[str, Any]) -> Paper:
    return Paper(
        paper_id=pid,
        title=str(meta.get("title", "")),
        abstract=document or "",
        venue=str(meta.get("venue", "")),
        year=int(meta["year"]) if "year" in meta else None,
        url=str(meta.get("url", "")),
        authors=tuple(json.loads(str(meta.get("authors", "[]")))),
        keywords=tuple(json.loads(str(meta.get("keywords", "[]")))),
        code_urls=tuple(json.loads(str(meta.get("code_urls", "[]")))),
        title_derived=bool(meta.get("title_derived", False)),
        source=str(meta.get("source", "")),
    )


@dataclass(frozen=True)
class StoredPaper:
    hash: str
    n_chunks: int
    title: str


class Store:
    """A handle on the two collections, created if they do not exist yet."""

    def __init__(self, settings: StoreSettings, embedder_id: str, dim: int) -> None:
        self.settings = settings
        self.embedder_id = embedder_id
        self.dim = dim
        self.client = _Guarded(_client(settings), settings)
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
            raise StoreError(f"cannot open {settings.describe()}: {_reason(e, settings)}") from e
        self.chunks = _Guarded(self.chunks, settings)
        self.papers = _Guarded(self.papers, settings)
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

    def stored(self) -> dict[str, StoredPaper]:
        """Every committed paper's content hash, chunk count and title."""
        out: dict[str, StoredPaper] = {}
        for ids, _docs, metas in self._pages(self.papers, include=["metadatas"]):
            for pid, m in zip(ids, metas, strict=True):
                out[pid] = StoredPaper(str(m.get("hash", "")), int(m.get("n_chunks", 0)), str(m.get("title", "")))
        return out

    def iter_papers(self, since: float | None = None) -> Iterator[Paper]:
        """Every paper, or those written at or after ``since`` (a time.time() value)."""
        where = None if since is None else {"ingested_at": {"$gte": since}}
        for ids, docs, metas in self._pages(self.papers, include=["documents", "metadatas"], where=where):
            for pid, doc, m in zip(ids, docs, metas, strict=True):
                yield paper_from_record(pid, doc, m)

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
        res = self.papers.get(ids=list(ids), include=["embeddings"])
        embs = res.get("embeddings")
        if embs is None:
            return {}
        return {pid: np.asarray(e, dtype=np.float32) for pid, e in zip(res["ids"], embs, strict=True)}

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Every chunk embedding of each paper (rows in chunk order), for the papers that have chunks."""
        if not ids:
            return {}
        # a chunk's id is "<paper id>:<position>" (see chunk.py): no metadata to read (it was two thirds of the time)
        res = self.chunks.get(where={"paper_id": {"$in": list(ids)}}, include=["embeddings"])
        embs = res.get("embeddings")
        if embs is None:
            return {}
        rows: dict[str, list[tuple[int, Any]]] = {}
        for cid, e in zip(res["ids"], embs, strict=True):
            pid, _, pos = cid.rpartition(":")
            rows.setdefault(pid, []).append((int(pos), e))
        return {
            pid: np.asarray([e for _, e in sorted(r, key=lambda x: x[0])], dtype=np.float32) for pid, r in rows.items()
        }

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
            res = col.get(limit=PAGE, offset=offset, include=include, where=where)
            ids = res["ids"]
            if not ids:
                return
            docs = res.get("documents") or [None] * len(ids)
            metas = [dict(m or {}) for m in (res.get("metadatas") or [{}] * len(ids))]
            yield ids, docs, metas
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
                metadatas=[paper_metadata(p, len(c), now) for p, c, _ in part],  # type: ignore[misc]
                embeddings=pvecs[s : s + step],  # type: ignore[arg-type]
            )

    def bump_revision(self) -> str:
        rev = uuid.uuid4().hex
        self.papers.modify(metadata={"embedder": self.embedder_id, "dim": self.dim, "revision": rev})
        return rev


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


def _client(settings: StoreSettings) -> Any:
    """An embedded PersistentClient, an HttpClient for a `chroma run` server, or a CloudClient."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    try:
        if settings.mode == "cloud":
            key = settings.chroma_cloud_api_key.get_secret_value() if settings.chroma_cloud_api_key else None
            return chromadb.CloudClient(
                tenant=settings.chroma_tenant,
                database=settings.chroma_database,
                api_key=key,
                settings=chroma_settings,
            )
        if settings.mode == "server":
            headers = dict(settings.chroma_headers)
            if settings.chroma_token is not None:
                headers["Authorization"] = f"Bearer {settings.chroma_token.get_secret_value()}"
            return chromadb.HttpClient(
                host=settings.chroma_host,
                port=settings.chroma_port,
                ssl=settings.chroma_ssl,
                headers=headers or None,
                settings=chroma_settings,
                tenant=settings.chroma_tenant,
                database=settings.chroma_database,
            )
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(settings.data_dir), settings=chroma_settings)
    except Exception as e:
        raise StoreError(f"cannot open {settings.describe()}: {_reason(e, settings)}") from e


# Reads that an embedded store answers from files another process may be writing (an ingest in another
# terminal): Chroma then raises an InternalError ("Error finding id") for a moment, until the writer's batch is
# committed. A read is retried after these pauses (about 2 s in all); a write or any other error is not.
READS = frozenset({"query", "get", "count", "peek"})
READ_RETRY_PAUSES = (0.05, 0.15, 0.45, 1.35)


def _transient(e: BaseException) -> bool:
    """An error a retried read may not meet again: Chroma's InternalError (a concurrent writer's commit)."""
    return type(e).__name__ == "InternalError"


class _Guarded:
    """A Chroma client or collection whose failures become one-line :class:`StoreError` s.

    An HttpClient reconnects on its next request, so when a server comes back the next call succeeds.
    A read that meets a concurrent writer's half-done commit is retried (``READ_RETRY_PAUSES``); ``sleep``
    is injectable so that tests count the retries instead of waiting.
    """

    def __init__(self, target: Any, settings: StoreSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self._target = target
        self._settings = settings
        self._sleep = sleep
        self.retries = 0  # reads retried so far (a count for tests and logs)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr
        pauses = READ_RETRY_PAUSES if name in READS else ()

        def call(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(len(pauses) + 1):
                try:
                    return attr(*args, **kwargs)
                except StoreError:
                    raise
                except Exception as e:
                    if attempt < len(pauses) and _transient(e):
                        self.retries += 1
                        self._sleep(pauses[attempt])
                        continue
                    hint = "" if self._settings.mode == "embedded" else " (is it running? the next request reconnects)"
                    raise StoreError(f"{self._settings.describe()} failed: {_reason(e, self._settings)}{hint}") from e
            raise AssertionError("unreachable")  # pragma: no cover

        return call


def _reason(e: BaseException, settings: StoreSettings) -> str:
    """A one-line reason, with any configured secret removed."""
    text = " ".join(str(e).split()) or type(e).__name__
    for secret in (settings.chroma_token, settings.chroma_cloud_api_key):
        if secret is not None and secret.get_secret_value():
            text = text.replace(secret.get_secret_value(), "***")
    for value in settings.chroma_headers.values():
        if value:
            text = text.replace(value, "***")
    return text[:300]
