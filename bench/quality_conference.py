"""Quality on the conference "which papers" questions (keyword pool): askpapers, the recipe and BM25 alone."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import CONFERENCE, Section, f3, log, mean, signed, wait_for_other_builds
from bench.recipe import RECIPE_K, doc_ids, ingested_papers, plain_rrf, recipe_store

CONF_GOLD = CONFERENCE / "gold_questions_dev.jsonl"
CONF_CORPUS = CONFERENCE / "corpus_dev.jsonl"
CONF_POOL = CONFERENCE / "keyword_pool_dev.ids"
CUTOFFS = (4, 10, 20)
SYSTEMS = ("askpapers", "recipe", "rrf", "bm25")
NAMES = {
    "askpapers": ("askpapers", "extractive `ask` citations"),
    "recipe": ("LangChain + Chroma recipe", "retriever top 4"),
    "rrf": ("plain RRF hybrid (BM25 + MiniLM)", "top 4"),
    "bm25": ("BM25 alone (askpapers' FTS5 index)", "top 4"),
}
RETRIEVERS = {
    "askpapers": "askpapers `search` (hybrid)",
    "recipe": "recipe dense `similarity_search(k=100)`",
    "rrf": "plain RRF hybrid (BM25 + MiniLM)",
    "bm25": "BM25 alone",
}
NOTE = (
    "askpapers' cited set and its R@10, R@50 and nDCG@10 are `askpapers.rag.evaluation.evaluate.eval_conference`'s "
    "(the same as "
    "`askpapers eval`); recall and nDCG drop `text_mention_only_ids` from the ranking first, as it does. "
    "A fixed top-k cutoff keeps the first k papers as returned and, like the cited sets, ignores unknown ids "
    "among them. A fixed cutoff needs k chosen in hindsight on these labels; askpapers decides per question "
    "how many papers to cite."
)


@dataclass
class Scores:
    """Per system: the cited sets' (P, R, F1, papers cited) and the rankings' scores, one entry per question."""

    cited: dict[str, list[tuple[float, float, float, int]]] = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    ranks: dict[str, list[dict[str, float]]] = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    mismatches: int = 0


def ranking_scores(raw: list[str], relevant: set[str], unknown: set[str]) -> dict[str, float]:
    """Recall@10/50 and nDCG@10 as eval_conference (unknown ids dropped from the ranking) and F1 of top-k cutoffs
    (unknown ids in the top k count neither way, as in the cited sets)."""
    from askpapers.rag.evaluation.metrics import ndcg_at, prf, recall_at

    ranked = [pid for pid in raw if pid not in unknown]
    out = {
        "R@10": recall_at(ranked, relevant, 10),
        "R@50": recall_at(ranked, relevant, 50),
        "nDCG@10": ndcg_at(ranked, dict.fromkeys(relevant, 1.0), 10),
    }
    for k in CUTOFFS:
        out[f"F1@{k}"] = prf(set(raw[:k]), relevant, unknown)[2]
    return out


def pool_records() -> list[dict[str, Any]]:
    """The same records eval_conference ingests: the keyword pool's papers of the corpus."""
    pool = {line.strip() for line in CONF_POOL.read_text(encoding="utf-8").splitlines() if line.strip()}
    records = []
    with CONF_CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in pool:
                records.append({"id": r["id"], "abstract": r["abstract"]})
    return records


def score_all(items: list[dict[str, Any]], rows: dict[str, Any], app: Any, lexical: Any, db: Any) -> Scores:
    """Each system's cited set and top-100 ranking for each question (``rows``: eval_conference's, by qid)."""
    from askpapers.rag.evaluation.metrics import prf

    retriever = db.as_retriever(search_kwargs={"k": RECIPE_K})
    rrf = plain_rrf(app)
    sc = Scores()
    for item in items:
        q = item["question"]
        relevant = set(item["relevant_ids"])
        unknown = set(item.get("text_mention_only_ids", []))
        row = rows[str(item["qid"])]
        sc.cited["askpapers"].append((row["P"], row["R"], row["F1"], int(row["cited"])))
        top4 = doc_ids(retriever.invoke(q))
        sc.cited["recipe"].append((*prf(set(top4), relevant, unknown), len(top4)))
        bm4 = [pid for pid, _ in lexical.search(q, RECIPE_K)]
        sc.cited["bm25"].append((*prf(set(bm4), relevant, unknown), len(bm4)))
        rrf_top = rrf(q, 100)
        sc.cited["rrf"].append((*prf(set(rrf_top[:RECIPE_K]), relevant, unknown), RECIPE_K))
        sc.ranks["rrf"].append(ranking_scores(rrf_top, relevant, unknown))
        ours = ranking_scores([h.paper_id for h in app.search(q, 100)], relevant, unknown)
        if any(abs(ours[k] - row[k]) > 1e-9 for k in ("R@10", "R@50", "nDCG@10")):
            sc.mismatches += 1
        sc.ranks["askpapers"].append(ours)
        sc.ranks["recipe"].append(ranking_scores(doc_ids(db.similarity_search(q, k=100)), relevant, unknown))
        sc.ranks["bm25"].append(ranking_scores([pid for pid, _ in lexical.search(q, 100)], relevant, unknown))
    return sc


def cited_table(sc: Scores, summary: dict[str, float]) -> list[str]:
    lines = [
        "**Cited set** (what each system answers with):",
        "",
        "| system | cited set | mean papers cited | mean P | mean R | mean F1 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in SYSTEMS:
        vals = sc.cited[s]
        p, r, f = (mean([v[i] for v in vals]) for i in range(3))
        n = mean([float(v[3]) for v in vals])
        summary[f"{s} F1"], summary[f"{s} R"] = f, r
        bold = "**" if s == "askpapers" else ""
        lines.append(
            f"| {NAMES[s][0]} | {NAMES[s][1]} | {n:.1f} | {f3(p)} | {bold}{f3(r)}{bold} | {bold}{f3(f)}{bold} |"
        )
    return lines


def ranking_table(
    sc: Scores, report_summary: dict[str, Any], summary: dict[str, float]
) -> tuple[list[str], tuple[float, str, int]]:
    """The rankings' table, and the best fixed cutoff of any retriever as (F1, system, k)."""
    lines = [
        "**Rankings** (each retriever's top 100):",
        "",
        "| retriever | R@10 | R@50 | nDCG@10 | " + " | ".join(f"F1 top {k}" for k in CUTOFFS) + " |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in CUTOFFS) + " |",
    ]
    best = (-1.0, "", 0)
    for s in SYSTEMS:
        m = {k: mean([row[k] for row in sc.ranks[s]]) for k in sc.ranks[s][0]} if sc.ranks[s] else {}
        if s == "askpapers":  # the figures askpapers eval prints
            m.update({k: float(report_summary[k]) for k in ("R@10", "R@50", "nDCG@10")})
        for k in CUTOFFS:
            if m.get(f"F1@{k}", -1.0) > best[0]:
                best = (m[f"F1@{k}"], s, k)
        cells = " | ".join(f3(m.get(k, 0.0)) for k in ("R@10", "R@50", "nDCG@10"))
        lines.append(f"| {RETRIEVERS[s]} | {cells} | " + " | ".join(f3(m.get(f"F1@{k}", 0.0)) for k in CUTOFFS) + " |")
        summary.update({f"{s} {k}": v for k, v in m.items()})
    summary["best fixed F1"] = best[0]
    return lines, best


def margins(summary: dict[str, float], best: tuple[float, str, int]) -> list[str]:
    ap = summary["askpapers F1"]
    return [
        "| comparison | F1 |",
        "| --- | --- |",
        f"| askpapers cited set | {f3(ap)} |",
        f"| recipe top 4 | {f3(summary['recipe F1'])} |",
        f"| best fixed top-k cutoff of any retriever ({RETRIEVERS[best[1]]}, top {best[2]}) | {f3(best[0])} |",
        f"| **margin** of askpapers over the recipe's top 4 | **{signed(ap - summary['recipe F1'])}** |",
        f"| **margin** of askpapers over the best fixed cutoff | **{signed(ap - best[0])}** |",
    ]


def quality_conference(limit: int | None, cache: Path, tmp: Path) -> tuple[Section, dict[str, float]]:
    from askpapers.rag.evaluation.evaluate import eval_conference, eval_store
    from askpapers.rag.evaluation.metrics import load_jsonl
    from askpapers.vectorstore.embed import get_embedder

    sec = Section("Conference which-papers questions (keyword pool, abstracts only)")
    items = load_jsonl(CONF_GOLD)[:limit]
    wait_for_other_builds(cache, "conference")
    log(f"conference: askpapers eval_conference over {len(items)} questions (builds the eval store if needed)")
    report = eval_conference(CONF_GOLD, CONF_CORPUS, CONF_POOL, cache, limit=limit)
    # the same records eval_conference ingests, and its (cached) store for askpapers search and BM25
    records = pool_records()
    app = eval_store("conference", records, cache)
    lexical = app.store_index.lexical
    papers = ingested_papers(records, tmp, "conference")
    log(f"conference: recipe store of {len(papers)} papers (embedding every abstract)")
    t = time.perf_counter()
    db = recipe_store(papers, tmp / "recipe-conference", get_embedder())
    log(f"conference: recipe store built in {time.perf_counter() - t:.0f} s")
    sc = score_all(items, {str(r["qid"]): r for r in report.rows}, app, lexical, db)

    n_rel = sum(len(i["relevant_ids"]) for i in items)
    summary: dict[str, float] = {}
    sec.lines += [
        f"{len(items)} questions over the {len(records):,}-paper pool ({len(papers):,} distinct abstracts; "
        f"{n_rel} relevant pairs). "
        "Labels are silver, from author keywords; `text_mention_only_ids` count neither way.",
        "",
        *cited_table(sc, summary),
        "",
    ]
    rankings, best = ranking_table(sc, report.summary, summary)
    sec.lines += [*rankings, "", *margins(summary, best), "", NOTE]
    if sc.mismatches:
        sec.lines.append(f"\nNote: askpapers `search` ranked differently from eval_conference's run on "
                         f"{sc.mismatches} question(s); the F1 cutoffs use the second run.")  # fmt: skip
    return sec, summary
