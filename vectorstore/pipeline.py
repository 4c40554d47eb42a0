"""parse → papers → chunks → embed → store, with a progress bar and a report."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from .chunk import chunk_paper
from .config import StoreSettings
from .embed import Embedder, get_embedder
from .errors import StoreError
from .lexical import LexicalIndex
from .parse import parse_paths
from .store import Store, content_hash
from .titles import unique_titles
from .types import IngestReport, Paper


def lexical_path(settings: StoreSettings) -> Path:
    return settings.data_dir / f"{settings.collection}.lexical.sqlite"


@contextmanager
def ingest_lock(settings: StoreSettings, wait: bool = True) -> Iterator[None]:
    """One ingest at a time per data directory (other processes wait for the lock)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path = settings.data_dir / f".{settings.collection}.ingest.lock"
    with path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise StoreError(f"another ingest is running on {settings.data_dir}; try again when it ends") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def sync_lexical(store: Store, settings: StoreSettings, force: bool = False) -> LexicalIndex:
    """The BM25 index, rebuilt from the store when it is missing or stale."""
    index = LexicalIndex(lexical_path(settings))
    revision = store.revision
    if force or index.built_from() != (revision, store.count()):
        index.rebuild(store.iter_papers(), revision)
    return index


def _progress(total: int, show: bool | None) -> object:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="paper", desc="Ingesting", disable=(None if show is None else not show), leave=False)


def ingest(
    paths: Iterable[str | os.PathLike[str]],
    settings: StoreSettings | None = None,
    *,
    skip_bad: bool = False,
    progress: bool | None = None,
    embedder: Embedder | None = None,
) -> IngestReport:
    """Ingest corpus files or folders into the store and report what changed.

    Every file is parsed before anything is written, so a bad file leaves the store as it was.
    Re-ingesting the same files changes nothing; a changed abstract replaces its old chunks.
    """
    t0 = time.perf_counter()
    settings = settings or StoreSettings()
    parsed = parse_paths(paths, skip_bad=skip_bad)
    report = IngestReport(skipped=parsed.skipped, files=parsed.files, messages=list(parsed.messages))
    embedder = embedder or get_embedder(settings.embed_threads)
    with ingest_lock(settings):
        store = Store(settings, embedder.embedder_id, embedder.dim)
        existing = store.stored()
        todo: list[Paper] = []
        for p in parsed.papers:
            old = existing.get(p.paper_id)
            if old is not None and old.hash == content_hash(p):
                report.unchanged += 1
                continue
            if old is None:
                report.added += 1
            else:
                report.updated += 1
            todo.append(p)
        # derived titles must not clash with titles already in the store
        taken = {s.title.lower() for pid, s in existing.items() if pid not in {p.paper_id for p in todo}}
        fixed = unique_titles(((p.paper_id, p.title) for p in todo if p.title_derived), taken=taken)
        todo = [replace(p, title=fixed[p.paper_id]) if p.paper_id in fixed else p for p in todo]
        old_counts = {pid: s.n_chunks for pid, s in existing.items()}
        bar = _progress(len(todo), progress)
        try:
            for start in range(0, len(todo), settings.batch_size):
                batch = todo[start : start + settings.batch_size]
                items = []
                all_chunks: list[str] = []
                for p in batch:
                    prefix = "" if p.title_derived else p.title
                    chunks = chunk_paper(
                        p, embedder.count_tokens_batch, prefix=prefix, max_sentences=settings.chunk_sentences
                    )
                    items.append((p, chunks))
                    all_chunks.extend((prefix + ". " if prefix else "") + c.text for c in chunks)
                vectors = embedder.embed(all_chunks)
                written, offset = [], 0
                for p, chunks in items:
                    written.append((p, chunks, vectors[offset : offset + len(chunks)]))
                    offset += len(chunks)
                store.write(written, old_counts)
                report.chunks += len(all_chunks)
                bar.update(len(batch))  # type: ignore[attr-defined]
        except StoreError:
            raise
        except Exception as e:
            raise StoreError(f"writing to the store failed: {e}") from e
        finally:
            bar.close()  # type: ignore[attr-defined]
        if todo or not lexical_path(settings).exists():
            store.bump_revision()
        sync_lexical(store, settings)
        report.total_papers = store.count()
    report.seconds = time.perf_counter() - t0
    return report
