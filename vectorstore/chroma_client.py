"""The Chroma client a :class:`~vectorstore.store.Store` opens (embedded, a ``chroma run`` server, or Chroma Cloud),
and the guard around it and its collections: failures become one-line :class:`StoreError` s with any secret
removed, and a read that meets a concurrent writer's half-done commit is retried."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.errors import StoreError

log = logging.getLogger("askpapers")


def connect(settings: StoreSettings) -> Any:
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
        raise StoreError(f"cannot open {settings.describe()}: {reason(e, settings)}") from e


# Reads that an embedded store answers from files another process may be writing (an ingest in another
# terminal): Chroma then raises an InternalError ("Error finding id") for a moment, until the writer's batch is
# committed. A read is retried after these pauses (about 2 s in all); a write or any other error is not.
READS = frozenset({"query", "get", "count", "peek"})
READ_RETRY_PAUSES = (0.05, 0.15, 0.45, 1.35)


def _met_writer(e: StoreError) -> bool:
    """Whether a read's StoreError is a concurrent writer's half-done commit (after its retries)."""
    return e.__cause__ is not None and _transient(e.__cause__)


def _transient(e: BaseException) -> bool:
    """An error a retried read may not meet again: Chroma's InternalError (a concurrent writer's commit)."""
    return type(e).__name__ == "InternalError"


class Guarded:
    """A Chroma client or collection whose failures become one-line :class:`StoreError` s.

    An HttpClient reconnects on its next request, so when a server comes back the next call succeeds.
    A read that meets a concurrent writer's half-done commit is retried (``READ_RETRY_PAUSES``); ``sleep``
    is injectable so that tests count the retries instead of waiting.
    """

    def __init__(
        self, target: Any, settings: StoreSettings, sleep: Callable[[float], None] = time.sleep, retry: bool = True
    ) -> None:
        self._target = target
        self._settings = settings
        self._sleep = sleep
        self._retry = retry
        self.retries = 0  # reads retried so far (a count for tests and logs)
        self.left_out = 0  # keys a split read left out (see readable)

    def readable(self, keys: Sequence[str], read: Callable[[Any, list[str]], Any]) -> list[Any]:
        """``read(collection, keys)`` as one read, or, if it keeps meeting a concurrent writer, as several.

        An embedded store's vectors for a batch another process has not finished committing stay unreadable in
        this process for longer than the retries wait (until that writer's index is saved): one such key fails
        a whole batched read. Then the keys are halved, without further pauses, until the reads that can be
        answered are, and the keys that cannot are left out (so many reads as twice the unreadable keys times
        the halvings). A reader shows the papers it can read now, rather than failing the question.
        """
        wanted = list(keys)
        try:
            return [read(self, wanted)]
        except StoreError as e:
            if not _met_writer(e):
                raise
        once = Guarded(self._target, self._settings, self._sleep, retry=False)
        results: list[Any] = []
        todo, left_out = [wanted], 0
        while todo:
            part = todo.pop()
            try:
                results.append(read(once, part))
            except StoreError as e:
                if not _met_writer(e):
                    raise
                if len(part) == 1:
                    left_out += 1
                else:
                    todo += [part[len(part) // 2 :], part[: len(part) // 2]]
        self.left_out += left_out
        if left_out:  # (the writer may have committed meanwhile: then every key was read)
            log.warning(
                "askpapers: %d of %d records are being written by another process and are left out until it commits",
                left_out, len(wanted),
            )  # fmt: skip
        return results

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr
        pauses = READ_RETRY_PAUSES if name in READS and self._retry else ()

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
                    raise StoreError(f"{self._settings.describe()} failed: {reason(e, self._settings)}{hint}") from e
            raise AssertionError("unreachable")  # pragma: no cover

        return call


def reason(e: BaseException, settings: StoreSettings) -> str:
    """A one-line reason, with any configured secret removed."""
    text = " ".join(str(e).split()) or type(e).__name__
    for secret in (settings.chroma_token, settings.chroma_cloud_api_key):
        if secret is not None and secret.get_secret_value():
            text = text.replace(secret.get_secret_value(), "***")
    for value in settings.chroma_headers.values():
        if value:
            text = text.replace(value, "***")
    return text[:300]
