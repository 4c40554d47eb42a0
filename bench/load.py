"""Load test of the web app's HTTP API (`make bench-load`): concurrent chat sessions with follow-ups, on 127.0.0.1.

Usage: .venv/bin/python bench/load.py [--sessions 20] [--seconds 60] [--client session|call|gradio|mixed] [--think S]
       [--timeout S] [--max-slope MB_PER_MIN] [--fail-on-growth] [--note TEXT] [--out FILE]

Starts ``askpapers serve --host 127.0.0.1 --port FREE`` as a subprocess over a fresh store in a temporary directory
(the bundled corpus ingested first with ``askpapers ingest``; no ``OPENAI_*`` or other ``ASKPAPERS_*`` variables, so
every answer is extractive and deterministic), waits until it answers, then runs N chat sessions at once, each on a
thread of its own, against the ``/ask`` API endpoint (``gr.api``) for a fixed time. ``--client`` says how:

- ``session`` (default): plain HTTP, one Gradio session per chat session: ``POST /gradio_api/queue/join`` with the
  session's own ``session_hash``, then ``GET /gradio_api/queue/data?session_hash=…`` (gradio_client's protocol,
  without its threads, which on a small machine take more CPU than the server);
- ``call``: Gradio's simple HTTP API, ``POST /gradio_api/call/ask`` then ``GET /gradio_api/call/ask/EVENT_ID``;
  every request is a Gradio session of its own;
- ``gradio``: one ``gradio_client.Client`` per chat session;
- ``mixed``: the three in turn, session by session.

Each session has a conversation of its own: a "Which papers …" question on a topic of the bundled corpus, then two
follow-ups that narrow it, each sent with the session's own history (OpenAI-style messages); then it starts over.
Sessions send their next request as soon as the previous one is answered (no think time unless ``--think``).

Checks and measures:

- every request is answered: no exception, no HTTP error, no ``error`` field, an answer and a citation list;
- isolation: each answer echoes its own question; its citations (number, paper, title, evidence) are exactly those
  the same question with the same history got when asked alone, one request at a time, before the load (the
  reference answers); a follow-up's papers are a subset of the session's previous answer's;
- the latency of every request as the client sees it (queueing included), and the server's own compute time
  (the answer's ``latency_s``): p50, p95, max;
- the server's RSS (VmRSS of its process tree, from /proc) every second: start, end, max, and the slope of a
  least-squares line over the second half of the run, in MB per minute; a slope above ``--max-slope`` is flagged.

Writes a Markdown report (docs/load.md), prints a summary, and exits non-zero if a request failed or isolation was
violated (with ``--fail-on-growth``, also if memory grew). Everything but the report goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import ROOT, load, log, machine, pct, versions

BUNDLED = ROOT / "data" / "icml2026"
NO_OPTIONS = [None, None, None, None]  # /ask's k, venue, year and has_code: the defaults
HOST = "127.0.0.1"
MODE = "extractive"  # deterministic answers: the isolation check compares them with the reference answers
API_NAME = "/ask"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 only, never via a proxy
MAX_LISTED = 10  # errors and violations quoted in the report
START_TIMEOUT = 300.0  # seconds the sessions may take to connect their clients

# One conversation per session: a "which papers" question on a topic of the bundled corpus (38 ICML 2026 abstracts),
# then two follow-ups, each narrowing the answer before it. The first 20 topics have pairwise different cited sets;
# every turn of every conversation cites at least one paper.
CONVERSATIONS: tuple[tuple[str, str, str], ...] = (
    ("Which papers use information bottleneck?", "Which of them use mutual information?",
     "Which of those are about graphs?"),
    ("Which papers are about federated learning?", "Which of those use sparse training?",
     "Which of them use the Fisher information matrix?"),
    ("Which papers study recommender systems?", "Which of them use contrastive learning?",
     "Which of those use mutual information?"),
    ("Which papers use reservoir computing?", "Which of those study scalability?", "Which of them use parallel?"),
    ("Which papers study contextual bandits?", "Which of them use regret?", "Which of those use phase transitions?"),
    ("Which papers use the Koopman operator?", "Which of those are about time series?", "Which of them use theory?"),
    ("Which papers are about machine unlearning?", "Which of them use mutual information?",
     "Which of those use transformers?"),
    ("Which papers study vision-language models?", "Which of them use reinforcement learning?",
     "Which of those use mutual information?"),
    ("Which papers use joint-embedding predictive architectures?", "Which of those are about collapse?",
     "Which of them use embeddings?"),
    ("Which papers use diffusion models?", "Which of those use mutual information?",
     "Which of them use classifier-free guidance?"),
    ("Which papers are about large language models?", "Which of them use reinforcement learning?",
     "Which of those use verifiable rewards?"),
    ("Which papers study time series forecasting?", "Which of them use transformers?",
     "Which of those use attention?"),
    ("Which papers use mutual information?", "Which of them use transformers?", "Which of those use diffusion models?"),
    ("Which papers use reinforcement learning?", "Which of those use KL divergence?",
     "Which of them use support mismatch?"),
    ("Which papers study fair allocation?", "Which of those are online?", "Which of them use envy-freeness?"),
    ("Which papers use mixture of experts?", "Which of them use large language models?",
     "Which of those are about collapse?"),
    ("Which papers are about interpretability?", "Which of them use representations?",
     "Which of those use time series?"),
    ("Which papers study hypergraphs?", "Which of those use graphs?", "Which of them use active learning?"),
    ("Which papers use clustering?", "Which of them use mutual information?", "Which of those use representations?"),
    ("Which papers use quantization?", "Which of those use transformers?", "Which of them use vector quantization?"),
    ("Which papers study hallucinations?", "Which of them use large language models?",
     "Which of those use knowledge?"),
    ("Which papers study single-cell transcriptomics?", "Which of them use embeddings?",
     "Which of those use geometry?"),
    ("Which papers study recurrent networks?", "Which of those use theory?", "Which of them use memory?"),
    ("Which papers are about multimodal large language models?", "Which of them use large language models?",
     "Which of those use visual encoders?"),
)  # fmt: skip

Message = dict[str, str]
CitationKey = tuple[tuple[int, str, str, str], ...]


# -- the server -------------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def askpapers_exe() -> Path:
    exe = Path(sys.executable).parent / "askpapers"
    return exe if exe.exists() else ROOT / ".venv" / "bin" / "askpapers"


def server_env(data_dir: Path) -> dict[str, str]:
    """This environment without OPENAI_* / ASKPAPERS_* variables, plus a store of its own: extractive answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASKPAPERS_"))}
    env.update({"ASKPAPERS_DATA_DIR": str(data_dir), "ASKPAPERS_DEFAULT_CORPUS": str(BUNDLED),
                "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
                "PYTHONPATH": str(ROOT)})  # fmt: skip
    return env


def ingest_bundled(env: dict[str, str], cwd: Path) -> str:
    """``askpapers ingest data/icml2026`` into the store of ``env``; returns its summary line."""
    proc = subprocess.run(
        [str(askpapers_exe()), "ingest", str(BUNDLED), "--no-progress"],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"askpapers ingest failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


class Server:
    """``askpapers serve`` on 127.0.0.1 and a free port, as a subprocess; output goes to a log file."""

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}/"
        self.log_path = workdir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 300.0) -> float:
        """Start the server and wait until its API answers HTTP; returns the seconds it took."""
        t0 = time.perf_counter()
        with self.log_path.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(askpapers_exe()), "serve", "--host", HOST, "--port", str(self.port)],
                env=self.env, cwd=self.workdir, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"askpapers serve exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with NO_PROXY.open(self.url + "gradio_api/info", timeout=5) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"askpapers serve did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


# -- memory -----------------------------------------------------------------------------------------------------------
def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/PID/task/TID/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for children in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                todo += [int(c) for c in children.read_text().split()]
    return out


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` and its descendants, in MB (MiB)."""
    total = 0
    for p in process_tree(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


class RssSampler(threading.Thread):
    """Samples :func:`rss_mb` every ``interval`` seconds (the first at once) as (seconds since ``t0``, MB)."""

    def __init__(self, pid: int, t0: float, interval: float = 1.0) -> None:
        super().__init__(daemon=True, name="rss-sampler")
        self.pid, self.t0, self.interval = pid, t0, interval
        self.samples: list[tuple[float, float]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            self.samples.append((time.perf_counter() - self.t0, rss_mb(self.pid)))
            if self._stop_event.wait(self.interval):
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        t = time.perf_counter() - self.t0
        if not self.samples or t - self.samples[-1][0] >= self.interval / 2:
            self.samples.append((t, rss_mb(self.pid)))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (/proc/PID/stat), 0 if it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def slope_mb_per_min(samples: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute (0 with fewer than two points)."""
    if len(samples) < 2:
        return 0.0
    xs = [t / 60 for t, _ in samples]
    ys = [m for _, m in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0


# -- the client side --------------------------------------------------------------------------------------------------
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


def ask(client: ApiClient, question: str, history: list[Message], timeout: float) -> dict[str, Any]:
    """One ``/ask`` request; raises unless it returns an answer and a citation list (and no error)."""
    result = client.call(question, history or None, timeout)
    if not isinstance(result, dict):
        raise RuntimeError(f"the API returned {type(result).__name__}, not a dict")
    if result.get("error"):
        raise RuntimeError(f"the API answered with an error: {result['error']}")
    if not isinstance(result.get("answer"), str) or not result["answer"].strip():
        raise RuntimeError("the API returned no answer text")
    if not isinstance(result.get("citations"), list):
        raise RuntimeError("the API returned no citation list")
    return result


def citation_key(result: dict[str, Any]) -> CitationKey:
    """What isolation compares: each citation's number, paper, title and evidence sentence (not its float score)."""
    return tuple(
        (int(c.get("n", 0)), str(c.get("paper_id", "")), str(c.get("title", "")), str(c.get("evidence", "")))
        for c in result["citations"]
    )


def paper_ids(key: CitationKey) -> set[str]:
    return {pid for _, pid, _, _ in key}


def short(key: CitationKey) -> str:
    return "[" + ", ".join(pid[:8] for _, pid, _, _ in key) + "]"


def reference_answers(
    url: str, conversations: Sequence[tuple[str, ...]], timeout: float, kind: str = "session"
) -> dict[tuple[int, int], CitationKey]:
    """Each turn of each conversation asked alone, one request at a time, with its conversation's history."""
    client = CLIENTS[client_kind(kind, 0)](url)
    refs: dict[tuple[int, int], CitationKey] = {}
    try:
        for ci, conversation in enumerate(conversations):
            history: list[Message] = []
            for ti, question in enumerate(conversation):
                result = ask(client, question, history, timeout)
                refs[(ci, ti)] = citation_key(result)
                if ti == 0 and not refs[(ci, ti)]:
                    log(f"warning: the reference answer to {question!r} cites no paper")
                history += [{"role": "user", "content": question}, {"role": "assistant", "content": result["answer"]}]
    finally:
        client.close()
    return refs


@dataclass
class Request:
    session: int
    turn: int
    start: float  # seconds since the load started
    seconds: float
    ok: bool
    server_seconds: float | None = None
    client: str = ""


@dataclass
class Recorder:
    """What the sessions report, under one lock."""

    requests: list[Request] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: Request, error: str | None = None, violations: Sequence[str] = ()) -> None:
        with self.lock:
            self.requests.append(request)
            if error is not None:
                self.errors.append(error)
            self.violations.extend(violations)

    def counts(self) -> tuple[int, int, int]:
        with self.lock:
            return len(self.requests), len(self.errors), len(self.violations)


def check_isolation(
    session: int, turn: int, question: str, result: dict[str, Any], key: CitationKey, reference: CitationKey,
    previous: set[str] | None,
) -> list[str]:  # fmt: skip
    where = f"session {session}, turn {turn + 1} ({question!r})"
    out = []
    if result.get("question") != question:
        out.append(f"{where}: the answer is to another question, {result.get('question')!r}")
    if key != reference:
        out.append(f"{where}: cited {short(key)}, but asked alone it cites {short(reference)}")
    if previous is not None and not paper_ids(key) <= previous:
        extra = sorted(pid[:8] for pid in paper_ids(key) - previous)
        out.append(f"{where}: the follow-up cites papers its session's previous answer did not: {extra}")
    return out


@dataclass
class Session:
    index: int
    conversation_index: int
    url: str
    refs: dict[tuple[int, int], CitationKey]
    recorder: Recorder
    barrier: threading.Barrier
    clock: dict[str, float]  # "start" and "deadline", set by the barrier's action
    think: float
    timeout: float
    client_kind: str

    @property
    def kind(self) -> str:
        return client_kind(self.client_kind, self.index)

    def run(self) -> None:
        client: ApiClient | None = None
        try:
            client = CLIENTS[self.kind](self.url)
        except Exception as e:
            self.recorder.add(Request(self.index, 0, 0.0, 0.0, False), f"session {self.index}: no client: {e!r}")
        try:
            self.barrier.wait(timeout=START_TIMEOUT)  # every session starts at once, when every client is ready
            if client is not None:
                self.converse(client)
        except threading.BrokenBarrierError:
            msg = f"session {self.index}: the sessions did not all start within {START_TIMEOUT:.0f} s"
            self.recorder.add(Request(self.index, 0, 0.0, 0.0, False), msg)
        finally:
            if client is not None:
                client.close()

    def converse(self, client: ApiClient) -> None:
        conversation = CONVERSATIONS[self.conversation_index]
        start, deadline = self.clock["start"], self.clock["deadline"]
        turn, previous = 0, None
        history: list[Message] = []
        while time.perf_counter() < deadline:
            question = conversation[turn]
            t = time.perf_counter()
            try:
                result = ask(client, question, history, self.timeout)
            except Exception as e:
                elapsed = time.perf_counter() - t
                msg = f"session {self.index}, turn {turn + 1}: {type(e).__name__}: {e}".strip()
                self.recorder.add(Request(self.index, turn, t - start, elapsed, False, None, self.kind), msg)
                turn, history, previous = 0, [], None  # start the conversation over
                time.sleep(0.5)
                continue
            elapsed = time.perf_counter() - t
            key = citation_key(result)
            problems = check_isolation(
                self.index, turn, question, result, key, self.refs[(self.conversation_index, turn)], previous
            )
            server = result.get("latency_s")
            server_s = float(server) if isinstance(server, int | float) else None
            request = Request(self.index, turn, t - start, elapsed, True, server_s, self.kind)
            self.recorder.add(request, None, problems)
            history = [
                *history,
                {"role": "user", "content": question},
                {"role": "assistant", "content": result["answer"]},
            ]
            previous = paper_ids(key)
            turn += 1
            if turn == len(conversation):
                turn, history, previous = 0, [], None
            if self.think:
                time.sleep(self.think)


# -- one run ----------------------------------------------------------------------------------------------------------
@dataclass
class LoadResult:
    sessions: int
    seconds: float  # asked for
    think: float
    timeout: float
    started: datetime
    client: str = "session"  # a key of CLIENTS, or "mixed"
    wall: float = 0.0  # the load phase as measured, from the first request to the last answer
    requests: list[Request] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    references: int = 0
    conversations: int = 0
    rss: list[tuple[float, float]] = field(default_factory=list)  # (seconds since the load started, MB)
    rss_before: float = 0.0  # after start-up and the reference answers
    server_cpu: float = 0.0  # CPU seconds of the server during the load
    client_cpu: float = 0.0  # CPU seconds of this process (the sessions' clients) during the load
    ingest_summary: str = ""
    ingest_seconds: float = 0.0
    startup_seconds: float = 0.0
    reference_seconds: float = 0.0
    load_before: str = ""
    load_after: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors and not self.violations and bool(self.requests)

    @property
    def answered(self) -> list[Request]:
        return [r for r in self.requests if r.ok]

    @property
    def latencies(self) -> list[float]:
        return [r.seconds for r in self.answered]

    @property
    def server_latencies(self) -> list[float]:
        return [r.server_seconds for r in self.answered if r.server_seconds is not None]

    def rss_second_half(self) -> list[tuple[float, float]]:
        if not self.rss:
            return []
        mid = self.rss[-1][0] / 2
        return [(t, m) for t, m in self.rss if t >= mid]

    @property
    def slope(self) -> float:
        """RSS growth over the second half of the run, MB per minute."""
        return slope_mb_per_min(self.rss_second_half())

    @property
    def slope_first_half(self) -> float:
        mid = self.rss[-1][0] / 2 if self.rss else 0.0
        return slope_mb_per_min([(t, m) for t, m in self.rss if t <= mid])

    def growing(self, max_slope: float) -> bool:
        return self.slope > max_slope


def run_load(
    sessions: int = 20, seconds: float = 60.0, *, client: str = "session", think: float = 0.0, timeout: float = 60.0,
    progress: Callable[[str], None] = log,
) -> LoadResult:  # fmt: skip
    """Ingest, start the server, take the reference answers, run the sessions, stop the server."""
    if sessions < 1 or seconds <= 0 or client not in CLIENT_TEXT:
        raise ValueError(f"sessions must be at least 1, seconds positive and client one of {sorted(CLIENTS)}")
    result = LoadResult(sessions, seconds, think, timeout, datetime.now(), client, load_before=load())
    with tempfile.TemporaryDirectory(prefix="askpapers-load-") as tmpdir:
        tmp = Path(tmpdir)
        env = server_env(tmp / "data")
        t = time.perf_counter()
        result.ingest_summary = ingest_bundled(env, tmp)
        result.ingest_seconds = time.perf_counter() - t
        progress(f"ingested the bundled corpus in {result.ingest_seconds:.1f} s: {result.ingest_summary}")
        server = Server(env, tmp)
        try:
            result.startup_seconds = server.start()
            progress(f"askpapers serve (pid {server.pid}) answers at {server.url} after {result.startup_seconds:.1f} s")
            used = sorted({i % len(CONVERSATIONS) for i in range(sessions)})
            t = time.perf_counter()
            refs = reference_answers(server.url, [CONVERSATIONS[i] for i in used], timeout, client)
            result.references = len(refs)
            result.conversations = len(used)
            refs = {(used[ci], ti): key for (ci, ti), key in refs.items()}
            result.reference_seconds = time.perf_counter() - t
            progress(f"{len(refs)} reference answers, one at a time, in {result.reference_seconds:.1f} s")
            run_sessions(result, server, refs, progress)
        except BaseException:
            tail = server.log_tail()
            if tail:
                progress("server log (tail):\n" + tail)
            raise
        finally:
            server.stop()
    result.load_after = load()
    return result


def run_sessions(
    result: LoadResult, server: Server, refs: dict[tuple[int, int], CitationKey], progress: Callable[[str], None]
) -> None:
    recorder = Recorder()
    clock: dict[str, float] = {}

    def go() -> None:  # run by the last thread to reach the barrier: every client is ready
        clock["start"] = time.perf_counter()
        clock["deadline"] = clock["start"] + result.seconds

    barrier = threading.Barrier(result.sessions, action=go)
    threads = []
    for i in range(result.sessions):
        s = Session(i, i % len(CONVERSATIONS), server.url, refs, recorder, barrier, clock, result.think, result.timeout,
                    result.client)  # fmt: skip
        threads.append(threading.Thread(target=s.run, name=f"session-{i}", daemon=True))
    result.rss_before = rss_mb(server.pid)
    cpu_server, cpu_client = cpu_seconds(server.pid), time.process_time()
    for th in threads:
        th.start()
    while "start" not in clock and any(th.is_alive() for th in threads):
        time.sleep(0.05)
    start = clock.get("start", time.perf_counter())
    sampler = RssSampler(server.pid, start)
    sampler.start()
    progress(f"{result.sessions} sessions started for {result.seconds:g} s")
    hard_stop = start + result.seconds + result.timeout + 60
    next_report = start + 10
    while any(th.is_alive() for th in threads) and time.perf_counter() < hard_stop:
        time.sleep(0.2)
        if time.perf_counter() >= next_report:
            n, e, v = recorder.counts()
            rss = sampler.samples[-1][1] if sampler.samples else 0.0
            progress(
                f"{time.perf_counter() - start:4.0f} s: {n} requests, {e} failed, {v} violations, RSS {rss:.0f} MB"
            )
            next_report += 10
    result.wall = time.perf_counter() - start
    result.server_cpu = cpu_seconds(server.pid) - cpu_server
    result.client_cpu = time.process_time() - cpu_client
    sampler.stop()
    stuck = [th.name for th in threads if th.is_alive()]
    with recorder.lock:
        result.requests = list(recorder.requests)
        result.errors = list(recorder.errors) + [f"{name}: still waiting for an answer at the end" for name in stuck]
        result.violations = list(recorder.violations)
    result.rss = sampler.samples


# -- the report -------------------------------------------------------------------------------------------------------
def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def package_versions() -> dict[str, str]:
    out = versions()
    for name in ("gradio", "gradio_client"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def summary_rows(r: LoadResult, max_slope: float) -> list[tuple[str, str]]:
    lat, srv = r.latencies, r.server_latencies
    first = [q for q in r.requests if q.turn == 0]
    rows = [
        ("sessions", f"{r.sessions} (one thread each; {r.conversations} different conversations; think time "
                     f"{r.think:g} s)"),
        ("client", CLIENT_TEXT[r.client]),
        ("duration", f"{r.seconds:g} s asked for, {r.wall:.1f} s measured (to the last answer)"),
        ("requests", f"{len(r.requests):,} ({len(r.requests) / r.wall if r.wall else 0:.1f}/s): {len(first):,} "
                     f"first questions, {len(r.requests) - len(first):,} follow-ups"),
        ("failed requests", f"**{len(r.errors)}**"),
        ("isolation violations", f"**{len(r.violations)}** (checked against {r.references} reference answers)"),
    ]  # fmt: skip
    if lat:
        p50, p95 = ms(statistics.median(lat)), ms(pct(lat, 0.95))
        rows.append(("latency, client side (queueing included)", f"p50 **{p50}**, p95 **{p95}**, max {ms(max(lat))}"))
    if r.client == "mixed":
        for kind in MIXED:
            kl = [q.seconds for q in r.answered if q.client == kind]
            if kl:
                rows.append((f"… through `{kind}`", f"{len(kl):,} answered, p50 {ms(statistics.median(kl))}, "
                             f"p95 {ms(pct(kl, 0.95))}"))  # fmt: skip
    if srv:
        p50, p95 = ms(statistics.median(srv)), ms(pct(srv, 0.95))
        rows.append(("server compute per answer (`latency_s`)", f"p50 {p50}, p95 {p95}, max {ms(max(srv))}"))
    if r.wall:
        cores = os.cpu_count() or 1
        rows.append(("CPU time during the run", f"server {r.server_cpu:.0f} s, load generator {r.client_cpu:.0f} s "
                     f"(of {r.wall * cores:.0f} core-seconds on {cores} cores)"))  # fmt: skip
    if r.rss:
        start, end = r.rss[0][1], r.rss[-1][1]
        peak = max(m for _, m in r.rss)
        verdict = f"**growing** (over {max_slope:g} MB/min)" if r.growing(max_slope) else "flat"
        rows += [
            ("server RSS before the load (after start-up and the reference answers)", f"{r.rss_before:,.1f} MB"),
            ("server RSS start / end / max", f"{start:,.1f} / {end:,.1f} / {peak:,.1f} MB ({end - start:+.1f} MB)"),
            ("RSS slope, second half of the run (least squares)", f"**{r.slope:+.2f} MB/min**: {verdict}"),
            ("RSS slope, first half (warm-up)", f"{r.slope_first_half:+.2f} MB/min"),
        ]
    return rows


def verdict(r: LoadResult, max_slope: float) -> str:
    if not r.requests:
        return "**Result: FAILED**: no request was made."
    if not r.ok:
        return "**Result: FAILED**: " + (
            f"{len(r.errors)} failed requests, {len(r.violations)} isolation violations (see below)."
        )
    memory = (
        f"but the server's memory **grew** {r.slope:+.1f} MB/min over the second half of the run."
        if r.growing(max_slope)
        else "and the server's memory stayed flat."
    )
    return f"**Result: every request was answered, no session saw another session's history or citations, {memory}**"


def topics(r: LoadResult) -> list[str]:
    """The topic of each conversation used, from its first question."""
    used = sorted({i % len(CONVERSATIONS) for i in range(r.sessions)})
    pattern = re.compile(r"^Which papers (?:use|study|are about) (?:the )?(.*?)\?$")
    return [(m.group(1) if (m := pattern.match(CONVERSATIONS[i][0])) else CONVERSATIONS[i][0]) for i in used]


def render_report(r: LoadResult, command: str, max_slope: float = 5.0, note: str = "") -> str:
    v = package_versions()
    lines = [
        "# askpapers under load: concurrent chat sessions on the HTTP API",
        "",
        f"Measured {r.started:%Y-%m-%d %H:%M} on {machine()}. Load average (1/5/15 min) before: {r.load_before}; "
        f"after: {r.load_after}.",
        "",
        "Packages: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        f"Command: `{command}`.",
        "",
        f"`askpapers serve --host {HOST} --port FREE` ran as a subprocess over a fresh store in a temporary directory "
        f"(`askpapers ingest data/icml2026`: {r.ingest_summary or 'done'}; {r.ingest_seconds:.1f} s in all), with no "
        "`OPENAI_*` variables, so answers are extractive and deterministic; it answered HTTP "
        f"{r.startup_seconds:.1f} s after it was started. The {r.references} reference "
        f"answers (each turn of each conversation asked alone, one at a time) took {r.reference_seconds:.1f} s. Then "
        f"{r.sessions} sessions ran at once for {r.seconds:g} s, each on its own thread, calling the `/ask` endpoint "
        f"(`gr.api`) in `extractive` mode, through {CLIENT_TEXT[r.client]}: a \"Which papers …\" "
        "question on a topic of the corpus, then two follow-ups that narrow it, each sent with the session's own "
        "history (OpenAI-style messages), then over again, each request as soon as the previous one was answered.",
        "",
        "- **Answered**: no exception, no HTTP error, no `error` field, an answer text and a citation list.",
        "- **Isolation**: the answer echoes its own question; its citations (number, paper, title, evidence) are "
        "exactly those the reference answer has; a follow-up's papers are a subset of the session's previous "
        "answer's.",
        "- **Latency**: wall time of each request as the client sees it, including its wait in Gradio's queue (which "
        "runs a few requests at once: `demo.queue(default_concurrency_limit=…)` in ui/app.py); the server's compute "
        "time is the answer's `latency_s`.",
        "- **Memory**: VmRSS of the server process (and any children) from /proc every second; growth is a "
        f"least-squares slope over the second half of the run above {max_slope:g} MB/min.",
        "",
        "| what | result |",
        "| --- | --- |",
        *[f"| {k} | {val} |" for k, val in summary_rows(r, max_slope)],
        "",
        verdict(r, max_slope),
        "",
        "Topics (one conversation each, in session order): " + ", ".join(topics(r)) + ".",
    ]  # fmt: skip
    if r.rss:
        marks = r.rss
        step = max(1, len(marks) // 12)
        picked = marks[::step] + ([marks[-1]] if (len(marks) - 1) % step else [])
        lines += [
            "",
            "Server RSS during the run:",
            "",
            "| s | " + " | ".join(f"{t:.0f}" for t, _ in picked) + " |",
            "| --- |" + " --- |" * len(picked),
            "| MB | " + " | ".join(f"{m:.0f}" for _, m in picked) + " |",
        ]
    for title, items in (("Failed requests", r.errors), ("Isolation violations", r.violations)):
        if items:
            lines += ["", f"{title} (first {min(len(items), MAX_LISTED)} of {len(items)}):", ""]
            lines += [f"- {x}" for x in items[:MAX_LISTED]]
    events = os.environ.get("GRADIO_ANALYTICS_MAX_EVENTS", "10000")
    lines += [
        "",
        f"Memory under Gradio {package_versions().get('gradio', '?')}: its queue keeps its last {events} events for "
        "its analytics (`GRADIO_ANALYTICS_MAX_EVENTS`), a bounded log that adds a few KB of RSS per request until it "
        "is full, which is most of the slow creep a long run shows here (`GRADIO_ANALYTICS_MAX_EVENTS=100` flattens "
        "it). With `--client call` every request is a Gradio session of its own, and Gradio keeps each session's "
        "state (up to `launch(state_session_capacity=…)`, 10,000 by default) and its message queue, so RSS grows by "
        "tens of KB per request there.",
        "",
        f"The load generator runs on the same machine ({os.cpu_count()} cores) as the server, so they share the CPU;"
        " the latencies are those of a saturated server (every session sends its next request at once), not of an "
        "idle one.",
    ]
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def print_summary(r: LoadResult, max_slope: float) -> None:
    for k, val in summary_rows(r, max_slope):
        print(f"{k}: {val.replace('**', '').replace('`', '')}")


# -- main -------------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sessions", type=int, default=20, help="concurrent chat sessions (default 20)")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the sessions run (default 60)")
    ap.add_argument("--client", choices=sorted(CLIENT_TEXT), default="session",
                    help="how sessions call the API (default: session, plain HTTP with a session hash)")  # fmt: skip
    ap.add_argument("--think", type=float, default=0.0, help="seconds a session waits between requests (default 0)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a request counts as failed")
    ap.add_argument("--max-slope", type=float, default=5.0, help="RSS slope (MB/min, second half) flagged as growth")
    ap.add_argument("--fail-on-growth", action="store_true", help="exit non-zero when memory grows, too")
    ap.add_argument("--note", default="", help="a sentence added to the report (e.g. what else the machine ran)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "load.md", help="the Markdown report")
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.sessions > 200:
        ap.error("--sessions must be between 1 and 200")
    if not 0 < args.seconds <= 3600:
        ap.error("--seconds must be in (0, 3600]")
    if args.think < 0 or args.timeout <= 0:
        ap.error("--think must be >= 0 and --timeout > 0")

    command = shlex.join([".venv/bin/python", "bench/load.py", *(argv if argv is not None else sys.argv[1:])])
    result = run_load(args.sessions, args.seconds, client=args.client, think=args.think, timeout=args.timeout)
    text = render_report(result, command, args.max_slope, args.note)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print_summary(result, args.max_slope)
    log(f"wrote {args.out}")
    failed = not result.ok
    if failed:
        log(f"FAILED: {len(result.errors)} failed requests, {len(result.violations)} isolation violations")
        for x in (result.errors + result.violations)[:MAX_LISTED]:
            log("  " + x)
    if result.growing(args.max_slope):
        log(f"warning: server RSS grew {result.slope:+.2f} MB/min over the second half of the run")
        failed = failed or args.fail_on_growth
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
