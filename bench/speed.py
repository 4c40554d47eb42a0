"""Speed figures for the README (``make bench-speed``): ingest throughput, raw embedder throughput,
warm ``search``/``ask`` latency and cold ``askpapers ask`` latency.

Usage: python bench/speed.py [--conference PATH] [--out docs/benchmarks-core.md]
Reads ../shared/datasets/conference/icml2024.jsonl (2,610 papers) when present; writes stores to a temp dir.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.api import AskPapers  # noqa: E402
from rag.settings import RetrievalSettings, Settings  # noqa: E402
from vectorstore.config import StoreSettings  # noqa: E402
from vectorstore.embed import get_embedder  # noqa: E402
from vectorstore.pipeline import ingest  # noqa: E402

CORPUS = ROOT / "data" / "icml2026"
QUESTIONS = [
    "Which papers use information bottleneck?",
    "Which papers are about federated learning?",
    "Which papers study diffusion models?",
    "Which papers use reinforcement learning from human feedback?",
    "Which papers are about graph neural networks?",
    "Which papers study contextual bandits?",
    "Which papers are about large language model alignment?",
    "Which papers study out-of-distribution detection?",
    "Which papers use the Koopman operator?",
    "Which papers are about quantum computing?",
    "What rate gap does WaterSIC reach?",
    "Which papers study mixture of experts?",
    "Which papers are about causal inference?",
    "Which papers study in-context learning?",
    "Which papers are about differential privacy?",
    "Which papers use optimal transport?",
    "Which papers study adversarial robustness?",
    "Which papers are about time series forecasting?",
    "Which papers study sparse autoencoders?",
    "Which papers are about protein design?",
]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def settings_for(d: Path) -> Settings:
    return Settings(store=StoreSettings(data_dir=d, default_corpus=CORPUS), retrieval=RetrievalSettings())


def measure_store(name: str, paths: list[Path], n_papers: int, rows: list[str], tmp: Path) -> None:
    s = settings_for(tmp / name)
    t = time.perf_counter()
    report = ingest(paths, s.store, progress=False)
    dt = time.perf_counter() - t
    rows.append(
        f"| ingest {name} | {n_papers} papers, {report.chunks} chunks | {dt:.1f} s | {n_papers / dt:.1f} abstracts/s |"
    )
    app = AskPapers(s)
    app.ask(QUESTIONS[0])
    app.search(QUESTIONS[0])
    for label, fn in (("search", lambda q: app.search(q, 10)), ("ask (extractive)", lambda q: app.ask(q))):
        lat = []
        for _ in range(3):
            for q in QUESTIONS:
                t = time.perf_counter()
                fn(q)
                lat.append((time.perf_counter() - t) * 1000)
        rows.append(
            f"| warm {label}, {name} | {len(lat)} calls "
            f"| p50 {statistics.median(lat):.0f} ms | p95 {pct(lat, 0.95):.0f} ms |"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conference", type=Path, default=ROOT.parent / "shared/datasets/conference/icml2024.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks-core.md")
    args = ap.parse_args()
    rows = ["| what | size | time | rate |", "| --- | --- | --- | --- |"]
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        measure_store("bundled ICML 2026", [CORPUS], 38, rows, tmp)
        # cold CLI: a new process answering a question on the bundled store
        env = {**os.environ, "ASKPAPERS_DATA_DIR": str(tmp / "bundled ICML 2026")}
        cold = []
        exe = str(Path(sys.executable).parent / "askpapers")
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([exe, "ask", QUESTIONS[0]], env=env, check=True, capture_output=True)
            cold.append(time.perf_counter() - t)
        rows.append(f"| cold `askpapers ask` (new process) | 3 runs | median {statistics.median(cold):.2f} s | |")
        if args.conference.exists():
            texts = [json.loads(line)["abstract"] for line in args.conference.open(encoding="utf-8")]
            emb = get_embedder()
            t = time.perf_counter()
            emb.embed(texts)
            dt = time.perf_counter() - t
            rows.append(
                f"| raw ONNX embedder, whole abstracts (≤256 tokens) | {len(texts)} texts | {dt:.1f} s "
                f"| {len(texts) / dt:.1f} abstracts/s |"
            )
            measure_store("ICML 2024", [args.conference], len(texts), rows, tmp)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(f"| peak RSS of this benchmark process | | {rss:.0f} MB | |")
    head = (
        f"# Core speed figures\n\nMeasured {date.today()} on {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM, "
        f"Python {platform.python_version()}."
        f"\nCommand: `make bench-speed` (`python bench/speed.py`).\n\n"
    )
    text = head + "\n".join(rows) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
