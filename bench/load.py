"""Load test of the web app's HTTP API (`make bench-load`): concurrent chat sessions with follow-ups, on 127.0.0.1.

Usage: .venv/bin/python -m bench.load [--sessions 20] [--seconds 60] [--client session|call|gradio|mixed] [--think S]
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
  reference answers); a follow-up's papers are a subset of the session's previous answer's, unless its answer says
  it also found papers that answer did not list (read together with the question it narrows);
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
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from bench.harness import ROOT, command_line, load_average, log, write_report
from bench.load_clients import CLIENT_TEXT, CLIENTS
from bench.load_report import MAX_LISTED, LoadResult, print_summary, render_report
from bench.load_server import RssSampler, Server, cpu_seconds, ingest_bundled, rss_mb, server_env
from bench.load_sessions import (
    BEYOND,
    CONVERSATIONS,
    CitationKey,
    Recorder,
    Session,
    check_isolation,
    reference_answers,
)

# what tests/test_load.py uses, besides run_load
__all__ = ["BEYOND", "CONVERSATIONS", "LoadResult", "check_isolation", "main", "render_report", "run_load"]


def run_load(
    sessions: int = 20, seconds: float = 60.0, *, client: str = "session", think: float = 0.0, timeout: float = 60.0,
    progress: Callable[[str], None] = log, turns: int | None = None, replicas: int = 1, chroma_server: bool = False,
) -> LoadResult:  # fmt: skip
    """Ingest, start the server(s), take the reference answers, run the sessions, stop the servers.

    With ``turns``, each session asks that many questions and stops, whatever the time (a test's fixed amount of
    work); without it, the sessions ask until ``seconds`` have passed (the benchmark). With ``chroma_server`` (implied
    by ``replicas`` > 1), the store is on a `chroma run` server and ``replicas`` ``askpapers serve`` processes, each
    with a data directory (BM25 index) of its own, share it; session i talks to replica i mod ``replicas``, and the
    reference answers come from the first replica, so the isolation check also shows that the replicas agree."""
    if sessions < 1 or seconds <= 0 or client not in CLIENT_TEXT or replicas < 1:
        raise ValueError(f"sessions and replicas must be at least 1, seconds positive and client one of "
                         f"{sorted(CLIENTS)}")  # fmt: skip
    result = LoadResult(
        sessions, seconds, think, timeout, datetime.now(), client, load_before=load_average(), turns=turns,
        replicas=replicas, chroma_server=chroma_server or replicas > 1,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="askpapers-load-") as tmpdir, contextlib.ExitStack() as stack:
        tmp = Path(tmpdir)
        extra: dict[str, str] = {}
        if result.chroma_server:
            from tests.chroma_server import ChromaServer

            chroma = ChromaServer(tmp / "chroma-data").start()
            stack.callback(chroma.stop)
            extra = {"ASKPAPERS_CHROMA_HOST": "127.0.0.1", "ASKPAPERS_CHROMA_PORT": str(chroma.port)}
            progress(f"chroma run answers at {chroma.url}")
        envs = [{**server_env(tmp / f"data-{k}"), **extra} for k in range(replicas)]
        t = time.perf_counter()
        result.ingest_summary = ingest_bundled(envs[0], tmp)
        result.ingest_seconds = time.perf_counter() - t
        progress(f"ingested the bundled corpus in {result.ingest_seconds:.1f} s: {result.ingest_summary}")
        servers = []
        for k, env in enumerate(envs):
            (tmp / f"replica-{k}").mkdir()
            servers.append(Server(env, tmp / f"replica-{k}"))
        server = servers[0]
        try:
            for s in servers:
                result.startup_seconds = max(result.startup_seconds, s.start())
                progress(f"askpapers serve (pid {s.pid}) answers at {s.url}")
            used = sorted({i % len(CONVERSATIONS) for i in range(sessions)})
            t = time.perf_counter()
            refs = reference_answers(server.url, [CONVERSATIONS[i] for i in used], timeout, client)
            result.references = len(refs)
            result.conversations = len(used)
            refs = {(used[ci], ti): key for (ci, ti), key in refs.items()}
            result.reference_seconds = time.perf_counter() - t
            progress(f"{len(refs)} reference answers, one at a time, in {result.reference_seconds:.1f} s")
            run_sessions(result, servers, refs, progress)
        except BaseException:
            for s in servers:
                tail = s.log_tail()
                if tail:
                    progress(f"server log of {s.url} (tail):\n" + tail)
            raise
        finally:
            for s in servers:
                s.stop()
    result.load_after = load_average()
    return result


def run_sessions(
    result: LoadResult, servers: list[Server], refs: dict[tuple[int, int], CitationKey], progress: Callable[[str], None]
) -> None:
    recorder = Recorder()
    clock: dict[str, float] = {}

    def go() -> None:  # run by the last thread to reach the barrier: every client is ready
        clock["start"] = time.perf_counter()
        clock["deadline"] = clock["start"] + result.seconds

    barrier = threading.Barrier(result.sessions, action=go)
    threads = []
    for i in range(result.sessions):
        url = servers[i % len(servers)].url
        s = Session(i, i % len(CONVERSATIONS), url, refs, recorder, barrier, clock, result.think, result.timeout,
                    result.client, result.turns)  # fmt: skip
        threads.append(threading.Thread(target=s.run, name=f"session-{i}", daemon=True))
    pids = [s.pid for s in servers]
    result.rss_before = sum(rss_mb(pid) for pid in pids)
    cpu_server, cpu_client = sum(cpu_seconds(pid) for pid in pids), time.process_time()
    for th in threads:
        th.start()
    while "start" not in clock and any(th.is_alive() for th in threads):
        time.sleep(0.05)
    start = clock.get("start", time.perf_counter())
    sampler = RssSampler(pids, start)
    sampler.start()
    progress(f"{result.sessions} sessions started for {result.seconds:g} s")
    hard_stop = start + (result.timeout * result.turns if result.turns else result.seconds + result.timeout) + 60
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
    result.server_cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_server
    result.client_cpu = time.process_time() - cpu_client
    sampler.stop()
    stuck = [th.name for th in threads if th.is_alive()]
    with recorder.lock:
        result.requests = list(recorder.requests)
        result.errors = list(recorder.errors) + [f"{name}: still waiting for an answer at the end" for name in stuck]
        result.violations = list(recorder.violations)
    result.rss = sampler.samples


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
    ap.add_argument("--replicas", type=int, default=1, help="askpapers serve processes sharing one `chroma run` "
                    "server (default 1: one process, embedded store, unless --chroma-server)")  # fmt: skip
    ap.add_argument("--chroma-server", action="store_true", help="the store on a `chroma run` server")
    ap.add_argument("--note", default="", help="a sentence added to the report (e.g. what else the machine ran)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "load.md", help="the Markdown report")
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.sessions > 200:
        ap.error("--sessions must be between 1 and 200")
    if not 0 < args.seconds <= 3600:
        ap.error("--seconds must be in (0, 3600]")
    if args.think < 0 or args.timeout <= 0:
        ap.error("--think must be >= 0 and --timeout > 0")

    command = command_line("load", argv)
    if not 1 <= args.replicas <= 8:
        ap.error("--replicas must be between 1 and 8")
    result = run_load(args.sessions, args.seconds, client=args.client, think=args.think, timeout=args.timeout,
                      replicas=args.replicas, chroma_server=args.chroma_server)  # fmt: skip
    text = render_report(result, command, args.max_slope, args.note)
    write_report(args.out, text)
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
