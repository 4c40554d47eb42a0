"""What stands in front of the web app: the Host check, login back-off, and which uploaded files may be read.

- **Host header.** Bound to loopback, the app answers only requests addressed to a loopback name, so a page on
  another site cannot reach it through DNS rebinding (Starlette's ``TrustedHostMiddleware``).
- **Login back-off.** After a few wrong passwords from one client, further attempts are refused with 429 for a
  time that doubles with every failure (capped), whatever the password.
- **Uploads.** Only files in Gradio's upload folder are read, checked after resolving symlinks and ``..``: a
  caller naming another path on the server's disk gets an error and nothing is read.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rag import InputError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
MAX_FILES = 100  # files in one upload
Scope = dict[str, Any]
ASGIApp = Callable[..., Any]


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


class LoginThrottle:
    """ASGI middleware: per-client exponential back-off on failed ``POST …/login`` attempts."""

    def __init__(
        self,
        app: ASGIApp,
        free: int = 3,
        base: float = 1.0,
        cap: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app, self.free, self.base, self.cap, self.clock = app, free, base, cap, clock
        self._failures: dict[str, tuple[int, float]] = {}  # client -> (failures, refused until)
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds before ``client`` may try again (0 when it may now)."""
        with self._lock:
            _, until = self._failures.get(client, (0, 0.0))
        return max(0.0, until - self.clock())

    def record(self, client: str, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failures.pop(client, None)
                return
            n = self._failures.get(client, (0, 0.0))[0] + 1
            delay = 0.0 if n < self.free else min(self.cap, self.base * 2 ** (n - self.free))
            self._failures[client] = (n, self.clock() + delay)
            if len(self._failures) > 10_000:  # forget the oldest clients rather than grow without bound
                for key in list(self._failures)[:5_000]:
                    self._failures.pop(key, None)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = str(scope.get("path", "")).rstrip("/")
        if scope.get("type") != "http" or scope.get("method") != "POST" or not path.endswith("/login"):
            await self.app(scope, receive, send)
            return
        client = str((scope.get("client") or ("unknown", 0))[0])
        wait = self.wait(client)
        if wait > 0:
            seconds = math.ceil(wait)
            body = json.dumps({"detail": f"Too many failed logins; try again in {seconds} s."}).encode()
            await send({"type": "http.response.start", "status": 429, "headers": [
                (b"content-type", b"application/json"), (b"retry-after", str(seconds).encode()),
                (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message.get("status", 0)))
            await send(message)

        await self.app(scope, receive, watch)
        if status:
            self.record(client, ok=status[0] < 400)


def middleware(
    host: str, allowed_hosts: Iterable[str] | None = None, clock: Callable[[], float] | None = None
) -> list[Any]:
    """The app's middleware: the Host check when bound to loopback (or to a given list), and login back-off
    (timed by ``clock``, ``time.monotonic`` unless a test gives its own)."""
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    hosts = list(allowed_hosts or [])
    if not hosts and is_loopback(host):
        hosts = list(LOOPBACK_NAMES)
    out = [Middleware(LoginThrottle, clock=clock or time.monotonic)]
    if hosts and "*" not in hosts:
        out.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False))
    return out


def uploaded_paths(files: Any, upload_dir: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The local paths of files Gradio received as uploads, from the raw event payload.

    ``files`` is what the browser or an API caller sent (a FileData dict, a list of them, or path strings).
    Each path must resolve, after symlinks and ``..``, to a regular file inside ``upload_dir``. Returns each
    resolved path with the name the user gave the file.
    """
    root = Path(upload_dir).resolve()
    items = files if isinstance(files, list) else [files]
    out: list[tuple[Path, str]] = []
    if len(items) > MAX_FILES:
        raise InputError(f"{len(items)} files at once; the limit is {MAX_FILES}")
    for item in items:
        raw = item.get("path") if isinstance(item, dict) else item
        if not isinstance(raw, str | os.PathLike) or not str(raw):
            raise InputError("an upload arrived without a file")
        given = item.get("orig_name") if isinstance(item, dict) else None
        name = str(given) if isinstance(given, str) and given else Path(str(raw)).name
        try:
            real = Path(raw).resolve(strict=True)
        except (OSError, RuntimeError):
            raise InputError(f"{name}: not a file uploaded to this app") from None
        if not real.is_relative_to(root) or not real.is_file():
            raise InputError(f"{name}: not a file uploaded to this app; upload it with the Add button")
        out.append((real, name))
    return out
