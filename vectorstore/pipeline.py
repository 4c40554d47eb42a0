"""parse → papers → chunks → embed → store, with a progress bar and a report."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from askpapers.vectorstore.chunk import chunk_paper
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import Embedder, get_embedder
from askpapers.vectorstore.errors import InputError, StoreError
from askpapers.vectorstore.lexical import lexical_path, sync_lexical
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.records import StoredPaper, content_hash
from askpapers.vectorstore.store import Store
from askpapers.vectorstore.text import sentence_spans
from askpapers.vectorstore.titles import unique_titles
from askpapers.vectorstore.types import Chunk, IngestReport, Paper


@contextmanager
def ingest_lock(settings: StoreSettings, wait: bool = True) -> Iterator[None]:
    """One ingest at a time per data directory (other processes wait for the lock)."""
    path = settings.data_dir / f".{settings.collection}.ingest.lock"
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        fh = path.open("a")
    except OSError as e:
        raise StoreError(
            f"cannot write to the data directory {settings.data_dir} ({e.strerror or e}); "
            "nothing was changed — make it writable or set ASKPAPERS_DATA_DIR"
        ) from e
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise StoreError(f"another ingest is running on {settings.data_dir}; try again when it ends") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class _Running:
    """The ingests running in this process, and the request to stop them (SIGTERM: see :func:`stop_ingests`)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.count = 0
        self.changed = threading.Condition()

    @contextmanager
    def one(self) -> Iterator[None]:
        with self.changed:
            self.count += 1
        try:
            yield
        finally:
            with self.changed:
                self.count -= 1
                self.changed.notify_all()


RUNNING = _Running()


def stop_ingests(timeout: float = 120.0) -> bool:
    """Ask every ingest of this process to stop at its next batch boundary (the batch being embedded is committed
    whole first), and wait for them; True when none is left running. Later ingests are refused."""
    RUNNING.stop.set()
    with RUNNING.changed:
        return RUNNING.changed.wait_for(lambda: RUNNING.count == 0, timeout=timeout)


EMBED_SLICE = 32  # fewest texts embedded between two progress reports (the embedder runs them in batches of 8)
PROGRESS_STEPS = 4  # progress reports per batch at most
Report = Callable[[int], None]  # called with the number of papers just finished


def progress_bar(total: int, show: bool | None) -> object:
    from tqdm.auto import tqdm

    # every report is drawn: they come once per EMBED_SLICE chunks, a fraction of a second apart
    return tqdm(total=total, unit="paper", desc="Ingesting", disable=(None if show is None else not show),
                leave=False, mininterval=0, miniters=1)  # fmt: skip


class _CachedCounter:
    """Token counts, looked up from one batched tokenizer call where possible."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._known: dict[str, int] = {}

    def prime(self, texts: list[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if todo:
            self._known.update(zip(todo, self._embedder.count_tokens_batch(todo), strict=True))

    def __call__(self, texts: Sequence[str]) -> list[int]:
        self.prime(list(texts))
        return [self._known[t] for t in texts]


def _pieces(p: Paper) -> list[str]:
    """The texts the chunker counts first: the title prefix and each sentence."""
    return ["" if p.title_derived else p.title, *(p.abstract[s:e] for s, e in sentence_spans(p.abstract))]


def chunk_batch(
    batch: list[Paper], embedder: Embedder, settings: StoreSettings
) -> tuple[list[tuple[Paper, list[Chunk]]], list[str]]:
    """Each paper with its chunks, and the texts the model embeds for them (title prefix, then the chunk)."""
    items = []
    texts: list[str] = []
    count = _CachedCounter(embedder)
    count.prime([t for p in batch for t in _pieces(p)])  # one tokenizer call for the whole batch
    for p in batch:
        prefix = "" if p.title_derived else p.title
        chunks = chunk_paper(
            p, count, prefix=prefix, max_sentences=settings.chunk_sentences, overlap=settings.chunk_overlap
        )
        items.append((p, chunks))
        texts.extend((prefix + ". " if prefix else "") + c.text for c in chunks)
    return items, texts


def precomputed_chunks(
    papers: list[Paper], embedder: Embedder, settings: StoreSettings
) -> dict[str, tuple[list[Chunk], np.ndarray]]:
    """Chunks and vectors of the papers that carry an ``embedding``, checked before anything is written.

    One vector makes the whole abstract one chunk; several must match askpapers' own chunks one to one
    (``askpapers embed`` writes them so).
    """
    out: dict[str, tuple[list[Chunk], np.ndarray]] = {}
    given = [p for p in papers if p.embedding is not None]
    for p in given:
        assert p.embedding is not None
        where = f"{p.source or 'input'}: paper '{p.paper_id}'"
        if p.embedded_with and p.embedded_with != embedder.embedder_id:
            raise InputError(
                f"{where}: its embedding was made by '{p.embedded_with}', but this store uses "
                f"'{embedder.embedder_id}'; drop the 'embedding' field or re-embed with `askpapers embed`"
            )
        if p.embedding.shape[1] != embedder.dim:
            raise InputError(
                f"{where}: 'embedding' has {p.embedding.shape[1]} dimensions; "
                f"the store's embedder ({embedder.embedder_id}) makes {embedder.dim}"
            )
        vectors = p.embedding.astype(np.float32, copy=True)
        vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        if len(vectors) == 1:
            chunks = [Chunk(f"{p.paper_id}:0", p.paper_id, 0, p.abstract, 0, len(p.abstract))]
        else:
            chunks = chunk_batch([p], embedder, settings)[0][0][1]
            if len(chunks) != len(vectors):
                raise InputError(
                    f"{where}: 'embedding' has {len(vectors)} vectors but askpapers cuts this abstract into "
                    f"{len(chunks)} chunks (were the chunk settings different when it was exported?)"
                )
        out[p.paper_id] = (chunks, vectors)
    return out


def _embed_reporting(texts: list[str], sizes: list[int], embedder: Embedder, report: Report | None) -> np.ndarray:
    """Embed ``texts`` (the chunks of papers with ``sizes`` chunks each, in order), reporting the papers finished
    after every slice: a quarter of the batch, at least :data:`EMBED_SLICE` chunks. Slices are cut from the texts
    sorted by length, so each holds texts of similar length and pads little."""
    if report is None or len(texts) <= EMBED_SLICE:
        vectors = embedder.embed(texts)
        if report is not None and sizes:
            report(len(sizes))
        return vectors
    owner = np.repeat(np.arange(len(sizes)), sizes)  # the paper of each chunk
    remaining = np.asarray(sizes, dtype=np.int64).copy()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    step = max(EMBED_SLICE, -(-len(texts) // PROGRESS_STEPS))  # (larger slices embed faster)
    out: np.ndarray | None = None
    for start in range(0, len(order), step):
        idx = order[start : start + step]
        part = embedder.embed([texts[i] for i in idx])
        if out is None:
            out = np.empty((len(texts), part.shape[1]), dtype=part.dtype)
        out[idx] = part
        papers = owner[idx]
        np.subtract.at(remaining, papers, 1)
        done = int(np.count_nonzero(remaining[np.unique(papers)] == 0))
        if done:
            report(done)
    assert out is not None
    return out


def embed_batch(
    batch: list[Paper],
    embedder: Embedder,
    settings: StoreSettings,
    given: dict[str, tuple[list[Chunk], np.ndarray]] | None = None,
    report: Report | None = None,
) -> list[tuple[Paper, list[Chunk], np.ndarray]]:
    """Chunk and embed a batch of papers (or take their precomputed vectors): papers, chunks, vectors.

    ``report`` is told, as the embedding goes, how many more papers are done (the precomputed ones at once).
    """
    given = given or {}
    if report is not None and any(p.paper_id in given for p in batch):
        report(sum(p.paper_id in given for p in batch))
    items, texts = chunk_batch([p for p in batch if p.paper_id not in given], embedder, settings)
    vectors = _embed_reporting(texts, [len(chunks) for _, chunks in items], embedder, report)
    computed, offset = {}, 0
    for p, chunks in items:
        computed[p.paper_id] = (p, chunks, vectors[offset : offset + len(chunks)])
        offset += len(chunks)
    return [computed[p.paper_id] if p.paper_id not in given else (p, *given[p.paper_id]) for p in batch]


# Titles for papers without one, made once when a paper is new or changed (an LLM's, say): one title or None per
# paper, None keeping the offline one. The title stays marked as derived, so it never counts in the content hash.
Titler = Callable[[Sequence[Paper]], Sequence[str | None]]


def _to_write(
    papers: list[Paper], existing: dict[str, StoredPaper], report: IngestReport, titler: Titler | None = None,
    every: Callable[[], dict[str, StoredPaper]] | None = None,
) -> list[Paper]:  # fmt: skip
    """The papers that are new or changed (counted in ``report``), with derived titles unique in the store.

    ``existing`` holds at least the stored records of ``papers``; ``every``, if given, reads every stored record
    (the titles a derived title must not repeat), only when some paper to write has a derived title."""
    todo: list[Paper] = []
    for p in papers:
        old = existing.get(p.paper_id)
        if old is not None and old.hash == content_hash(p):
            report.unchanged += 1
            continue
        if old is None:
            report.added += 1
        else:
            report.updated += 1
        todo.append(p)
    if titler is not None:
        untitled = [i for i, p in enumerate(todo) if p.title_derived]
        for i, title in zip(untitled, titler([todo[i] for i in untitled]), strict=True):
            if title:
                todo[i] = replace(todo[i], title=title)
    todo_ids = {p.paper_id for p in todo}
    if every is not None and any(p.title_derived for p in todo):
        existing = every()
    taken = {s.title.lower() for pid, s in existing.items() if pid not in todo_ids}
    fixed = unique_titles(((p.paper_id, p.title) for p in todo if p.title_derived), taken=taken)
    return [replace(p, title=fixed[p.paper_id]) if p.paper_id in fixed else p for p in todo]


def read_papers(paths: Iterable[str | os.PathLike[str]], *, skip_bad: bool = False) -> list[Paper]:
    """The papers an ingest of ``paths`` into an empty store writes: parsed, merged, derived titles made unique."""
    return _to_write(parse_paths(paths, skip_bad=skip_bad).papers, {}, IngestReport())


def _write(
    store: Store, todo: list[Paper], old_counts: dict[str, int], embedder: Embedder, settings: StoreSettings,
    report: IngestReport, progress: bool | None, on_progress: Callable[[int, int], None] | None = None,
) -> None:  # fmt: skip
    """Embed and write ``todo`` one batch (one commit) at a time, reporting papers embedded as they are."""
    given = precomputed_chunks(todo, embedder, settings)
    # Papers of similar length share a batch, so the embedder's length-sorted sub-batches pad less.
    todo.sort(key=lambda p: len(p.abstract) + (0 if p.title_derived else len(p.title)))
    bar = progress_bar(len(todo), progress)
    done = 0

    def embedded(n: int) -> None:
        nonlocal done
        done += n
        bar.update(n)  # type: ignore[attr-defined]
        if on_progress is not None:
            on_progress(done, len(todo))

    try:
        for start in range(0, len(todo), settings.batch_size):
            if RUNNING.stop.is_set():
                raise StoreError(f"the server is shutting down: {start} of {len(todo)} new or changed papers were "
                                 "stored, in whole batches; add the file again to store the rest")  # fmt: skip
            batch = todo[start : start + settings.batch_size]
            written = embed_batch(batch, embedder, settings, given, embedded)
            # one commit per batch: a killed ingest resumes after the last committed batch
            store.write(written, old_counts)
            # every batch changes the revision marker, so a reader in another process sees each one
            store.bump_revision()
            report.chunks += sum(len(chunks) for _, chunks, _ in written)
    except StoreError:
        raise
    except Exception as e:
        raise StoreError(f"writing to the store failed: {e}") from e
    finally:
        bar.close()  # type: ignore[attr-defined]


def ingest(
    paths: Iterable[str | os.PathLike[str]],
    settings: StoreSettings,
    *,
    skip_bad: bool = False,
    progress: bool | None = None,
    embedder: Embedder | None = None,
    titler: Titler | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Ingest corpus files or folders into the store and report what changed.

    ``titler``, if given, titles the new or changed papers that came without a title (see :data:`Titler`).
    ``on_progress(done, total)`` is called as papers are embedded (every few dozen chunks), before each commit.

    Every file is parsed before anything is written, so a bad file leaves the store as it was.
    Re-ingesting the same files changes nothing; a changed abstract replaces its old chunks.
    """
    t0 = time.perf_counter()
    parsed = parse_paths(paths, skip_bad=skip_bad)
    report = IngestReport(skipped=parsed.skipped, files=parsed.files, messages=list(parsed.messages))
    embedder = embedder or get_embedder()
    with RUNNING.one(), ingest_lock(settings):
        store = Store(settings, embedder.embedder_id, embedder.dim)
        existing = store.stored([p.paper_id for p in parsed.papers])
        todo = _to_write(parsed.papers, existing, report, titler, every=store.stored)
        old_counts = {pid: s.n_chunks for pid, s in existing.items()}
        _write(store, todo, old_counts, embedder, settings, report, progress, on_progress)
        if not todo and not lexical_path(settings).exists():
            store.bump_revision()
        try:
            sync_lexical(store, settings)
        except (OSError, ValueError, sqlite3.Error) as e:
            raise StoreError(f"the papers are stored, but the BM25 index could not be rebuilt: {e}") from e
        report.total_papers = store.count()
    report.seconds = time.perf_counter() - t0
    return report
