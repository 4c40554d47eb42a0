"""askpapers at 1k, 10k and 50k papers, on the embedded store and on a `chroma run` server (`make bench-scale`).

For each size and mode, in a fresh child process and a fresh store: ingest throughput, warm `search` and extractive
`ask` latency (p50 and p95 over the conference "which papers" questions), the first query's time (it builds the
BM25 index from the store), peak RSS and on-disk size. The 1k run embeds with the model (so its ingest rate is the
embedder's); the 10k and 50k runs load embeddings produced once by `askpapers embed` of the first 50k papers and
cached outside the repository (~/.cache/askpapers/bench), so their ingest rate is Chroma's write speed.

Results are kept per (mode, size) in ~/.cache/askpapers/bench/scale-results.json, so `--sizes` / `--modes` can
re-measure part of the table; the report (docs/benchmarks-scale.md) is written from all kept results.

Usage: .venv/bin/python -m bench.scale [--sizes N ...] [--modes embedded|server ...] [--report] [--out FILE]
(from the checkout: server mode uses the test suite's ``tests.chroma_server``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.harness import (
    BENCH_CACHE,
    CONFERENCE,
    ROOT,
    command_line,
    dir_size_mb,
    embedder_threads,
    in_child,
    log,
    machine,
    own_peak_rss_mb,
    pct,
    store_settings,
    time_queries,
    versions,
    vm_hwm_mb,
    warm_embedder,
    write_report,
)

CORPUS = CONFERENCE / "corpus_dev.jsonl"
GOLD = CONFERENCE / "gold_questions_dev.jsonl"
CACHE = BENCH_CACHE
RESULTS = CACHE / "scale-results.json"
FIRST_RESULTS = CACHE / "scale-first-time.json"
LARGE_RESULTS = CACHE / "scale-large.json"
PRECOMPUTED_FROM = 10_000  # sizes from here on load precomputed embeddings (made once by `askpapers embed`)
TARGETS = {"search_p50_ms": 50.0, "ask_p50_ms": 300.0, "peak_rss_mb": 2.5 * 1024}
# first-time questions at 50k papers (issue 25): search p50 / p95, ask p50 / p95 (ms), first ask in a new process (s)
FIRST_TARGETS = {"search_p50": 50.0, "search_p95": 150.0, "ask_p50": 150.0, "ask_p95": 500.0, "first_ask_s": 3.0}
DIM = 384  # the embedder's dimensions


def questions() -> list[str]:
    qs = [json.loads(line)["question"] for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [*qs, "How do diffusion models handle inverse problems?", "graph neural networks for molecules"]


def copy_head(src: Path, dst: Path, n: int) -> Path:
    """The first ``n`` lines of ``src`` as ``dst`` (written to a temporary name, then renamed)."""
    tmp = dst.with_suffix(".tmp")
    with src.open(encoding="utf-8") as fin, tmp.open("w", encoding="utf-8") as fout:
        for i, line in enumerate(fin):
            if i >= n:
                break
            fout.write(line)
    tmp.replace(dst)
    return dst


def first_n(n: int) -> Path:
    """The first ``n`` papers of corpus_dev.jsonl, as a file in the cache."""
    path = CACHE / f"corpus_dev-{n}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        copy_head(CORPUS, path, n)
    return path


def precomputed(n: int) -> Path:
    """``askpapers embed`` of the first ``n`` papers, made once (a rerun resumes it).

    `askpapers embed` keeps the input order, so the first ``n`` lines of a larger embedded file serve too.
    """
    from askpapers.vectorstore.embed_export import embed_to_jsonl

    out = CACHE / f"corpus_dev-{n}.embedded.jsonl"
    if not out.exists():
        for bigger in sorted(
            CACHE.glob("corpus_dev-*.embedded.jsonl"), key=lambda p: int(p.name.split("-")[1].split(".")[0])
        ):
            size = int(bigger.name.split("-")[1].split(".")[0])
            if size > n and sum(1 for line in bigger.open(encoding="utf-8") if line.endswith("\n")) >= n:
                copy_head(bigger, out, n)
                log(f"precomputed embeddings: the first {n:,} records of {bigger.name}")
                return out
    log(f"precomputed embeddings: {out} (askpapers embed; resumes if partial)")
    written, kept = embed_to_jsonl([first_n(n)], out, store_settings(), progress=True)
    log(f"precomputed embeddings: {written:,} embedded now, {kept:,} already there")
    return out


# -- first-time questions on a store of random vectors ----------------------------------------------------------------
def first_time_questions() -> list[str]:
    """The conference gold questions, the compound ones and two more: each asked once per process."""
    out: list[str] = []
    for path in (GOLD, CONFERENCE / "compound_questions_dev.jsonl"):
        out += [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out += ["How do diffusion models handle inverse problems?", "graph neural networks for molecules"]
    return list(dict.fromkeys(out))


def random_vectors(n: int, seed: int = 25) -> Path:
    """The first ``n`` papers with one seeded random unit vector each ("embedding": the abstract is one chunk):
    a store that needs no embedding, so that only its timings mean anything (the query is embedded by the model,
    so the dense neighbours are arbitrary papers)."""
    import numpy as np

    out = CACHE / f"corpus_dev-{n}.random.jsonl"
    if out.exists():
        return out
    rng = np.random.default_rng(seed)
    tmp = out.with_suffix(".tmp")
    with first_n(n).open(encoding="utf-8") as fin, tmp.open("w", encoding="utf-8") as fout:
        for line in fin:
            rec = json.loads(line)
            v = rng.standard_normal(DIM).astype(np.float32)
            rec["embedding"] = [round(float(x), 5) for x in v / np.linalg.norm(v)]
            fout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    tmp.replace(out)
    return out


def random_store(n: int) -> Path:
    """The data directory of an embedded store of the first ``n`` papers with random vectors (built once, kept in
    the cache); its BM25 index is brought up to date with this checkout's format before the clock starts."""
    from askpapers.vectorstore.lexical import sync_lexical
    from askpapers.vectorstore.pipeline import ingest
    from askpapers.vectorstore.store import Store

    data_dir = CACHE / f"store-{n}-random"
    store = store_settings(data_dir=data_dir, collection="scale")
    if not (data_dir / "ready").exists():
        corpus = random_vectors(n)
        emb = warm_embedder(embedder_threads())
        t = time.perf_counter()
        report = ingest([corpus], store, progress=False, embedder=emb)
        log(f"random store {n:,}: {report.total_papers:,} papers in {time.perf_counter() - t:.0f} s")
        (data_dir / "ready").write_text(str(report.total_papers))
    emb = warm_embedder(embedder_threads())
    t = time.perf_counter()
    sync_lexical(Store(store, emb.embedder_id, emb.dim), store)
    log(f"random store {n:,}: BM25 index up to date in {time.perf_counter() - t:.1f} s")
    return data_dir


def first_time_child(data_dir: str, qs: list[str], which: str, warm: bool = True) -> dict[str, Any]:
    """In a new process: the first ``ask`` (from opening the store, as `askpapers serve` does, with its
    warm-up), then ``which`` (search or ask) on each other question once (first time), then on all of them again."""
    t = time.perf_counter()
    import chromadb  # noqa: F401

    from askpapers.rag import AskPapers, settle
    from askpapers.rag.settings import get_settings

    imports_s = time.perf_counter() - t
    store = store_settings(data_dir=Path(data_dir), collection="scale")
    warm_embedder(embedder_threads())  # (the model's load is the same before and after: not timed)
    t = time.perf_counter()
    app = AskPapers(get_settings().model_copy(update={"store": store}), warm=warm)
    app.ask(qs[0], mode="extractive")
    first_ask_s = time.perf_counter() - t
    settle()  # as `askpapers serve` does once its store is open (rag.runtime)

    found: dict[str, list[str]] = {}  # what each question found the first time: the same before and after a speed-up

    def run(q: str) -> float:
        t = time.perf_counter()
        if which == "search":
            got = [h.paper_id for h in app.search(q)]
        else:
            answer = app.ask(q, mode="extractive")
            got = [str(answer.total), *(c.paper_id for c in answer.citations), "|", *answer.matched_ids]
        ms = (time.perf_counter() - t) * 1000
        found.setdefault(q, got)
        return ms

    first = [run(q) for q in qs[1:]]
    again = [run(q) for q in qs[1:]]
    return {"imports_s": imports_s, "first_ask_s": first_ask_s, "first_ms": first, "again_ms": again, "found": found}


def compare(kept: dict[str, dict[str, Any]], a: str, b: str) -> int:
    """The questions whose first-time results (search: the hits' ids in order; ask: the total, the cited ids and
    every matching id, in order) differ between two kept runs of the same size; 0 when none does."""
    differ = 0
    for which in ("search", "ask"):
        fa, fb = kept[a][which].get("found", {}), kept[b][which].get("found", {})
        same = [q for q in fa if q in fb and fa[q] == fb[q]]
        diff = [q for q in fa if q in fb and fa[q] != fb[q]]
        log(f"{which}: {len(same)} of {len(fa)} questions found the same papers in the same order in {a} and {b}"
            + (f"; different: {diff}" if diff else ""))  # fmt: skip
        differ += len(diff) + len(set(fa) ^ set(fb))
    return differ


def first_time(size: int, label: str, warm: bool = True) -> dict[str, Any]:
    """First-time ``search`` and ``ask`` latencies at ``size`` papers (random vectors, embedded), each in its own
    new process."""
    qs = first_time_questions()
    data_dir = random_store(size)
    # one string hash seed for every run: ties between papers are broken in the order sets of ids iterate in, which
    # follows the process's hash seed, so two runs of the same code can order a few near-tied hits differently
    os.environ["PYTHONHASHSEED"] = "0"
    result: dict[str, Any] = {"label": label, "size": size, "questions": len(qs) - 1,
                              "measured": f"{datetime.now():%Y-%m-%d %H:%M}"}  # fmt: skip
    for which in ("search", "ask"):
        r = in_child(first_time_child, data_dir=str(data_dir), qs=qs, which=which, warm=warm)
        result[which] = r
        log(f"{label} {size:,} {which}: first-time p50 {statistics.median(r['first_ms']):.1f} / p95 "
            f"{pct(r['first_ms'], 0.95):.1f} ms; again p50 {statistics.median(r['again_ms']):.1f} ms; "
            f"first ask in a new process {r['first_ask_s']:.2f} s; peak RSS {r['peak_rss_mb']:,.0f} MB")  # fmt: skip
    return result


def earlier_rows(section: str, results: dict[str, dict[str, Any]]) -> list[str]:
    """The table rows of the report's first-time section whose runs are no longer kept (measured on another
    machine, or before its cache was emptied): written as they were, before the kept runs' rows."""
    labels = {r["label"] for r in results.values()}
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| code ", "| ---"))
    ]
    return [row for row in rows if row.split("|")[1].strip() not in labels]


def first_time_report(results: dict[str, dict[str, Any]], earlier: Sequence[str] = ()) -> list[str]:
    if not results and not earlier:
        return []
    lines = [
        "",
        "## First-time questions at 50k papers (issue 25)",
        "",
        "A store of the first N papers of `corpus_dev.jsonl` (real titles and abstracts, embedded mode) with one "
        "seeded random vector per paper (`--first-time`: no embedding is needed, so only the timings mean "
        "anything; the dense neighbours are arbitrary). Each row is two new processes: one asks one question and "
        "then searches each of the other questions once (first time) and then all of them again; the other does "
        "the same with extractive `ask`. The first `ask` is timed from opening the store (as `askpapers serve` "
        "does; since b42d793 a store larger than the warm-up's 5,000 papers is not warmed) to the answer, the "
        "model already loaded. "
        f"Targets: search p50 ≤ {FIRST_TARGETS['search_p50']:.0f} ms, p95 ≤ {FIRST_TARGETS['search_p95']:.0f} ms; "
        f"ask p50 ≤ {FIRST_TARGETS['ask_p50']:.0f} ms, p95 ≤ {FIRST_TARGETS['ask_p95']:.0f} ms; first ask ≤ "
        f"{FIRST_TARGETS['first_ask_s']:.0f} s.",
        "",
        "| code | papers | questions | search p50 / p95 (first time) | ask p50 / p95 (first time) "
        "| again: search / ask p50 | first ask in a new process | peak RSS | measured |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *earlier,
    ]
    for r in sorted(results.values(), key=lambda r: (r["size"], r["measured"])):
        s, a = r["search"], r["ask"]
        first = max(s["first_ask_s"], a["first_ask_s"])
        lines.append(
            f"| {r['label']} | {r['size']:,} | {r['questions']} "
            f"| {statistics.median(s['first_ms']):.1f} / {pct(s['first_ms'], 0.95):.1f} ms "
            f"| {statistics.median(a['first_ms']):.1f} / {pct(a['first_ms'], 0.95):.1f} ms "
            f"| {statistics.median(s['again_ms']):.1f} / {statistics.median(a['again_ms']):.1f} ms "
            f"| {s['first_ask_s']:.2f} s, {a['first_ask_s']:.2f} s (worst {first:.2f} s) "
            f"| {max(s['peak_rss_mb'], a['peak_rss_mb']):,.0f} MB | {r['measured']} |"
        )
    return lines


def run_one(mode: str, corpus: str, data_dir: str, port: int, qs: list[str]) -> dict[str, Any]:
    """In a child process: ingest into a fresh store, then time queries."""
    import chromadb  # noqa: F401  (imported before the clock starts)

    from askpapers.rag import AskPapers
    from askpapers.rag.settings import get_settings
    from askpapers.vectorstore import ingest
    from askpapers.vectorstore.lexical import sync_lexical

    server: dict[str, Any] = {"chroma_host": "127.0.0.1", "chroma_port": port} if mode == "server" else {}
    store = store_settings(data_dir=Path(data_dir), collection="scale", **server)
    emb = warm_embedder(embedder_threads())
    t = time.perf_counter()
    report = ingest([corpus], store, progress=False, embedder=emb)
    ingest_s = time.perf_counter() - t
    ingest_rss = own_peak_rss_mb()
    app = AskPapers(get_settings().model_copy(update={"store": store}))
    t = time.perf_counter()
    app.search(qs[0])  # opens the store and (re)builds the BM25 index from it
    first_s = time.perf_counter() - t
    app.ask(qs[0], mode="extractive")
    search_ms, ask_ms, cited = time_queries(app, qs)
    t = time.perf_counter()  # a rebuild of the BM25 index from the store, as after another process's ingest
    sync_lexical(app.store_index.store, store, force=True)
    rebuild_s = time.perf_counter() - t
    return {
        "papers": report.total_papers,
        "added": report.added,
        "chunks": report.chunks,
        "ingest_s": ingest_s,
        "ingest_rss_mb": ingest_rss,
        "first_query_s": first_s,
        "bm25_rebuild_s": rebuild_s,
        "search_ms": search_ms,
        "ask_ms": ask_ms,
        "mean_cited": cited / len(qs),
    }


def measure(mode: str, size: int, qs: list[str]) -> dict[str, Any]:
    from tests.chroma_server import ChromaServer

    source = "precomputed" if size >= PRECOMPUTED_FROM else "model"
    corpus = precomputed(size) if source == "precomputed" else first_n(size)
    with tempfile.TemporaryDirectory(prefix=f"askpapers-scale-{mode}-{size}-", dir=CACHE) as tmp:
        data_dir = Path(tmp) / "local"
        server = ChromaServer(Path(tmp) / "server-data").start() if mode == "server" else None
        try:
            log(f"{mode} {size:,}: ingest ({source}) and queries in a child process")
            result = in_child(run_one, mode=mode, corpus=str(corpus), data_dir=str(data_dir),
                              port=server.port if server else 0, qs=qs)  # fmt: skip
            if server is not None and server.proc is not None:
                result["server_rss_mb"] = vm_hwm_mb(server.proc.pid) or 0.0
        finally:
            if server is not None:
                server.stop()
        result["disk_mb"] = dir_size_mb(Path(tmp))
        result["lexical_mb"] = sum(p.stat().st_size for p in data_dir.glob("*.lexical.sqlite")) / 2**20
    result.update(mode=mode, size=size, source=source, measured=f"{datetime.now():%Y-%m-%d %H:%M}")
    search_p50, ask_p50 = statistics.median(result["search_ms"]), statistics.median(result["ask_ms"])
    rate = result["papers"] / result["ingest_s"]
    log(f"{mode} {size:,}: {rate:.1f} papers/s, search p50 {search_p50:.1f} ms, ask p50 {ask_p50:.1f} ms")
    return result


def report(results: dict[str, dict[str, Any]], command: str) -> str:
    v = versions()
    lines = [
        "# askpapers at scale: 1k, 10k and 50k papers, embedded and on a Chroma server",
        "",
        f"Machine: {machine()}. Packages: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        f"Command: `make bench-scale` → `{command}` (`--sizes` and `--modes` re-measure part of the table; "
        "`--report` rewrites this file from the kept results). Corpus: the first N papers of "
        "`../shared/datasets/conference/corpus_dev.jsonl` (title + abstract). Each run is a fresh store and a fresh "
        f"child process. Latencies are over {len(questions())} questions (the conference gold questions and two "
        "more), after one warm-up; `ask` is extractive. Server mode is `chroma run` on 127.0.0.1 (started by the "
        "benchmark) with askpapers as an HttpClient; its disk figure includes the server's data directory.",
        "",
        "| papers | mode | embeddings | ingest | papers/s | chunks | first query (builds BM25) | BM25 rebuild "
        "| search p50 / p95 | ask p50 / p95 | peak RSS askpapers | peak RSS server | on disk | measured |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key in sorted(results, key=lambda k: (results[k]["size"], results[k]["mode"])):
        r = results[key]
        s, a = r["search_ms"], r["ask_ms"]
        server = f"{r['server_rss_mb']:,.0f} MB" if "server_rss_mb" in r else "—"
        rate = r["papers"] / r["ingest_s"]
        lines.append(
            f"| {r['papers']:,} | {r['mode']} | {r['source']} | {r['ingest_s']:.0f} s | {rate:.1f} "
            f"| {r['chunks']:,} | {r['first_query_s']:.1f} s | {r['bm25_rebuild_s']:.1f} s "
            f"| {statistics.median(s):.1f} / {pct(s, 0.95):.1f} ms "
            f"| {statistics.median(a):.1f} / {pct(a, 0.95):.1f} ms "
            f"| {r['peak_rss_mb']:,.0f} MB | {server} | {r['disk_mb']:,.0f} MB | {r['measured']} |"
        )
    big = [r for r in results.values() if r["size"] >= 49_000]  # the 50k runs (49,968 distinct papers)
    lines += ["", "Targets at 50k papers (search p50 ≤ 50 ms, ask p50 ≤ 300 ms, peak RSS ≤ 2.5 GB):", ""]
    if not big:
        lines.append("- not measured yet")
    for r in sorted(big, key=lambda r: r["mode"]):
        checks = {
            "search p50": (statistics.median(r["search_ms"]), TARGETS["search_p50_ms"], "ms"),
            "ask p50": (statistics.median(r["ask_ms"]), TARGETS["ask_p50_ms"], "ms"),
            "peak RSS": (r["peak_rss_mb"], TARGETS["peak_rss_mb"], "MB"),
        }
        parts = [
            f"{name} {got:,.1f} {unit} {'✓' if got <= want else '✗'}" for name, (got, want, unit) in checks.items()
        ]
        lines.append(f"- {r['mode']}: " + "; ".join(parts))
    lines += [
        "",
        "The peak RSS of askpapers is that of the child process that ingested and then answered (it holds the "
        "embedder, Chroma's client and, in embedded mode, Chroma's HNSW index). Ingest with the model is bound by "
        "the embedder (see docs/benchmarks.md); with precomputed embeddings it runs at Chroma's write speed.",
    ]
    return "\n".join(lines) + "\n"


def splice(old: str, heading: str, lines: list[str]) -> str:
    """``old`` with its section under ``heading`` (up to the next ``## `` heading) replaced by ``lines``, or with
    them appended when it has no such section."""
    new = "\n".join(lines).rstrip("\n") + "\n"
    start = old.find("\n" + heading)
    if start < 0:
        return old.rstrip("\n") + "\n\n" + new
    end = old.find("\n## ", start + 1)
    return old[: start + 1] + new + (old[end:] if end >= 0 else "")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    ap.add_argument("--modes", nargs="+", choices=["embedded", "server"], default=["embedded", "server"])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks-scale.md")
    ap.add_argument("--report", action="store_true", help="only rewrite the report from the kept results")
    ap.add_argument("--compare", nargs=2, metavar="KEY", help="compare the first-time results of two kept runs "
                    "(keys LABEL-SIZE, as kept in scale-first-time.json); exit 1 when a question differs")  # fmt: skip
    ap.add_argument("--no-warm", action="store_true", help="--first-time without the background warm-up (for "
                    "--compare: it reads papers' vectors alongside the questions, and a few near-tied hits then come "
                    "in another order from run to run)")  # fmt: skip
    ap.add_argument("--first-time", metavar="LABEL", help="first-time questions on random-vector stores of --sizes "
                    "(embedded), kept under LABEL (for example the commit measured)")  # fmt: skip
    ap.add_argument("--large", type=int, nargs="+", metavar="N", help="N papers (real, then synthetic) on a `chroma "
                    "run` server: ingest, the BM25 index's rebuild and incremental update, first-time questions "
                    "(bench.scale_large)")  # fmt: skip
    ap.add_argument("--no-rebuild", action="store_true", help="with --large: leave out the timed full "
                    "rebuild of the BM25 index (the ingest keeps it up to date; at 1M papers a rebuild takes about "
                    "half an hour)")  # fmt: skip
    args = ap.parse_args(argv)
    if not CORPUS.exists():
        ap.error(f"{CORPUS} is missing (the shared datasets sit beside the project)")
    CACHE.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    qs = questions()
    if args.compare:
        return 1 if compare(json.loads(FIRST_RESULTS.read_text()), *args.compare) else 0
    if args.large:
        from bench.scale_large import LARGE_HEADING, large, large_section, plot
        from bench.synthetic import SHARD

        if any(size % SHARD for size in sorted(args.large)[:-1]):
            ap.error(f"--large: every size but the largest is a multiple of {SHARD:,} (the store grows by shards)")

        kept_large = json.loads(LARGE_RESULTS.read_text()) if LARGE_RESULTS.exists() else {}
        for size in [] if args.report else sorted(args.large):
            kept_large[str(size)] = large(
                size, CORPUS, CACHE, first_time_questions(), max(args.large), rebuild=not args.no_rebuild
            )
            LARGE_RESULTS.write_text(json.dumps(kept_large, indent=1))
        first_kept = json.loads(FIRST_RESULTS.read_text()) if FIRST_RESULTS.exists() else {}
        plot(kept_large, first_kept, args.out.with_suffix(".png"))
        old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        args.out.write_text(splice(old, LARGE_HEADING, large_section(old, kept_large)), encoding="utf-8")
        log(f"wrote {args.out} and {args.out.with_suffix('.png').name}")
        return 0
    if args.first_time:
        kept = json.loads(FIRST_RESULTS.read_text()) if FIRST_RESULTS.exists() else {}
        for size in args.sizes:
            kept[f"{args.first_time}-{size}"] = first_time(size, args.first_time, warm=not args.no_warm)
            FIRST_RESULTS.write_text(json.dumps(kept, indent=1))
        # (the section of its own in the report: the other rows' results may be kept on another machine)
        # (and the notes under it, from its first "### " heading on, are kept)
        old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        head, _, section = old.partition("\n## First-time questions")
        notes = section[section.find("\n### ") :] if "\n### " in section else ""
        table = section[: section.find("\n### ")] if notes else section
        text = head.rstrip("\n") + "\n" + "\n".join(first_time_report(kept, earlier_rows(table, kept))) + "\n" + notes
        args.out.write_text(text, encoding="utf-8")
        log(f"wrote {args.out}")
        return 0
    for size in [] if args.report else args.sizes:
        for mode in args.modes:
            results[f"{mode}-{size}"] = measure(mode, size, qs)
            RESULTS.write_text(json.dumps(results, indent=1))
    # the sections after the table (first-time questions, the large runs, their notes) are kept as they are
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    cut = old.find("\n## ")
    first = json.loads(FIRST_RESULTS.read_text()) if FIRST_RESULTS.exists() else {}
    tail = old[cut:] if cut >= 0 else "\n".join(["", *first_time_report(first)])
    write_report(args.out, report(results, command_line("scale", [])).rstrip("\n") + "\n" + tail.lstrip("\n"))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
