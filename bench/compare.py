"""Side by side (``make bench``): askpapers against the plain LangChain "chat with your docs" recipe and BM25 alone.

Usage: .venv/bin/python -m bench.compare [--limit N] [--skip-quality] [--skip-speed] [--out docs/benchmarks.md]

- askpapers: ``ask`` (extractive) and ``search``, through ``rag.evaluation.evaluate`` (eval stores cached in the
  default eval cache, ~/.cache/askpapers/eval), so its numbers are those of ``askpapers eval``.
- recipe: ``langchain_chroma.Chroma.from_documents(docs, embedding=E)`` with E a LangChain ``Embeddings`` over
  askpapers' own ONNX embedder, one Document per paper (the text askpapers ingests), persisted in a temp dir,
  then ``.as_retriever(search_kwargs={"k": 4})``; its top 4 is its answer (:mod:`bench.recipe`).
- BM25: askpapers' derived SQLite FTS5 index of the same eval store, alone.

Quality on the dev questions (bundled corpus), the conference "which papers" questions (keyword pool) and SciFact
(BEIR train split): :mod:`bench.quality_dev`, :mod:`bench.quality_conference`, :mod:`bench.quality_scifact`; speed
on ICML 2024 (2,610 papers): :mod:`bench.speed`. The speed measurements of each system run in a fresh child
process of their own, so each has its own peak RSS. Reads ../shared, never writes there; everything except the eval
cache goes to temporary directories.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from bench.harness import ROOT, SHARED, Section, command_line, log, machine, peak_rss_mb, versions, write_report
from bench.quality_conference import quality_conference
from bench.quality_dev import quality_dev
from bench.quality_scifact import quality_scifact
from bench.recipe import RECIPE_K
from bench.speed import speed


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions of each gold set")
    ap.add_argument("--skip-speed", action="store_true", help="no speed measurements")
    ap.add_argument("--skip-quality", action="store_true", help="no quality measurements")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md", help="the Markdown report")
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    try:
        args.out.resolve().relative_to(SHARED.resolve())
        ap.error(f"--out must not be under {SHARED}")
    except ValueError:
        pass
    return args


def timed(run: Callable[[], Section]) -> Section:
    t = time.perf_counter()
    sec = run()
    sec.seconds = time.perf_counter() - t
    return sec


def run_sections(args: argparse.Namespace, cache: Path) -> list[Section]:
    sections: list[Section] = []
    with tempfile.TemporaryDirectory(prefix="askpapers-compare-") as tmpdir:
        tmp = Path(tmpdir)
        if not args.skip_quality:
            runs: list[Callable[[], Section]] = [
                lambda: quality_dev(args.limit, cache, tmp),
                lambda: quality_conference(args.limit, cache, tmp)[0],
                lambda: quality_scifact(args.limit, cache, tmp),
            ]
            for run in runs:
                sec = timed(run)
                sections.append(sec)
                log(f"{sec.title}: done in {sec.seconds:.0f} s")
        if not args.skip_speed:
            sections.append(timed(lambda: speed(tmp)))
    return sections


def header(started: datetime, command: str, wall: float, cache: Path, limit: int | None) -> list[str]:
    head = [
        "# askpapers side by side: the plain LangChain + Chroma recipe and BM25 alone",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} on {machine()}.",
        "",
        "Packages: " + ", ".join(f"{k} {val}" for k, val in versions().items()) + ".",
        "",
        f"Command: `make bench` → `{command}` (wall time {wall / 60:.1f} min; peak RSS of the benchmark process "
        f"{peak_rss_mb():,.0f} MB; eval stores cached in `{cache}`).",
        "",
        "- **askpapers**: extractive `ask` (its cited set) and hybrid `search` (dense chunks + BM25, reciprocal-rank "
        "fusion), over eval stores built by `askpapers.rag.evaluation.evaluate`, so its quality figures are those of "
        "`askpapers eval`.",
        f"- **recipe**: `Chroma.from_documents(docs, embedding=E)` with E a LangChain `Embeddings` over askpapers' "
        "own ONNX embedder (all-MiniLM-L6-v2 int8), one Document per paper (the text askpapers ingests: real title, "
        f'then abstract; metadata `{{"id": …}}`), persisted in a temp dir, then '
        f'`.as_retriever(search_kwargs={{"k": {RECIPE_K}}})`; its top {RECIPE_K} is its answer.',
        "- **BM25**: askpapers' derived SQLite FTS5 index (Porter stemming) of the same eval store, on its own.",
    ]
    if limit is not None:
        head += ["", f"**Quick run: only the first {limit} questions of each gold set.**"]
    return head


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from askpapers.rag.evaluation.evaluate import default_cache

    t0 = time.perf_counter()
    started = datetime.now()
    cache = default_cache()
    command = command_line("compare", argv)
    sections = run_sections(args, cache)
    wall = time.perf_counter() - t0
    body = []
    for sec in sections:
        body += ["", f"## {sec.title}", "", *sec.lines, "", f"*Section time: {sec.seconds:.0f} s.*"]
    text = "\n".join(header(started, command, wall, cache, args.limit) + body) + "\n"
    write_report(args.out, text)
    print(text)
    log(f"wrote {args.out} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
