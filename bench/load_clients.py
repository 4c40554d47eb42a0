"""The three ways the load test calls the web app's ``/ask`` endpoint (``gr.api``) over HTTP, on 127.0.0.1 only."""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Protocol

HOST = "127.0.0.1"
MODE = "extractive"  # deterministic answers: the isolation check compares them with the reference answers
API_NAME = "/ask"
NO_OPTIONS = [None, None, None, None]  # /ask's k, venue, year and has_code: the defaults
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 only, never via a proxy

Message = dict[str, str]


class ApiClient(Protocol):
    def call(self, question: str, history: list[Message] | None, timeout: float) -> Any: ...

    def close(self) -> None: ...


class GradioApi:
    """The endpoint through ``gradio_client.Client`` (one session hash, one event stream per client)."""

    def __init__(self, url: str) -> None:
        os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # gradio_client's telemetry thread stays off
        from gradio_client import Client

        self.client = Client(url, verbose=False, download_files=False, max_workers=2, analytics_enabled=False)

    def call(self, question: str, history: list[Message] | None, timeout: float) -> Any:
        return self.client.submit(question, history, MODE, api_name=API_NAME).result(timeout=timeout)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


def _post_json(url: str, payload: dict[str, Any], timeout: float) -> Any:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    with NO_PROXY.open(req, timeout=timeout) as r:
        return json.load(r)


def _events(url: str, deadline: float) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a server-sent event stream, until it ends or the deadline passes."""
    with NO_PROXY.open(url, timeout=max(1.0, deadline - time.monotonic())) as r:
        event = ""
        for raw in r:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                yield event, line[5:].strip()
            if time.monotonic() > deadline:
                raise TimeoutError("no answer in time")


class SessionApi:
    """The endpoint over plain HTTP, as one Gradio session: ``POST /gradio_api/queue/join`` with the session's own
    ``session_hash``, then ``GET /gradio_api/queue/data?session_hash=…`` until the event completes (the protocol
    gradio_client speaks, without its threads)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session_hash = uuid.uuid4().hex
        with NO_PROXY.open(url + "config", timeout=30) as r:
            config = json.load(r)
        ids = [d["id"] for d in config["dependencies"] if d.get("api_name") == API_NAME.lstrip("/")]
        if len(ids) != 1:
            raise RuntimeError(f"the app has {len(ids)} endpoints named {API_NAME}")
        self.fn_index = int(ids[0])

    def call(self, question: str, history: list[Message] | None, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        payload = {"data": [question, history, MODE, *NO_OPTIONS], "fn_index": self.fn_index,
                   "session_hash": self.session_hash, "event_data": None, "trigger_id": None}  # fmt: skip
        event_id = _post_json(self.url + "gradio_api/queue/join", payload, timeout)["event_id"]
        for _, data in _events(f"{self.url}gradio_api/queue/data?session_hash={self.session_hash}", deadline):
            msg = json.loads(data)
            if msg.get("msg") == "unexpected_error":
                raise RuntimeError(f"unexpected error: {msg.get('message')}")
            if msg.get("msg") != "process_completed":
                continue
            if msg.get("event_id") != event_id:
                raise RuntimeError(f"the session's stream completed another event, {msg.get('event_id')}")
            output = msg.get("output") or {}
            if not msg.get("success"):
                raise RuntimeError(f"the event failed: {output.get('error') or output}")
            out = output.get("data")
            return out[0] if isinstance(out, list) and len(out) == 1 else out
        raise RuntimeError("the event stream ended without a result")

    def close(self) -> None:
        pass


class CallApi:
    """The endpoint over Gradio's simple HTTP API: ``POST /gradio_api/call/ask``, then that event's stream (each
    request is a Gradio session of its own)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, question: str, history: list[Message] | None, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        body = {"data": [question, history, MODE, *NO_OPTIONS]}
        event_id = _post_json(f"{self.url}gradio_api/call{API_NAME}", body, timeout)
        for event, data in _events(f"{self.url}gradio_api/call{API_NAME}/{event_id['event_id']}", deadline):
            if event == "error":
                raise RuntimeError(f"the event stream reported an error: {data}")
            if event == "complete":
                out = json.loads(data)
                return out[0] if isinstance(out, list) and len(out) == 1 else out
        raise RuntimeError("the event stream ended without a result")

    def close(self) -> None:
        pass


CLIENTS: dict[str, Callable[[str], ApiClient]] = {"session": SessionApi, "call": CallApi, "gradio": GradioApi}
CLIENT_TEXT = {
    "session": "plain HTTP, one Gradio session per chat session (`POST /gradio_api/queue/join` with the session's "
    "own `session_hash`, then `GET /gradio_api/queue/data?session_hash=…`: the protocol of gradio_client)",
    "call": "Gradio's simple HTTP API (`POST /gradio_api/call/ask`, then `GET /gradio_api/call/ask/EVENT_ID`; "
    "every request is a Gradio session of its own)",
    "gradio": "one `gradio_client.Client` per chat session",
    "mixed": "the three ways in turn (session i: plain HTTP with a session hash, the simple `/call` API, "
    "`gradio_client`, for i mod 3 = 0, 1, 2)",
}
MIXED = ("session", "call", "gradio")


def client_kind(kind: str, session: int) -> str:
    return MIXED[session % len(MIXED)] if kind == "mixed" else kind
