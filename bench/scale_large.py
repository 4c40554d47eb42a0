"""askpapers at 200k and 1M papers on one `chroma run` server (issue 25; `python -m bench.scale --large N ...`).

The corpus is the real dev papers, then synthetic ones made of real sentences (:mod:`bench.synthetic`), every
paper with a seeded random vector: only the timings mean anything. For each size, kept in the benchmark cache:

- **ingest**: the shards (100k papers each) ingested one after another into a store on a `chroma run` server, in
  a child process; papers/s per shard and overall, and the time the BM25 index's incremental update took;
- **lexical index**: a full rebuild from the store, then 1,000 new papers ingested and the incremental update
  of the index they cause, timed alone;
- **questions**: in a new process, the first ``ask`` from opening the store (cold start), then ``search`` and
  extractive ``ask`` on each of the 44 other questions once (first time) and again; a set question with thousands
  of matches ("How many papers use reinforcement learning?"): its time, its total, and FTS5's count of papers
  stating the phrase;
- peak RSS of the serving process and of the server, and the disk the store and its index take.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.harness import (
    dir_size_mb,
    embedder_threads,
    in_child,
    log,
    own_peak_rss_mb,
    pct,
    store_settings,
    vm_hwm_mb,
    warm_embedder,
)
from bench.synthetic import SHARD, extra, shards

COUNT_QUESTION = "How many papers use reinforcement learning?"
COUNT_PHRASE = '"reinforcement learning"'
ADDED = 1_000  # papers of the incremental update
# at 1M papers on a `chroma run` server: search p50, ask p50 (ms), the count question (s), serving RSS (MB),
# the incremental update of the BM25 index for 1,000 papers (s)
LARGE_TARGETS = {"search_p50": 100.0, "ask_p50": 300.0, "count_s": 1.0, "rss_mb": 4 * 1024.0, "update_s": 5.0}


def _settings(data_dir: str, port: int) -> Any:
    return store_settings(data_dir=Path(data_dir), collection="scale", chroma_host="127.0.0.1", chroma_port=port)


def _ingest_timed(files: list[str], data_dir: str, port: int, done_file: str = "", done: int = 0) -> dict[str, Any]:
    """In a child: ingest ``files`` one after another; each one's seconds, papers added and BM25 update time. With
    ``done_file``, the number of shards in the store (``done`` before the first) is written there after each, so an
    interrupted build resumes at the next shard."""
    import askpapers.vectorstore.pipeline as pipeline
    from askpapers.vectorstore import ingest

    store = _settings(data_dir, port)
    emb = warm_embedder(embedder_threads())
    lexical: list[float] = []
    sync = getattr(pipeline, "sync_lexical")  # noqa: B009  (the name ingest calls, wrapped below to time it)

    def timed_sync(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return sync(*args, **kwargs)
        finally:
            lexical.append(time.perf_counter() - t)

    setattr(pipeline, "sync_lexical", timed_sync)  # noqa: B010
    out: list[dict[str, Any]] = []
    for f in files:
        t = time.perf_counter()
        report = ingest([f], store, progress=False, embedder=emb)
        s = time.perf_counter() - t
        out.append({"file": Path(f).name, "seconds": s, "added": report.added, "total": report.total_papers,
                    "lexical_s": lexical[-1] if lexical else 0.0})  # fmt: skip
        if done_file:
            done += 1
            Path(done_file).write_text(str(done))
        log(f"  {Path(f).name}: {report.added:,} papers in {s:.0f} s ({report.added / s:.0f}/s; BM25 update "
            f"{out[-1]['lexical_s']:.1f} s); {report.total_papers:,} in the store")  # fmt: skip
    return {"files": out, "ingest_rss_mb": own_peak_rss_mb()}


def _rebuild(data_dir: str, port: int) -> dict[str, Any]:
    """In a child: a full rebuild of the BM25 index from the store."""
    from askpapers.vectorstore.lexical import sync_lexical
    from askpapers.vectorstore.store import Store

    store = _settings(data_dir, port)
    emb = warm_embedder(embedder_threads())
    t = time.perf_counter()
    sync_lexical(Store(store, emb.embedder_id, emb.dim), store, force=True)
    return {"rebuild_s": time.perf_counter() - t}


def _questions(data_dir: str, port: int, qs: list[str]) -> dict[str, Any]:
    """In a new process: the first ``ask`` from opening the store, then first-time and repeated questions."""
    from askpapers.rag import AskPapers
    from askpapers.rag.settings import get_settings

    store = _settings(data_dir, port)
    warm_embedder(embedder_threads())  # (the model's load: not timed)
    t = time.perf_counter()
    app = AskPapers(get_settings().model_copy(update={"store": store}))
    app.ask(qs[0], mode="extractive")
    cold_s = time.perf_counter() - t

    def timed(fn: Any, q: str) -> float:
        t = time.perf_counter()
        fn(q)
        return (time.perf_counter() - t) * 1000

    def ask(q: str) -> Any:
        return app.ask(q, mode="extractive")

    search_first = [timed(app.search, q) for q in qs[1:]]
    ask_first = [timed(ask, q) for q in qs[1:]]
    search_again = [timed(app.search, q) for q in qs[1:]]
    ask_again = [timed(ask, q) for q in qs[1:]]
    t = time.perf_counter()
    answer = app.ask(COUNT_QUESTION, mode="extractive")
    count_s = time.perf_counter() - t
    return {"cold_s": cold_s, "search_first": search_first, "ask_first": ask_first, "search_again": search_again,
            "ask_again": ask_again, "count_s": count_s, "count_total": answer.total,
            "count_text": answer.text[:300]}  # fmt: skip


def _commit() -> str:
    """The checkout's commit (short), with "+" when files differ from it."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=Path(__file__).parent).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def _fts_count(data_dir: Path) -> int | None:
    for path in data_dir.glob("*.lexical.sqlite"):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:  # (the FTS5 table of vectorstore.lexical)
            return int(con.execute("SELECT count(*) FROM papers WHERE papers MATCH ?", (COUNT_PHRASE,)).fetchone()[0])
        finally:
            con.close()
    return None


def large(size: int, corpus: Path, cache: Path, qs: list[str], biggest: int, rebuild: bool = True) -> dict[str, Any]:
    """Grow the one large server store to ``size`` papers (real, then synthetic) and measure it (see the module's
    docstring). The store grows from one size to the next (the shards of ``biggest`` papers, in order), so the
    papers of each earlier size's incremental update stay in it: the store holds ``size`` papers plus 1,000 for
    each size measured before and this one's."""
    from tests.chroma_server import ChromaServer, free_port

    root = cache / "large"
    data_dir, server_dir = root / "local", root / "server-data"
    root.mkdir(parents=True, exist_ok=True)
    # one port for the store's life: the BM25 index's file is named after the server's address
    port_file = root / "port"
    if not port_file.exists():
        port_file.write_text(str(free_port()))
    done_file = root / "shards-ingested"
    done = int(done_file.read_text()) if done_file.exists() else 0
    files = shards(corpus, biggest, cache)[: -(-size // SHARD)]
    result: dict[str, Any] = {"size": size, "measured": f"{datetime.now():%Y-%m-%d %H:%M}", "code": _commit()}
    server = ChromaServer(server_dir, port=int(port_file.read_text())).start(timeout=600)
    try:
        assert server.proc is not None
        if done < len(files):
            log(f"large {size:,}: ingest of shards {done} to {len(files) - 1} on {server.url}")
            result["ingest"] = in_child(_ingest_timed, files=[str(f) for f in files[done:]], data_dir=str(data_dir),
                                        port=server.port, done_file=str(done_file), done=done)  # fmt: skip
            done_file.write_text(str(len(files)))
        if rebuild:
            result["rebuild"] = in_child(_rebuild, data_dir=str(data_dir), port=server.port)
            log(f"large {size:,}: BM25 full rebuild {result['rebuild']['rebuild_s']:.1f} s")
        added = extra(corpus, ADDED, f"add{size}", cache)
        result["update"] = in_child(_ingest_timed, files=[str(added)], data_dir=str(data_dir), port=server.port)
        result["questions"] = q = in_child(_questions, data_dir=str(data_dir), port=server.port, qs=qs)
        result["server_rss_mb"] = vm_hwm_mb(server.proc.pid) or 0.0
    finally:
        server.stop()
    result["fts_count"] = _fts_count(data_dir)
    result["disk_mb"] = dir_size_mb(root)
    result["lexical_mb"] = sum(p.stat().st_size for p in data_dir.glob("*.lexical.sqlite")) / 2**20
    log(f"large {size:,}: search p50 {statistics.median(q['search_first']):.0f} / p95 "
        f"{pct(q['search_first'], 0.95):.0f} ms, ask p50 {statistics.median(q['ask_first']):.0f} / p95 "
        f"{pct(q['ask_first'], 0.95):.0f} ms (first time); count question {q['count_s']:.2f} s "
        f"({q['count_total']:,}; FTS5 {result['fts_count']}); serving RSS {q['peak_rss_mb']:,.0f} MB, server "
        f"{result['server_rss_mb']:,.0f} MB")  # fmt: skip
    return result


LARGE_HEADING = "## 200k and 1M papers on a Chroma server (issue 25)"


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} / {pct(values, 0.95):.0f} ms"


PLOT_LINE = "![first-time search and ask at 50k, 200k and 1M papers](benchmarks-scale.png)"


def large_section(old: str, kept: dict[str, dict[str, Any]]) -> list[str]:
    """The large runs' section written again from ``kept``, keeping what the old section (``old``, the report's
    text under :data:`LARGE_HEADING`) holds besides: the rows of runs no longer kept (another code at a size kept
    now, or measured before the cache was emptied), before the kept runs' rows, and the notes under the plot."""
    start = old.find("\n" + LARGE_HEADING)
    if start < 0:
        return large_report(kept)
    end = old.find("\n## ", start + 1)
    section = old[start : end if end >= 0 else len(old)]
    now = {(str(r.get("code", "")), f"{r['update']['files'][0]['total']:,}") for r in kept.values()}
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| code ", "| ---"))
    ]
    earlier = [row for row in rows if tuple(cell.strip() for cell in row.split("|")[1:3]) not in now]
    at = section.find(PLOT_LINE)
    notes = section[at + len(PLOT_LINE) :].strip("\n") if at >= 0 else ""
    return large_report(kept, earlier, notes)


def large_report(kept: dict[str, dict[str, Any]], earlier: list[str] | None = None, notes: str = "") -> list[str]:
    """The report's section on the large runs (see the module's docstring): ``earlier`` rows (written as they
    were) before the kept runs' rows, and ``notes`` under the plot."""
    if not kept:
        return []
    t = LARGE_TARGETS
    lines = [
        LARGE_HEADING,
        "",
        "Command: `make bench-scale-large` → `.venv/bin/python -m bench.scale --large 200000 1000000`. The corpus is "
        "the 54,327 real papers of `corpus_dev.jsonl` and then **synthetic papers**, each a real "
        "title and 3–8 sentences drawn from the abstracts of different real papers, under ids `synthetic:NNNNNNN` "
        "(`bench/synthetic.py`); every paper has a seeded random vector (the abstract is one chunk), so only the "
        "timings mean anything. One store on a `chroma run` server on 127.0.0.1 grows from one size to the next "
        "(100k papers a shard, one `ingest` each, in a child process); at each size, 1,000 more synthetic papers are "
        "ingested to time the BM25 index's incremental update, and they stay in the store. The questions run in a "
        "new process: the first `ask` from opening the store (cold start, the model already loaded), then each of "
        "the other 44 questions (the conference and compound dev questions and two more) once by `search` and once "
        "by extractive `ask` (first time), then all again. The count question is "
        f"“{COUNT_QUESTION}”; FTS5 counts the papers stating the phrase.",
        "",
        f"Targets at 1M papers: search p50 ≤ {t['search_p50']:.0f} ms; ask p50 ≤ {t['ask_p50']:.0f} ms; the count "
        f"question ≤ {t['count_s']:.0f} s with the true count; serving peak RSS ≤ {t['rss_mb'] / 1024:.0f} GB; "
        f"1,000 papers added update the BM25 index in ≤ {t['update_s']:.0f} s.",
        "",
        "| code | papers | ingest (shards of this row) | BM25 index: full rebuild / update for 1,000 "
        "| search p50 / p95 (first time) | ask p50 / p95 (first time) | again: search / ask p50 | count question "
        "| cold start (first ask) | peak RSS: serving / ingest / server | on disk (BM25 index) | measured |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(earlier or []),
    ]
    for r in sorted(kept.values(), key=lambda r: r["size"]):
        q = r["questions"]
        files = r.get("ingest", {}).get("files", [])
        if files:
            n, s = sum(f["added"] for f in files), sum(f["seconds"] for f in files)
            rates = [f["added"] / f["seconds"] for f in files if f["seconds"]]
            ingest = f"{n:,} papers in {s / 60:.0f} min: {n / s:.0f}/s (shards: first {rates[0]:.0f}/s, last "
            ingest += f"{rates[-1]:.0f}/s)"
            ingest_rss = f"{r['ingest']['peak_rss_mb']:,.0f} MB"
        else:
            ingest, ingest_rss = "(built before)", "—"
        up = r["update"]["files"][0]
        update = f"{up['lexical_s']:.1f} s" if up["added"] else "— (already added)"
        total = up["total"]
        rebuilt = f"{r['rebuild']['rebuild_s']:.0f} s" if "rebuild" in r else "not run"
        lines.append(
            f"| {r.get('code', '')} | {total:,} | {ingest} | {rebuilt} / {update} "
            f"| {_fmt(q['search_first'])} "
            f"| {_fmt(q['ask_first'])} | {statistics.median(q['search_again']):.0f} / "
            f"{statistics.median(q['ask_again']):.0f} ms | {q['count_s']:.2f} s: {q['count_total']:,} papers "
            f"(FTS5: {r['fts_count']:,} state the phrase) | {q['cold_s']:.1f} s | {q['peak_rss_mb']:,.0f} / "
            f"{ingest_rss} / {r['server_rss_mb']:,.0f} MB | {r['disk_mb'] / 1024:.1f} GB ({r['lexical_mb'] / 1024:.1f} "
            f"GB) | {r['measured']} |"
        )
    lines += ["", PLOT_LINE, ""]
    if notes:
        lines += [notes, ""]
    return lines


def plot(kept: dict[str, dict[str, Any]], first: dict[str, dict[str, Any]], out: Path) -> None:
    """p50 and p95 of first-time ``search`` and ``ask`` against papers (log x): the large runs (server) and the
    latest 50k first-time run (embedded)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points: list[tuple[int, str, list[float], list[float]]] = []
    if first:
        r = max(first.values(), key=lambda r: r["measured"])
        points.append((r["size"], "embedded", r["search"]["first_ms"], r["ask"]["first_ms"]))
    for r in kept.values():
        points.append((r["update"]["files"][0]["total"], "server", r["questions"]["search_first"],
                       r["questions"]["ask_first"]))  # fmt: skip
    points.sort()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    xs = [p[0] for p in points]
    for name, series in (("search", [p[2] for p in points]), ("ask", [p[3] for p in points])):
        ax.plot(xs, [statistics.median(v) for v in series], marker="o", label=f"{name} p50")
        ax.plot(xs, [pct(v, 0.95) for v in series], marker="s", linestyle="--", label=f"{name} p95")
    shown: list[float] = []
    for x, mode, *_ in points:
        if shown and x < shown[-1] * 1.5:
            continue  # (one label for points close together: 902,968 and 1,008,968 papers)
        shown.append(x)
        ax.annotate(mode, (x, 1), textcoords="offset points", xytext=(0, 4), ha="center", fontsize=8,
                    xycoords=("data", "axes fraction"))  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("papers in the store (log)")
    ax.set_ylabel("first-time latency, ms (log)")
    ax.set_title("askpapers: first-time questions against corpus size", pad=16)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
