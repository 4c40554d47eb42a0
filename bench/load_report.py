"""What one load run measured (:class:`LoadResult`) and its Markdown report (docs/load.md)."""

from __future__ import annotations

import os
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime

from bench.harness import machine, pct, versions
from bench.load_clients import CLIENT_TEXT, HOST, MIXED
from bench.load_server import slope_mb_per_min
from bench.load_sessions import CONVERSATIONS, Request

MAX_LISTED = 10  # errors and violations quoted in the report


@dataclass
class LoadResult:
    """One run: what was asked for, every request, the server's RSS samples, and the phases' times."""

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
    turns: int | None = None  # when set, each session asks this many questions and stops (no deadline)
    replicas: int = 1  # askpapers serve processes (sessions spread over them round-robin)
    chroma_server: bool = False  # the store on a `chroma run` server (else embedded in the serving process)

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


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def package_versions() -> dict[str, str]:
    return versions(("gradio", "gradio_client"))


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


def method(r: LoadResult, max_slope: float) -> list[str]:
    """How the run went about it: the server, the sessions, and what each check means."""
    if r.replicas > 1 or r.chroma_server:
        many = f"{r.replicas} `askpapers serve` processes" if r.replicas > 1 else "One `askpapers serve` process"
        setup = [
            f"**{many}** (each with a data directory, and so a BM25 index, of its own) shared one store on a `chroma "
            f"run` server on {HOST}; session i talked to replica i mod {r.replicas}, and the reference answers came "
            "from the first replica, so the isolation check also compares the replicas' answers. The server RSS and "
            "CPU figures below are the sum over the replicas (without the Chroma server).",
            "",
        ]
    else:
        setup = []
    return [
        *setup,
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
    ]  # fmt: skip


def rss_table(r: LoadResult) -> list[str]:
    """About a dozen of the server's RSS samples, evenly spaced, and the last one."""
    if not r.rss:
        return []
    marks = r.rss
    step = max(1, len(marks) // 12)
    picked = marks[::step] + ([marks[-1]] if (len(marks) - 1) % step else [])
    return [
        "",
        "Server RSS during the run:",
        "",
        "| s | " + " | ".join(f"{t:.0f}" for t, _ in picked) + " |",
        "| --- |" + " --- |" * len(picked),
        "| MB | " + " | ".join(f"{m:.0f}" for _, m in picked) + " |",
    ]


def problems(r: LoadResult) -> list[str]:
    lines = []
    for title, items in (("Failed requests", r.errors), ("Isolation violations", r.violations)):
        if items:
            lines += ["", f"{title} (first {min(len(items), MAX_LISTED)} of {len(items)}):", ""]
            lines += [f"- {x}" for x in items[:MAX_LISTED]]
    return lines


def closing_notes() -> list[str]:
    events = os.environ.get("GRADIO_ANALYTICS_MAX_EVENTS", "10000")
    return [
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
        *method(r, max_slope),
        "",
        "| what | result |",
        "| --- | --- |",
        *[f"| {k} | {val} |" for k, val in summary_rows(r, max_slope)],
        "",
        verdict(r, max_slope),
        "",
        "Topics (one conversation each, in session order): " + ", ".join(topics(r)) + ".",
        *rss_table(r),
        *problems(r),
        *closing_notes(),
    ]
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def print_summary(r: LoadResult, max_slope: float) -> None:
    for k, val in summary_rows(r, max_slope):
        print(f"{k}: {val.replace('**', '').replace('`', '')}")
