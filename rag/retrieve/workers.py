"""Worker threads that run a question's independent lookups beside it: the fused search's dense retriever while
BM25 runs, a facet's dense searches while its phrase lookups run. Embedding, Chroma's queries and SQLite all run
outside Python's lock, so two of them side by side take about as long as the longer one.

A task run here is a leaf: it never submits another task nor waits on one, so a busy pool only queues work and
cannot deadlock (a search run on a worker that waited on its own dense retriever, queued behind it, did).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from askpapers.rag.retrieve.index import Index

T = TypeVar("T")
WORKERS = 8  # threads for the lookups run beside questions (several questions at once)

_workers: tuple[int, ThreadPoolExecutor] | None = None  # (the process it belongs to, the pool)
_workers_lock = threading.Lock()


def _process() -> int:
    return os.getpid()


def pool() -> ThreadPoolExecutor:
    """This process's worker threads. A forked child does not inherit the parent's threads, so it gets a pool of
    its own (work submitted to the inherited one would wait forever)."""
    global _workers
    with _workers_lock:
        pid = _process()
        if _workers is None or _workers[0] != pid:
            _workers = (pid, ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="askpapers-retrieve"))
        return _workers[1]


def beside(index: Index, fn: Callable[..., T], *args: object) -> Future[T]:
    """``fn(*args)`` on a worker thread, pinned to the revision this thread is pinned to (pins are per thread:
    :meth:`~rag.retrieve.index.Freshness.carried`), or with its own freshness check when this thread holds none;
    its exception, if any, is raised by the future's ``result()``. ``fn`` must be a leaf (see the module
    docstring)."""
    pinned = index.carried()

    def run() -> T:
        with pinned():
            return fn(*args)

    return pool().submit(run)
