"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: POST /v1/chat/completions, JSON or SSE.

Each test scripts what the next requests get (a reply, an HTTP error, a hang, a stream cut half-way) and
can read back every request body the server received. Replies can be scripted per step of the LLM path
(condense, judge, map, reduce, answer: told apart by their prompt files), each step with its own queue and a
default; a request of a step with neither takes the next reply of the shared script.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | Callable[[dict[str, Any]], str] = ""  # a callable gets the request body
    status: int = 200
    hang: float = 0.0  # seconds to wait before answering
    cut: bool = False  # stream half the pieces, then close without finish_reason or [DONE]
    role: bool = True  # send the assistant role in the first stream chunk
    usage: bool = True  # send a usage block
    malformed: bool = False  # send a body that is not valid JSON
    pause: threading.Event | None = None  # stream half the pieces, then wait for this event before the rest


# the first words of each prompt file (prompts/*.md) that no other prompt has
STEPS = {
    "condense": "You turn a researcher's message into a search",
    "judge": "You check whether research papers match",
    "map": "reading one batch of the papers",
    "reduce": "They were read in batches",
    "answer": "an assistant that answers questions about research papers",
}


def step_of(body: dict[str, Any]) -> str:
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    return next((step for step, mark in STEPS.items() if mark in str(system)), "")


def echo_condense(body: dict[str, Any]) -> str:
    """A condense reply: the question itself as the English query, with no facets of its own."""
    question = body["messages"][-1]["content"]
    return json.dumps({"query": question, "facets": [], "language": "English"})


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.routes: dict[str, deque[Reply]] = {}
        self.defaults: dict[str, Reply] = {}
        self.requests: list[dict[str, Any]] = []
        self.steps: list[str] = []  # the step of each request, in arrival order
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                    self._handle()

            def _handle(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                reply = fake.take(body, dict(self.headers))
                if callable(reply.content):
                    reply = replace(reply, content=reply.content(body))
                if reply.hang:
                    time.sleep(reply.hang)
                if reply.status != 200:
                    self._json(reply.status, {"error": {"message": str(reply.content) or "error", "type": "test"}})
                elif reply.malformed:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b"{not json")
                elif body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._json(200, self._completion(body, reply))

            def _json(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
                out: dict[str, Any] = {
                    "id": "cmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "test-model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.content},
                            "finish_reason": "stop",
                        }
                    ],
                }
                if reply.usage:
                    out["usage"] = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
                return out

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = str(reply.content).split(" ")
                pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
                if reply.cut:
                    pieces = pieces[: max(1, len(pieces) // 2)]
                base = {"id": "chunk-test", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
                for i, piece in enumerate(pieces):
                    if reply.pause is not None and i == len(pieces) // 2:
                        reply.pause.wait(120)
                    delta: dict[str, Any] = {"content": piece}
                    if i == 0 and reply.role:
                        delta["role"] = "assistant"
                    chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                    self._event(chunk)
                    time.sleep(0.005)
                if reply.cut:
                    self.wfile.flush()
                    return
                self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
                    usage = {"prompt_tokens": 100, "completion_tokens": len(pieces), "total_tokens": 100 + len(pieces)}
                    self._event({**base, "choices": [], "usage": usage})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, obj: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def take(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        """The reply for a request (and the request recorded)."""
        step = step_of(body)
        with self.lock:
            self.requests.append(body)
            self.steps.append(step)
            self.headers.append(headers)
            queue = self.routes.get(step)
            if queue:
                return queue.popleft()
            if step in self.defaults:
                return self.defaults[step]
            return self.script.popleft() if self.script else Reply(status=500, content="no scripted reply")

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def on(self, step: str, *replies: Reply) -> None:
        """Replies for the next requests of one step (then its default, if any)."""
        assert step in STEPS, step
        self.routes.setdefault(step, deque()).extend(replies)

    def default(self, step: str, reply: Reply) -> None:
        assert step in STEPS, step
        self.defaults[step] = reply

    def quiet_steps(self) -> FakeOpenAI:
        """Defaults for the steps around the answer: condense echoes the question, the judge has nothing to say."""
        self.default("condense", Reply(echo_condense))
        self.default("judge", Reply('{"verdicts": []}'))
        return self

    def of(self, step: str) -> list[dict[str, Any]]:
        """The requests of one step, in arrival order."""
        return [r for r, s in zip(self.requests, self.steps, strict=True) if s == step]

    def reset(self) -> None:
        with self.lock:
            self.script.clear()
            self.routes.clear()
            self.defaults.clear()
            self.requests.clear()
            self.steps.clear()
            self.headers.clear()
