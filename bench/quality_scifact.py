"""Quality on SciFact (BEIR, train split): askpapers' ``eval_beir`` against the recipe's dense ranking and BM25."""

from __future__ import annotations

import time
from pathlib import Path

from bench.harness import SHARED, Section, f3, log, mean, wait_for_other_builds
from bench.recipe import doc_ids, ingested_papers, plain_rrf, recipe_store

SCIFACT = SHARED / "datasets" / "scifact"
NOTE = (
    "askpapers' row is `askpapers.rag.evaluation.evaluate.eval_beir`'s (the same as `askpapers eval`). "
    "Published reference points, "
    "on the SciFact *test* split: BM25 0.665 (BEIR paper), all-MiniLM-L6-v2 about 0.645 (MTEB)."
)


def quality_scifact(limit: int | None, cache: Path, tmp: Path) -> Section:
    from askpapers.rag.evaluation.evaluate import beir_queries, beir_records, eval_beir, eval_store, read_qrels
    from askpapers.rag.evaluation.metrics import ndcg_at, recall_at
    from askpapers.vectorstore.embed import get_embedder

    sec = Section("SciFact (BEIR, train split: claims against PubMed abstracts)")
    corpus, queries, qrels = SCIFACT / "corpus.jsonl", SCIFACT / "queries_train.jsonl", SCIFACT / "qrels_train.tsv"
    wait_for_other_builds(cache, "beir")
    log("scifact: askpapers eval_beir (builds the eval store if needed)")
    report = eval_beir(corpus, queries, qrels, cache, limit=limit)

    # the same judgements, queries and records as eval_beir
    judged = read_qrels(qrels)
    records = beir_records(corpus)
    qs = beir_queries(queries, judged, limit)
    app = eval_store("beir", records, cache)
    lexical = app.store_index.lexical
    rrf = plain_rrf(app)
    papers = ingested_papers(records, tmp, "scifact")
    log(f"scifact: recipe store of {len(papers)} papers (embedding every title + abstract)")
    t = time.perf_counter()
    db = recipe_store(papers, tmp / "recipe-scifact", get_embedder())
    log(f"scifact: recipe store built in {time.perf_counter() - t:.0f} s")
    scores: dict[str, list[tuple[float, float]]] = {"recipe": [], "rrf": [], "bm25": []}
    for q in qs:
        gains = judged[str(q.get("_id", q.get("id")))]
        for name, ranked in (
            ("recipe", doc_ids(db.similarity_search(q["text"], k=100))),
            ("rrf", rrf(q["text"], 100)),
            ("bm25", [pid for pid, _ in lexical.search(q["text"], 100)]),
        ):
            scores[name].append((ndcg_at(ranked, gains, 10), recall_at(ranked, set(gains), 100)))
    sec.lines += [
        f"{len(qs)} claims with relevance judgements, {len(records):,} abstracts (title + abstract).",
        "",
        "| retriever | nDCG@10 | R@100 |",
        "| --- | --- | --- |",
        "| askpapers `search` (hybrid + learned reranker) |"
        f" **{f3(report.summary['nDCG@10'])}** | **{f3(report.summary['R@100'])}** |",
    ]
    labels = (("recipe", "recipe dense `similarity_search(k=100)`"), ("rrf", "plain RRF hybrid (BM25 + MiniLM)"),
              ("bm25", "BM25 alone"))  # fmt: skip
    for name, label in labels:
        vals = scores[name]
        sec.lines.append(f"| {label} | {f3(mean([v[0] for v in vals]))} | {f3(mean([v[1] for v in vals]))} |")
    sec.lines += ["", NOTE]
    return sec
