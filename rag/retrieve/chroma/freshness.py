"""The Chroma-backed index's freshness: the store's revision, checked once per question, and the BM25 index kept up
to date with it.

Freshness is one small request per question: the store's revision marker, which an ingest changes after every
batch it commits. A change brings the BM25 index up to date and empties the caches
(:meth:`rag.retrieve.chroma.caches.RevisionCaches.renew`). Inside :meth:`StoreFreshness.pinned` the check is made once
for all the lookups of one question. Every role of the index shares one :class:`StoreFreshness`, and answers the
:class:`~rag.retrieve.index.Freshness` interface through it (:class:`FreshRole`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from askpapers.rag.retrieve.chroma.caches import RevisionCaches
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.lexical import LexicalIndex, sync_lexical
from askpapers.vectorstore.store import Store

log = logging.getLogger("askpapers")
T = TypeVar("T")


class StoreFreshness:
    """The store's revision as last seen, and the BM25 index derived from it."""

    def __init__(self, store: Store, settings: StoreSettings, caches: RevisionCaches) -> None:
        self.store = store
        self.settings = settings
        self.caches = caches
        self._lexical: LexicalIndex | None = None
        self._lexical_key = ""
        self._pinned = threading.local()

    def refresh(self) -> LexicalIndex:
        """The BM25 index, brought up to date first if the store changed, here or in another process."""
        pinned: LexicalIndex | None = getattr(self._pinned, "index", None)
        if pinned is not None:
            return pinned
        with self.caches.lock:
            key = self.store.revision
            if self._lexical is None or key != self._lexical_key or not self._lexical.path.exists():
                self._lexical = sync_lexical(self.store, self.settings)
                self._lexical_key = key
            self.caches.renew(key)
            return self._lexical

    def pinned(self) -> AbstractContextManager[None]:
        """One freshness check for every lookup inside (one question's), on this thread."""
        return self._holding(None)

    def carried(self) -> Callable[[], AbstractContextManager[None]]:
        """This thread's pin, to hold on a worker thread running one of the question's lookups: the same revision
        and BM25 index, without another check of the store (a worker's own check was a request to Chroma per
        lookup run beside a question, as long as the check the question had made); a fresh pin when this thread
        holds none."""
        held: LexicalIndex | None = getattr(self._pinned, "index", None)
        return lambda: self._holding(held)

    @contextmanager
    def _holding(self, held: LexicalIndex | None) -> Iterator[None]:
        """Pinned to ``held`` (checked now when None), unless this thread is pinned already."""
        if getattr(self._pinned, "index", None) is not None:
            yield
            return
        self._pinned.index = held if held is not None else self.refresh()
        try:
            yield
        finally:
            self._pinned.index = None

    @property
    def seen_revision(self) -> str:
        """The store revision at the last freshness check (no request to the store)."""
        return self._lexical_key

    @property
    def revision(self) -> str:
        return self.store.revision

    def call(self, call: Callable[[LexicalIndex], T]) -> T:
        """Run ``call`` on the fresh BM25 index; a damaged index file is rebuilt from the store, then retried.

        The index is a cache: if its file is overwritten or corrupted while the app runs, the next question
        rebuilds it instead of failing until another process does.
        """
        index = self.refresh()
        try:
            return call(index)
        except sqlite3.DatabaseError as e:
            log.warning("askpapers: the BM25 index %s is damaged (%s); rebuilding it from the store", index.path, e)
            with self.caches.lock:
                self._lexical = sync_lexical(self.store, self.settings, force=True)
                self._lexical_key = self.store.revision
                index = self._lexical
            if getattr(self._pinned, "index", None) is not None:
                self._pinned.index = index
            return call(index)


class FreshRole:
    """A role of the index (reads, vectors, BM25, statistics): the :class:`~rag.retrieve.index.Freshness` of the one
    :class:`StoreFreshness` the roles share."""

    def __init__(self, fresh: StoreFreshness) -> None:
        self.fresh = fresh
        self.store = fresh.store
        self.caches = fresh.caches

    def refresh(self) -> LexicalIndex:
        return self.fresh.refresh()

    def pinned(self) -> AbstractContextManager[None]:
        return self.fresh.pinned()

    def carried(self) -> Callable[[], AbstractContextManager[None]]:
        return self.fresh.carried()

    @property
    def seen_revision(self) -> str:
        return self.fresh.seen_revision

    @property
    def revision(self) -> str:
        return self.fresh.revision
