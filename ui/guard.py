"""What stands in front of the web app: the Host check, login back-off, and which uploaded files may be read.

- **Host header.** Bound to loopback, the app answers only requests addressed to a loopback name, so a page on
  another site cannot reach it through DNS rebinding (Starlette's ``TrustedHostMiddleware``).
- **Login back-off.** After a few wrong passwords from one client (its connection's address) or for one user
  name, further attempts are refused with 429 for a time that doubles with every failure (capped), whatever the
  password; failures are forgotten over time (see :class:`LoginThrottle`).
- **Uploads.** Only files this app's upload route saved are read (Gradio records them), in the app's own upload
  folder, checked after resolving symlinks and ``..``: a caller naming another path on the server's disk, or a
  file another process put in the shared ``<temp>/gradio``, gets an error and nothing is read. An API call whose
  data holds a file without a local path (a ``url``) is refused before Gradio reads it, so nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from askpapers.rag import InputError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
MAX_FILES = 100  # files in one upload
Scope = dict[str, Any]
ASGIApp = Callable[..., Any]


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


@dataclass
class _Failures:
    count: float = 0.0  # failures, less those forgotten
    last: float = 0.0  # when the count was last brought up to date
    until: float = 0.0  # refused until then


@dataclass(frozen=True)
class BackOff:
    """How failures of one kind of key are punished: ``free`` failures pass, then each one doubles the wait from
    ``base`` seconds up to ``cap``; one failure is forgotten every ``forget`` seconds once its wait is over."""

    free: int = 3
    base: float = 1.0
    cap: float = 300.0
    forget: float = 30.0


MAX_LOGIN_BODY = 16_384  # bytes of a login form (a user name and a password)
MAX_KEYS = 10_000  # remembered clients and names; the oldest half goes past this


class LoginThrottle:
    """ASGI middleware: exponential back-off on failed ``POST …/login`` attempts, per client *and* per user name.

    - The client is the connection's address (``scope["client"]``): uvicorn rewrites it from ``X-Forwarded-For``
      only for the proxies that ``ASKPAPERS_TRUSTED_PROXIES`` names (none by default, see :func:`trusted_proxies`),
      so a new header on every try is still one client.
    - The user name is read from the form (at most :data:`MAX_LOGIN_BODY` bytes), so guesses at one name from many
      addresses back off too. A name's waits are capped lower (``per_user.cap``) than a client's: someone else's
      failures delay the right password at most one such wait.
    - Counts decay: a failure is forgotten ``forget`` seconds after its wait ends, so a typo after a quiet spell
      is not punished for old failures. Attempts refused with 429 never reach the app and are not counted, so
      hammering during a wait does not lengthen it.
    - A correct password clears its name's failures (not the client's: one's own account cannot reset a
      client's count between guesses at others).
    """

    def __init__(
        self,
        app: ASGIApp,
        per_client: BackOff | None = None,
        per_user: BackOff | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app, self.clock = app, clock
        self.rules = {"client": per_client or BackOff(), "user": per_user or BackOff(cap=60.0)}
        self._failures: dict[tuple[str, str], _Failures] = {}
        self._lock = threading.Lock()

    def _current(self, key: tuple[str, str], now: float) -> _Failures:
        """The key's record with the failures forgotten since its wait ended taken off."""
        f = self._failures.get(key)
        if f is None:
            return _Failures(last=now)
        forget = self.rules[key[0]].forget
        start = max(f.last, f.until)  # quiet since then
        gone = math.floor(max(0.0, now - start) / forget)  # whole failures: the count stays a count
        if gone:
            f.count = max(0.0, f.count - gone)
            f.last = start + gone * forget
        return f

    def wait(self, client: str, user: str | None = None) -> float:
        """Seconds before ``client`` (trying ``user``) may try again (0 when it may now)."""
        now = self.clock()
        with self._lock:
            return max((max(0.0, self._current(k, now).until - now) for k in _keys(client, user)), default=0.0)

    def record(self, client: str, ok: bool, user: str | None = None) -> None:
        now = self.clock()
        with self._lock:
            if ok:
                if user is not None:
                    self._failures.pop(("user", user), None)
                return
            for key in _keys(client, user):
                f = self._current(key, now)
                rule = self.rules[key[0]]
                f.count += 1
                over = f.count - rule.free
                f.until = now + (0.0 if over < 0 else min(rule.cap, rule.base * 2 ** min(over, 64)))
                self._failures.pop(key, None)
                self._failures[key] = f  # (newest last: the oldest go first when there are too many)
            if len(self._failures) > MAX_KEYS:
                for key in list(self._failures)[: MAX_KEYS // 2]:
                    self._failures.pop(key, None)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = str(scope.get("path", "")).rstrip("/")
        if scope.get("type") != "http" or scope.get("method") != "POST" or not path.endswith("/login"):
            await self.app(scope, receive, send)
            return
        client = str((scope.get("client") or ("unknown", 0))[0])
        body = await _read_body(receive)
        if body is None:
            await _respond(send, 413, {"detail": f"A login form is at most {MAX_LOGIN_BODY} bytes."})
            return
        user = await _form_user(scope, body)
        wait = self.wait(client, user)
        if wait > 0:
            seconds = math.ceil(wait)
            await _respond(send, 429, {"detail": f"Too many failed logins; try again in {seconds} s."},
                           [(b"retry-after", str(seconds).encode())])  # fmt: skip
            return
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message.get("status", 0)))
            await send(message)

        await self.app(scope, _replay(body), watch)
        if status:
            self.record(client, ok=status[0] < 400, user=user)


def _keys(client: str, user: str | None) -> list[tuple[str, str]]:
    return [("client", client)] + ([("user", user)] if user is not None else [])


async def _read_body(receive: Any, most: int = MAX_LOGIN_BODY) -> bytes | None:
    """The request body, or None when it is longer than ``most`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > most:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Callable[[], Any]:
    """A ``receive`` that gives the app the body already read, then waits as a live connection would."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _form_user(scope: Scope, body: bytes) -> str | None:
    """The ``username`` field of a login form (URL-encoded or multipart), stripped as Gradio strips it; None
    when there is none."""
    from starlette.requests import Request

    try:
        form = await Request(scope, _replay(body)).form(max_files=0, max_fields=10)
    except Exception:  # a malformed form: the app answers it; only the client is counted
        return None
    user = form.get("username")
    await form.close()
    return user.strip()[:256] if isinstance(user, str) else None


async def _respond(send: Any, status: int, obj: dict[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(obj).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


MAX_EVENT_BODY = 4_000_000  # bytes of one API call's JSON (a question, its history and filters are far smaller)
_EVENT_PATH = re.compile(r"/gradio_api/(?:queue/join|call(?:/v2)?/[^/]+|run/[^/]+|api/[^/]+)/?$")
_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def remote_file(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` (an API call's data) holds a file that is not a local upload, or None: a FileData dict
    (one with a ``path``, or marked ``gradio.FileData``) whose path is missing, not text, or a URL."""
    if depth > 32:
        return "the data is nested too deeply"
    if isinstance(value, list):
        return next((why for v in value if (why := remote_file(v, depth + 1))), None)
    if not isinstance(value, dict):
        return None
    meta = value.get("meta")
    if "path" in value or (isinstance(meta, dict) and meta.get("_type") == "gradio.FileData"):
        path = value.get("path")
        if not isinstance(path, str) or not path:
            return "a file must be uploaded to this app first (this one has no local path)"
        if _URL_LIKE.match(path):
            return "a file must be uploaded to this app first (a URL is never fetched)"
        return None
    return next((why for v in value.values() if (why := remote_file(v, depth + 1))), None)


class FileDataGuard:
    """ASGI middleware: an API call whose data holds a file without a local upload path (``{"path": null, "url":
    …}``, or a URL as the path) is refused with 400 before Gradio reads it, so Gradio never downloads anything."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "POST" or not _EVENT_PATH.search(path):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive, MAX_EVENT_BODY)
        if body is None:
            await _respond(send, 413, {"detail": f"An API call's data is at most {MAX_EVENT_BODY:,} bytes."})
            return
        try:
            data = json.loads(body)
        except ValueError:
            data = None  # not JSON: Gradio answers it
        why = remote_file(data.get("data") if isinstance(data, dict) else None)
        if why:
            await _respond(send, 400, {"detail": why, "error": why})
            return
        await self.app(scope, _replay(body), send)


def trusted_proxies(names: Iterable[str]) -> None:
    """Tell uvicorn which proxies' ``X-Forwarded-For`` to believe: only ``names`` (none by default). Uvicorn
    otherwise trusts 127.0.0.1, so any local client could claim a new address on every login try."""
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(n.strip() for n in names if n.strip())


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
    out = [Middleware(LoginThrottle, clock=clock or time.monotonic), Middleware(FileDataGuard)]
    if hosts and "*" not in hosts:
        out.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False))
    return out


def uploaded_paths(
    files: Any, upload_dir: str | os.PathLike[str], received: Collection[str] | None = None
) -> list[tuple[Path, str]]:
    """The local paths of files Gradio received as uploads, from the raw event payload.

    ``files`` is what the browser or an API caller sent (a FileData dict, a list of them, or path strings).
    Each path must be one that this app's upload route saved (``received``: Gradio records them), and resolve,
    after symlinks and ``..``, to a regular file inside ``upload_dir``. Returns each resolved path with the name
    the user gave the file.
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
        if not real.is_relative_to(root) or not real.is_file() or (received is not None and str(raw) not in received):
            raise InputError(f"{name}: not a file uploaded to this app; upload it with the Add button")
        out.append((real, name))
    return out
