"""Ingest throughput against its bound: the raw ONNX model on the same texts (`python -m bench.ingest_ratio N`).

Takes the first N papers of ../shared/datasets/conference/icml2024.jsonl and, with one warmed embedder, times:
the raw model on one text per paper (title + abstract, cut at 256 tokens, as the LangChain recipe embeds), the raw
model on exactly the chunk texts askpapers' ingest embeds, and a full ingest into a fresh embedded store.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.harness import CONFERENCE, store_settings, warm_embedder
from bench.recipe import page_content

CORPUS = CONFERENCE / "icml2024.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("n", type=int, nargs="?", default=1000, help="papers (default 1000)")
    args = ap.parse_args()
    import chromadb  # noqa: F401  (imported before any clock starts)

    from askpapers.vectorstore.parse import parse_paths
    from askpapers.vectorstore.pipeline import chunk_batch, ingest

    with tempfile.TemporaryDirectory(prefix="askpapers-ratio-") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        lines = CORPUS.read_text(encoding="utf-8").splitlines()[: args.n]
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        emb = warm_embedder()
        papers = parse_paths([corpus]).papers
        per_paper = [page_content(p) for p in papers]
        _, chunk_texts = chunk_batch(papers, emb, store_settings())
        t = time.perf_counter()
        emb.embed(per_paper)
        raw_paper = time.perf_counter() - t
        t = time.perf_counter()
        emb.embed(chunk_texts)
        raw_chunks = time.perf_counter() - t
        t = time.perf_counter()
        report = ingest([corpus], store_settings(data_dir=Path(tmp) / "store"), progress=False, embedder=emb)
        seconds = time.perf_counter() - t
    n = len(papers)
    print(f"{n} papers, {report.chunks} chunks: ingest {n / seconds:.1f}/s; raw model on the chunk texts "
          f"{n / raw_chunks:.1f}/s (ingest {raw_chunks / seconds:.0%}); raw model on one text per paper "
          f"{n / raw_paper:.1f}/s (ingest {raw_paper / seconds:.0%})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
