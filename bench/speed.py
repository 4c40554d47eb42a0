"""Speed on ICML 2024 (2,610 papers): ingest rates, warm latency, cold starts, memory and disk, askpapers against
the recipe. Each system's ingest and latency run in a fresh child process of their own, so each has its own peak RSS.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from bench.cold_start import ColdStarts, cold_starts
from bench.harness import (
    BUNDLED,
    CONFERENCE,
    Section,
    dir_size_mb,
    embedder_threads,
    in_child,
    load_average,
    log,
    pct,
    ratio,
    store_settings,
    time_queries,
    warm_embedder,
)
from bench.recipe import RECIPE_K, page_content, recipe_embeddings

SPEED_CORPUS = CONFERENCE / "icml2024.jsonl"
WARMUP_QUESTION = "Which papers study representation learning?"
TOPICS = (
    "use information bottleneck", "are about federated learning", "study diffusion models",
    "use reinforcement learning from human feedback", "are about graph neural networks", "study contextual bandits",
    "are about large language model alignment", "study out-of-distribution detection", "use the Koopman operator",
    "are about quantum machine learning", "study mixture of experts", "are about causal inference",
    "study in-context learning", "are about differential privacy", "use optimal transport",
    "study adversarial robustness", "are about time series forecasting", "study sparse autoencoders",
    "are about protein design", "use knowledge distillation", "study contrastive learning", "are about meta-learning",
    "use normalizing flows", "study neural architecture search", "are about continual learning", "study model pruning",
    "use quantization", "are about offline reinforcement learning", "study Bayesian optimization",
    "are about Gaussian processes", "use variational inference", "study domain adaptation",
    "are about semi-supervised learning", "study self-supervised learning", "use vision transformers",
    "are about speculative decoding", "study chain-of-thought reasoning", "are about retrieval-augmented generation",
    "study fairness in machine learning", "use score matching", "are about neural ODEs", "study imitation learning",
    "are about multi-agent reinforcement learning", "use low-rank adaptation", "study membership inference attacks",
    "are about equivariant neural networks", "study mechanistic interpretability", "are about molecule generation",
    "use stochastic gradient descent", "study scaling laws",
)  # fmt: skip
QUESTIONS = [f"Which papers {t}?" for t in TOPICS]
NOTE = (
    "askpapers ingests sentence windows of up to 256 tokens (chunks, no overlap) "
    "with the title prefixed, plus one record per paper and a BM25 index, so it embeds every token of a long "
    "abstract; the recipe embeds one text per paper, which the embedder cuts at 256 tokens. That extra text "
    "(abstracts longer than 256 tokens get a second chunk) is what separates the two raw-embedder rows; the "
    "rest of the gap to the chunk-text row is Chroma's writes, which hold the GIL. "
    "Both load the embedder before the clock starts and use the same one. Each system's ingest and "
    "latency run in a fresh child process, so their peak RSS figures are their own."
)


# -- each in a child process of its own ---------------------------------------------------------------------------
def speed_raw_embedder(corpus: str) -> dict[str, Any]:
    """The ONNX model alone: on one text per paper (as the recipe embeds), and on the exact chunk texts
    askpapers' ingest embeds (its bound: ingest cannot be faster than embedding those)."""
    from askpapers.vectorstore.parse import parse_paths
    from askpapers.vectorstore.pipeline import chunk_batch

    papers = parse_paths([corpus]).papers
    texts = [page_content(p) for p in papers]
    emb = warm_embedder()
    t = time.perf_counter()
    emb.embed(texts)
    seconds = time.perf_counter() - t
    _, chunk_texts = chunk_batch(papers, emb, store_settings())
    t = time.perf_counter()
    emb.embed(chunk_texts)
    return {"n": len(texts), "seconds": seconds, "chunks": len(chunk_texts), "chunk_seconds": time.perf_counter() - t}


def speed_askpapers(data_dir: str, corpus: str, questions: list[str]) -> dict[str, Any]:
    import chromadb  # noqa: F401  (imported before the clock starts, as the recipe's import of langchain_chroma does)

    from askpapers.rag import AskPapers
    from askpapers.rag.settings import get_settings
    from askpapers.vectorstore import ingest

    store = store_settings(data_dir=Path(data_dir), default_corpus=BUNDLED)
    emb = warm_embedder(embedder_threads())  # the model is loaded before the clock starts, for both systems
    t = time.perf_counter()
    report = ingest([corpus], store, progress=False, embedder=emb)
    seconds = time.perf_counter() - t
    app = AskPapers(get_settings().model_copy(update={"store": store}))
    app.search(WARMUP_QUESTION)
    app.ask(WARMUP_QUESTION, mode="extractive")
    search_ms, ask_ms, found = time_queries(app, questions)
    return {
        "n": report.added,
        "chunks": report.chunks,
        "seconds": seconds,
        "search_ms": search_ms,
        "ask_ms": ask_ms,
        "mean_cited": found / len(questions),
        "disk_mb": dir_size_mb(Path(data_dir)),
    }


def speed_recipe(persist_dir: str, corpus: str, questions: list[str]) -> dict[str, Any]:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    from askpapers.vectorstore.parse import parse_paths

    embeddings = recipe_embeddings(warm_embedder())
    t = time.perf_counter()
    papers = parse_paths([corpus]).papers  # reading the file counts, as it does in askpapers' ingest
    docs = [Document(page_content=page_content(p), metadata={"id": p.paper_id}) for p in papers]
    db = Chroma.from_documents(docs, embedding=embeddings, persist_directory=persist_dir)
    seconds = time.perf_counter() - t
    retriever = db.as_retriever(search_kwargs={"k": RECIPE_K})
    retriever.invoke(WARMUP_QUESTION)
    invoke_ms = []
    for q in questions:
        t = time.perf_counter()
        retriever.invoke(q)
        invoke_ms.append((time.perf_counter() - t) * 1000)
    return {"n": len(docs), "seconds": seconds, "invoke_ms": invoke_ms, "disk_mb": dir_size_mb(Path(persist_dir))}


# -- the section ----------------------------------------------------------------------------------------------------
def latency_rows(what: str, ours: list[float], theirs: list[float]) -> list[str]:
    p50, t50 = statistics.median(ours), statistics.median(theirs)
    p95, t95 = pct(ours, 0.95), pct(theirs, 0.95)
    return [
        f"| {what}, {len(ours)} questions: p50 | {p50:.1f} ms | {t50:.1f} ms | {ratio(p50, t50)} |",
        f"| … p95 | {p95:.1f} ms | {t95:.1f} ms | {ratio(p95, t95)} |",
    ]


def speed_table(raw: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], cold: ColdStarts) -> list[str]:
    n = raw["n"]
    raw_rate, our_rate, their_rate = n / raw["seconds"], ours["n"] / ours["seconds"], theirs["n"] / theirs["seconds"]
    chunk_rate = n / raw["chunk_seconds"]
    i_ms = theirs["invoke_ms"]
    return [
        "| what | askpapers | LangChain + Chroma recipe | askpapers ÷ recipe |",
        "| --- | --- | --- | --- |",
        f"| ingest {n:,} abstracts into a fresh store | {ours['seconds']:.1f} s, **{our_rate:.1f} abstracts/s** "
        f"({ours['chunks']:,} chunks) | {theirs['seconds']:.1f} s, **{their_rate:.1f} abstracts/s** ({theirs['n']:,} "
        f"documents) | {ratio(our_rate, their_rate)} the rate |",
        f"| raw ONNX embedder alone, on the {raw['chunks']:,} chunk texts askpapers' ingest embeds "
        f"| {raw['chunk_seconds']:.1f} s, {chunk_rate:.1f} abstracts/s; **ingest reaches "
        f"{our_rate / chunk_rate:.0%} of it** | | |",
        f"| raw ONNX embedder alone, one text per paper (cut at 256 tokens, as the recipe embeds) "
        f"| {raw['seconds']:.1f} s, {raw_rate:.1f} abstracts/s; ingest reaches {our_rate / raw_rate:.0%} of it "
        f"| | {ratio(raw_rate, their_rate)} the recipe's ingest rate |",
        *latency_rows("warm `search` (k = 10) vs recipe `retriever.invoke` (k = 4)", ours["search_ms"], i_ms),
        *latency_rows("warm extractive `ask` vs recipe `retriever.invoke`", ours["ask_ms"], i_ms),
        f'| cold start, bundled corpus: `askpapers ask "…"` vs a new Python process that opens the recipe\'s '
        f"persisted store and invokes its retriever (median of 3) | {cold.ours_s:.2f} s | {cold.theirs_s:.2f} s "
        f"| {ratio(cold.ours_s, cold.theirs_s)} |",
        f"| peak RSS of that cold process | {cold.ours_rss_mb:,.0f} MB | {cold.theirs_rss_mb:,.0f} MB "
        f"| {ratio(cold.ours_rss_mb, cold.theirs_rss_mb)} |",
        f"| peak RSS of the ingest + query process | {ours['peak_rss_mb']:,.0f} MB | {theirs['peak_rss_mb']:,.0f} MB "
        f"| {ratio(ours['peak_rss_mb'], theirs['peak_rss_mb'])} |",
        f"| store on disk | {ours['disk_mb']:,.1f} MB | {theirs['disk_mb']:,.1f} MB "
        f"| {ratio(ours['disk_mb'], theirs['disk_mb'])} |",
        f"| peak RSS of the raw-embedder process | {raw['peak_rss_mb']:,.0f} MB | | |",
    ]


def speed(tmp: Path) -> Section:
    sec = Section("Speed (ICML 2024: 2,610 papers, title + abstract)")
    load_before = load_average()
    corpus = str(SPEED_CORPUS)
    log("speed: raw ONNX embedder (child process)")
    raw = in_child(speed_raw_embedder, corpus=corpus)
    log(f"speed: raw embedder {raw['n'] / raw['seconds']:.1f} texts/s; askpapers ingest + latency (child process)")
    ours = in_child(speed_askpapers, data_dir=str(tmp / "speed-askpapers"), corpus=corpus, questions=QUESTIONS)
    log(f"speed: askpapers ingest {ours['n'] / ours['seconds']:.1f}/s; recipe ingest + latency (child process)")
    theirs = in_child(speed_recipe, persist_dir=str(tmp / "speed-recipe"), corpus=corpus, questions=QUESTIONS)
    log(f"speed: recipe ingest {theirs['n'] / theirs['seconds']:.1f}/s; cold starts")
    cold = cold_starts(tmp)
    sec.lines += [
        f"Load average (1/5/15 min) before: {load_before}; after: {load_average()}. Ratios are askpapers ÷ recipe, "
        "measured in this run (for rates higher is better; for times, memory and disk lower is better).",
        "",
        *speed_table(raw, ours, theirs, cold),
        "",
        f"askpapers' extractive `ask` cited {ours['mean_cited']:.1f} papers per question on average; the recipe "
        f"always returns {RECIPE_K}. " + NOTE,
    ]
    return sec
