"""Side by side (``make bench``): askpapers against the plain LangChain "chat with your docs" recipe and BM25 alone.

Usage: .venv/bin/python bench/compare.py [--limit N] [--skip-quality] [--skip-speed] [--out docs/benchmarks.md]

- askpapers: ``ask`` (extractive) and ``search``, through ``rag.evaluate`` (eval stores cached in the default eval
  cache, ~/.cache/askpapers/eval), so its numbers are those of ``askpapers eval``.
- recipe: ``langchain_chroma.Chroma.from_documents(docs, embedding=E)`` with E a LangChain ``Embeddings`` over
  askpapers' own ONNX embedder, one Document per paper (the text askpapers ingests), persisted in a temp dir,
  then ``.as_retriever(search_kwargs={"k": 4})``; its top 4 is its answer.
- BM25: askpapers' derived SQLite FTS5 index of the same eval store, alone.

Quality on the dev questions (bundled corpus), the conference "which papers" questions (keyword pool) and SciFact
(BEIR train split); speed on ICML 2024 (2,610 papers). The speed measurements of each system run in a fresh child
process of their own, so each has its own peak RSS. Reads ../shared, never writes there; everything except the eval
cache goes to temporary directories.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.metadata
import json
import multiprocessing
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_chroma import Chroma
    from langchain_core.embeddings import Embeddings

    from rag.types import Answer
    from vectorstore.embed import Embedder
    from vectorstore.types import Paper

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # Chroma telemetry off for the recipe too

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
BUNDLED = ROOT / "data" / "icml2026"
DEV_GOLD = SHARED / "eval" / "dev_questions.jsonl"
CONF = SHARED / "datasets" / "conference"
CONF_GOLD = CONF / "gold_questions_dev.jsonl"
CONF_CORPUS = CONF / "corpus_dev.jsonl"
CONF_POOL = CONF / "keyword_pool_dev.ids"
SCIFACT = SHARED / "datasets" / "scifact"
SPEED_CORPUS = CONF / "icml2024.jsonl"
RECIPE_K = 4
CUTOFFS = (4, 10, 20)
COLD_QUESTION = "Which papers use information bottleneck?"
WARMUP_QUESTION = "Which papers study representation learning?"
PACKAGES = ("askpapers", "chromadb", "langchain-core", "langchain-chroma", "onnxruntime")

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
    "Which papers are about quantum machine learning?",
    "Which papers study mixture of experts?",
    "Which papers are about causal inference?",
    "Which papers study in-context learning?",
    "Which papers are about differential privacy?",
    "Which papers use optimal transport?",
    "Which papers study adversarial robustness?",
    "Which papers are about time series forecasting?",
    "Which papers study sparse autoencoders?",
    "Which papers are about protein design?",
    "Which papers use knowledge distillation?",
    "Which papers study contrastive learning?",
    "Which papers are about meta-learning?",
    "Which papers use normalizing flows?",
    "Which papers study neural architecture search?",
    "Which papers are about continual learning?",
    "Which papers study model pruning?",
    "Which papers use quantization?",
    "Which papers are about offline reinforcement learning?",
    "Which papers study Bayesian optimization?",
    "Which papers are about Gaussian processes?",
    "Which papers use variational inference?",
    "Which papers study domain adaptation?",
    "Which papers are about semi-supervised learning?",
    "Which papers study self-supervised learning?",
    "Which papers use vision transformers?",
    "Which papers are about speculative decoding?",
    "Which papers study chain-of-thought reasoning?",
    "Which papers are about retrieval-augmented generation?",
    "Which papers study fairness in machine learning?",
    "Which papers use score matching?",
    "Which papers are about neural ODEs?",
    "Which papers study imitation learning?",
    "Which papers are about multi-agent reinforcement learning?",
    "Which papers use low-rank adaptation?",
    "Which papers study membership inference attacks?",
    "Which papers are about equivariant neural networks?",
    "Which papers study mechanistic interpretability?",
    "Which papers are about molecule generation?",
    "Which papers use stochastic gradient descent?",
    "Which papers study scaling laws?",
]

# The recipe's cold start: a new Python process that opens the persisted Chroma store and runs its retriever.
RECIPE_COLD = """
import sys
from langchain_chroma import Chroma
from langchain_core.embeddings import Embeddings
from vectorstore.embed import get_embedder

class E(Embeddings):
    def __init__(self):
        self.e = get_embedder()
    def embed_documents(self, texts):
        return self.e.embed(texts).tolist()
    def embed_query(self, text):
        return self.e.embed_query(text).tolist()

db = Chroma(embedding_function=E(), persist_directory=sys.argv[1])
for d in db.as_retriever(search_kwargs={"k": 4}).invoke(sys.argv[2]):
    print(d.metadata["id"])
"""


# -- small helpers ------------------------------------------------------------------------------------------------
def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mean(values: Sequence[float]) -> float:
    return statistics.mean(values) if values else 0.0


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def f3(x: float) -> str:
    return f"{x:.3f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "—"


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def signed(x: float) -> str:
    return f"{x:+.3f}"


def dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def peak_rss_mb() -> float:
    """Peak RSS of this process (resource.getrusage; KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def own_peak_rss_mb() -> float:
    """Peak RSS of this process's own address space (VmHWM).

    A child's ru_maxrss starts at its parent's RSS at the fork, even after exec, so a child started by a big
    parent would report the parent's size; VmHWM belongs to the memory map made by exec.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return peak_rss_mb()


def versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu or platform.processor() or 'unknown CPU'}), {ram:.0f} GiB RAM, " + (
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


# -- the recipe ---------------------------------------------------------------------------------------------------
def recipe_embeddings(embedder: Embedder) -> Embeddings:
    """A LangChain ``Embeddings`` over askpapers' ONNX embedder (L2-normalised rows)."""
    from langchain_core.embeddings import Embeddings

    class AskpapersEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = embedder.embed(texts).tolist()
            return rows

        def embed_query(self, text: str) -> list[float]:
            row: list[float] = embedder.embed_query(text).tolist()
            return row

    return AskpapersEmbeddings()


def page_content(p: Paper) -> str:
    """The text askpapers embeds for a whole paper: its real title (if any), '. ', then the abstract."""
    return (f"{p.title}. " if not p.title_derived else "") + p.abstract


def ingested_papers(records: list[dict[str, Any]], tmp: Path, name: str) -> list[Paper]:
    """The papers askpapers makes of ``records`` (same parser, same merging of identical abstracts)."""
    from vectorstore.parse import parse_paths

    path = tmp / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    papers = parse_paths([path]).papers
    path.unlink()
    return papers


def recipe_store(papers: list[Paper], directory: Path, embedder: Embedder) -> Chroma:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    docs = [Document(page_content=page_content(p), metadata={"id": p.paper_id}) for p in papers]
    return Chroma.from_documents(docs, embedding=recipe_embeddings(embedder), persist_directory=str(directory))


def doc_ids(docs: Sequence[Any]) -> list[str]:
    return [str(d.metadata["id"]) for d in docs]


# -- eval stores --------------------------------------------------------------------------------------------------
def wait_for_other_builds(cache: Path, name: str) -> None:
    """Wait while another process (e.g. ``askpapers eval``) is building an eval store of this kind.

    ``eval_store`` writes and later deletes the store's corpus file around its ingest, so two builders of the same
    store at once would trip over each other.
    """
    for d in cache.glob(f"{name}-*"):
        lock = d / ".eval.ingest.lock"
        if (d / "COMPLETE").exists() or not lock.exists():
            continue
        with lock.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
                continue  # nobody holds it: an interrupted build, which eval_store resumes
            except BlockingIOError:
                log(f"another process is building {d.name}; waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
            fcntl.flock(fh, fcntl.LOCK_UN)
        for _ in range(100):  # the builder marks the store complete just after releasing the lock
            if (d / "COMPLETE").exists():
                break
            time.sleep(0.1)


# -- quality: dev questions ---------------------------------------------------------------------------------------
@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0


def recipe_answer(question: str, docs: Sequence[Any], papers: dict[str, Paper]) -> Answer:
    """The recipe's top 4 as an Answer, so rag.metrics.score_dev can score it like askpapers'.

    Its text is the retrieved context (what an LLM would be given), so a factoid counts as right when the relevant
    paper comes first and the expected figure is anywhere in the four documents: lenient to the recipe.
    """
    from rag.types import Answer, Citation

    cites = []
    for n, pid in enumerate(doc_ids(docs), 1):
        p = papers[pid]
        cites.append(Citation(n, p.paper_id, p.title, evidence=p.abstract, abstract=p.abstract, score=0.0))
    text = "\n\n".join(str(d.page_content) for d in docs)
    return Answer(question=question, text=text, citations=cites, mode="extractive", found=bool(cites))


def quality_dev(limit: int | None, cache: Path, tmp: Path) -> Section:
    from rag.evaluate import eval_dev
    from rag.metrics import load_jsonl, score_dev
    from vectorstore.embed import get_embedder
    from vectorstore.parse import parse_paths

    sec = Section("Dev questions (bundled ICML 2026 corpus)")
    items = load_jsonl(DEV_GOLD)[:limit]
    gold = DEV_GOLD
    if limit is not None:
        gold = tmp / "dev_questions.jsonl"
        gold.write_text("\n".join(json.dumps(i, ensure_ascii=False) for i in items) + "\n", encoding="utf-8")
    log(f"dev: askpapers eval_dev over {len(items)} questions")
    report = eval_dev(gold, [BUNDLED], cache)
    ours = {str(r["id"]): r for r in report.rows}

    # the recipe, over exactly the records eval_dev ingests
    records = [
        {"id": p.paper_id, "abstract": p.abstract, "venue": p.venue, "year": p.year}
        for p in parse_paths([BUNDLED]).papers
    ]
    papers = ingested_papers(records, tmp, "dev")
    log(f"dev: recipe store of {len(papers)} papers")
    db = recipe_store(papers, tmp / "recipe-dev", get_embedder())
    retriever = db.as_retriever(search_kwargs={"k": RECIPE_K})
    by_id = {p.paper_id: p for p in papers}
    theirs = {}
    for item in items:
        docs = retriever.invoke(item["question"])  # the recipe has no history: a follow-up is asked as it stands
        theirs[str(item["id"])] = score_dev(item, recipe_answer(item["question"], docs, by_id))

    kinds = ("list", "factoid", "none", "followup")
    sec.lines += [
        "| id | kind | askpapers P | R | F1 | ok | recipe top-4 P | R | F1 | ok | question |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for item in items:
        a, r = ours[str(item["id"])], theirs[str(item["id"])]
        sec.lines.append(
            f"| {item['id']} | {item['kind']} | {f3(a['P'])} | {f3(a['R'])} | {f3(a['F1'])} | {mark(bool(a['ok']))} "
            f"| {f3(r.precision)} | {f3(r.recall)} | {f3(r.f1)} | {mark(r.ok)} | {item['question']} |"
        )
    sec.lines += ["", "| measure | askpapers (extractive `ask`) | recipe (top 4) |", "| --- | --- | --- |"]
    lists = [i for i in items if i["kind"] == "list"]
    if lists:
        a_f1 = mean([ours[str(i["id"])]["F1"] for i in lists])
        r_f1 = mean([theirs[str(i["id"])].f1 for i in lists])
        sec.lines.append(f"| list questions ({len(lists)}): mean F1 | **{f3(a_f1)}** | {f3(r_f1)} |")
        a_ok = sum(bool(ours[str(i["id"])]["ok"]) for i in lists)
        r_ok = sum(theirs[str(i["id"])].ok for i in lists)
        sec.lines.append(f"| list questions with F1 ≥ 0.85 | {a_ok}/{len(lists)} | {r_ok}/{len(lists)} |")
    what = {
        "factoid": "factoid: relevant paper first and expected figure in the answer",
        "none": "none: abstains, nothing cited",
        "followup": "followup: cites only right papers, at least one",
    }
    for kind in kinds[1:]:
        group = [i for i in items if i["kind"] == kind]
        if group:
            a_ok = sum(bool(ours[str(i["id"])]["ok"]) for i in group)
            r_ok = sum(theirs[str(i["id"])].ok for i in group)
            sec.lines.append(f"| {what[kind]} | {a_ok}/{len(group)} | {r_ok}/{len(group)} |")
    verbatim = report.summary.get("evidence verbatim")
    if verbatim is not None:
        sec.lines.append(
            f"| evidence sentences verbatim in their abstract | {f3(verbatim)} | (quotes whole abstracts) |"
        )
    sec.lines += [
        "",
        "askpapers' figures are `rag.evaluate.eval_dev`'s (the same as `askpapers eval dev_questions.jsonl`); "
        "papers are matched by the first 80 characters of their abstract and scored with `rag.metrics.score_dev`. "
        "The recipe's answer is its top 4 documents; for factoids its answer text is taken to be those four "
        "documents (lenient), it has no way to abstain, and it gets a follow-up without the conversation "
        "(the plain recipe keeps no history).",
    ]
    return sec


# -- quality: conference questions ---------------------------------------------------------------------------------
def ranking_scores(raw: list[str], relevant: set[str], unknown: set[str]) -> dict[str, float]:
    """Recall@10/50 and nDCG@10 as eval_conference (unknown ids dropped from the ranking) and F1 of top-k cutoffs
    (unknown ids in the top k count neither way, as in the cited sets)."""
    from rag.metrics import ndcg_at, prf, recall_at

    ranked = [pid for pid in raw if pid not in unknown]
    out = {
        "R@10": recall_at(ranked, relevant, 10),
        "R@50": recall_at(ranked, relevant, 50),
        "nDCG@10": ndcg_at(ranked, dict.fromkeys(relevant, 1.0), 10),
    }
    for k in CUTOFFS:
        out[f"F1@{k}"] = prf(set(raw[:k]), relevant, unknown)[2]
    return out


def quality_conference(limit: int | None, cache: Path, tmp: Path) -> tuple[Section, dict[str, float]]:
    from rag.evaluate import eval_conference, eval_store
    from rag.metrics import load_jsonl, prf
    from vectorstore.embed import get_embedder

    sec = Section("Conference which-papers questions (keyword pool, abstracts only)")
    items = load_jsonl(CONF_GOLD)[:limit]
    wait_for_other_builds(cache, "conference")
    log(f"conference: askpapers eval_conference over {len(items)} questions (builds the eval store if needed)")
    report = eval_conference(CONF_GOLD, CONF_CORPUS, CONF_POOL, cache, limit=limit)

    # the same records eval_conference ingests, and its (cached) store for askpapers search and BM25
    pool = {line.strip() for line in CONF_POOL.read_text(encoding="utf-8").splitlines() if line.strip()}
    records = []
    with CONF_CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in pool:
                records.append({"id": r["id"], "abstract": r["abstract"]})
    app = eval_store("conference", records, cache)
    lexical = app.retriever.lexical
    papers = ingested_papers(records, tmp, "conference")
    log(f"conference: recipe store of {len(papers)} papers (embedding every abstract)")
    t = time.perf_counter()
    db = recipe_store(papers, tmp / "recipe-conference", get_embedder())
    log(f"conference: recipe store built in {time.perf_counter() - t:.0f} s")
    retriever = db.as_retriever(search_kwargs={"k": RECIPE_K})

    systems = ("askpapers", "recipe", "bm25")
    cited: dict[str, list[tuple[float, float, float, int]]] = {s: [] for s in systems}
    ranks: dict[str, list[dict[str, float]]] = {s: [] for s in systems}
    rows = {str(r["qid"]): r for r in report.rows}
    mismatches = 0
    for item in items:
        q = item["question"]
        relevant = set(item["relevant_ids"])
        unknown = set(item.get("text_mention_only_ids", []))
        row = rows[str(item["qid"])]
        cited["askpapers"].append((row["P"], row["R"], row["F1"], int(row["cited"])))
        top4 = doc_ids(retriever.invoke(q))
        cited["recipe"].append((*prf(set(top4), relevant, unknown), len(top4)))
        bm4 = [pid for pid, _ in lexical.search(q, RECIPE_K)]
        cited["bm25"].append((*prf(set(bm4), relevant, unknown), len(bm4)))
        ours = ranking_scores([h.paper_id for h in app.search(q, 100)], relevant, unknown)
        if any(abs(ours[k] - row[k]) > 1e-9 for k in ("R@10", "R@50", "nDCG@10")):
            mismatches += 1
        ranks["askpapers"].append(ours)
        ranks["recipe"].append(ranking_scores(doc_ids(db.similarity_search(q, k=100)), relevant, unknown))
        ranks["bm25"].append(ranking_scores([pid for pid, _ in lexical.search(q, 100)], relevant, unknown))

    names = {
        "askpapers": ("askpapers", "extractive `ask` citations"),
        "recipe": ("LangChain + Chroma recipe", "retriever top 4"),
        "bm25": ("BM25 alone (askpapers' FTS5 index)", "top 4"),
    }
    n_rel = sum(len(i["relevant_ids"]) for i in items)
    sec.lines += [
        f"{len(items)} questions over the {len(records):,}-paper pool ({len(papers):,} distinct abstracts; "
        f"{n_rel} relevant pairs). "
        "Labels are silver, from author keywords; `text_mention_only_ids` count neither way.",
        "",
        "**Cited set** (what each system answers with):",
        "",
        "| system | cited set | mean papers cited | mean P | mean R | mean F1 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    summary: dict[str, float] = {}
    for s in systems:
        vals = cited[s]
        p, r, f = (mean([v[i] for v in vals]) for i in range(3))
        n = mean([float(v[3]) for v in vals])
        summary[f"{s} F1"], summary[f"{s} R"] = f, r
        bold = "**" if s == "askpapers" else ""
        sec.lines.append(
            f"| {names[s][0]} | {names[s][1]} | {n:.1f} | {f3(p)} | {bold}{f3(r)}{bold} | {bold}{f3(f)}{bold} |"
        )
    retr = {
        "askpapers": "askpapers `search` (hybrid)",
        "recipe": "recipe dense `similarity_search(k=100)`",
        "bm25": "BM25 alone",
    }
    sec.lines += [
        "",
        "**Rankings** (each retriever's top 100):",
        "",
        "| retriever | R@10 | R@50 | nDCG@10 | " + " | ".join(f"F1 top {k}" for k in CUTOFFS) + " |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in CUTOFFS) + " |",
    ]
    best = (-1.0, "", 0)
    for s in systems:
        m = {k: mean([row[k] for row in ranks[s]]) for k in ranks[s][0]} if ranks[s] else {}
        if s == "askpapers":  # the figures askpapers eval prints
            m.update({k: float(report.summary[k]) for k in ("R@10", "R@50", "nDCG@10")})
        for k in CUTOFFS:
            if m.get(f"F1@{k}", -1.0) > best[0]:
                best = (m[f"F1@{k}"], s, k)
        cells = " | ".join(f3(m.get(k, 0.0)) for k in ("R@10", "R@50", "nDCG@10"))
        sec.lines.append(f"| {retr[s]} | {cells} | " + " | ".join(f3(m.get(f"F1@{k}", 0.0)) for k in CUTOFFS) + " |")
        summary.update({f"{s} {k}": v for k, v in m.items()})
    summary["best fixed F1"] = best[0]
    ap = summary["askpapers F1"]
    sec.lines += [
        "",
        "| comparison | F1 |",
        "| --- | --- |",
        f"| askpapers cited set | {f3(ap)} |",
        f"| recipe top 4 | {f3(summary['recipe F1'])} |",
        f"| best fixed top-k cutoff of any retriever ({retr[best[1]]}, top {best[2]}) | {f3(best[0])} |",
        f"| **margin** of askpapers over the recipe's top 4 | **{signed(ap - summary['recipe F1'])}** |",
        f"| **margin** of askpapers over the best fixed cutoff | **{signed(ap - best[0])}** |",
        "",
        "askpapers' cited set and its R@10, R@50 and nDCG@10 are `rag.evaluate.eval_conference`'s (the same as "
        "`askpapers eval`); recall and nDCG drop `text_mention_only_ids` from the ranking first, as it does. "
        "A fixed top-k cutoff keeps the first k papers as returned and, like the cited sets, ignores unknown ids "
        "among them. A fixed cutoff needs k chosen in hindsight on these labels; askpapers decides per question "
        "how many papers to cite.",
    ]
    if mismatches:
        sec.lines.append(f"\nNote: askpapers `search` ranked differently from eval_conference's run on {mismatches} "
                         "question(s); the F1 cutoffs use the second run.")  # fmt: skip
    return sec, summary


# -- quality: SciFact (BEIR) ----------------------------------------------------------------------------------------
def quality_scifact(limit: int | None, cache: Path, tmp: Path) -> Section:
    from rag.evaluate import beir_queries, beir_records, eval_beir, eval_store, read_qrels
    from rag.metrics import ndcg_at, recall_at
    from vectorstore.embed import get_embedder

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
    lexical = app.retriever.lexical
    papers = ingested_papers(records, tmp, "scifact")
    log(f"scifact: recipe store of {len(papers)} papers (embedding every title + abstract)")
    t = time.perf_counter()
    db = recipe_store(papers, tmp / "recipe-scifact", get_embedder())
    log(f"scifact: recipe store built in {time.perf_counter() - t:.0f} s")
    scores: dict[str, list[tuple[float, float]]] = {"recipe": [], "bm25": []}
    for q in qs:
        gains = judged[str(q.get("_id", q.get("id")))]
        for name, ranked in (
            ("recipe", doc_ids(db.similarity_search(q["text"], k=100))),
            ("bm25", [pid for pid, _ in lexical.search(q["text"], 100)]),
        ):
            scores[name].append((ndcg_at(ranked, gains, 10), recall_at(ranked, set(gains), 100)))
    sec.lines += [
        f"{len(qs)} claims with relevance judgements, {len(records):,} abstracts (title + abstract).",
        "",
        "| retriever | nDCG@10 | R@100 |",
        "| --- | --- | --- |",
        f"| askpapers `search` (hybrid) | **{f3(report.summary['nDCG@10'])}** | **{f3(report.summary['R@100'])}** |",
    ]
    for name, label in (("recipe", "recipe dense `similarity_search(k=100)`"), ("bm25", "BM25 alone")):
        vals = scores[name]
        sec.lines.append(f"| {label} | {f3(mean([v[0] for v in vals]))} | {f3(mean([v[1] for v in vals]))} |")
    sec.lines += [
        "",
        "askpapers' row is `rag.evaluate.eval_beir`'s (the same as `askpapers eval`). Published reference points, "
        "on the SciFact *test* split: BM25 0.665 (BEIR paper), all-MiniLM-L6-v2 about 0.645 (MTEB).",
    ]
    return sec


# -- speed (each system in a child process of its own) --------------------------------------------------------------
def speed_raw_embedder(corpus: str) -> dict[str, Any]:
    """The ONNX model alone: on one text per paper (as the recipe embeds), and on the exact chunk texts
    askpapers' ingest embeds (its bound: ingest cannot be faster than embedding those)."""
    from vectorstore.config import StoreSettings
    from vectorstore.embed import get_embedder
    from vectorstore.parse import parse_paths
    from vectorstore.pipeline import chunk_batch

    papers = parse_paths([corpus]).papers
    texts = [page_content(p) for p in papers]
    emb = get_embedder()
    emb.embed(["warm-up"])
    t = time.perf_counter()
    emb.embed(texts)
    seconds = time.perf_counter() - t
    _, chunk_texts = chunk_batch(papers, emb, StoreSettings())
    t = time.perf_counter()
    emb.embed(chunk_texts)
    return {"n": len(texts), "seconds": seconds, "chunks": len(chunk_texts), "chunk_seconds": time.perf_counter() - t}


def time_queries(app: Any, questions: Sequence[str]) -> tuple[list[float], list[float], int]:
    """Warm ``search`` then extractive ``ask`` latencies (ms) over ``questions``, and the citations given."""
    search_ms, ask_ms, cited = [], [], 0
    for q in questions:
        t = time.perf_counter()
        app.search(q)
        search_ms.append((time.perf_counter() - t) * 1000)
    for q in questions:
        t = time.perf_counter()
        answer = app.ask(q, mode="extractive")
        ask_ms.append((time.perf_counter() - t) * 1000)
        cited += len(answer.citations)
    return search_ms, ask_ms, cited


def speed_askpapers(data_dir: str, corpus: str, questions: list[str]) -> dict[str, Any]:
    import chromadb  # noqa: F401  (imported before the clock starts, as the recipe's import of langchain_chroma does)

    from rag.api import AskPapers
    from rag.settings import get_settings
    from vectorstore.config import StoreSettings
    from vectorstore.embed import get_embedder
    from vectorstore.pipeline import ingest

    store = StoreSettings(data_dir=Path(data_dir), default_corpus=BUNDLED)
    emb = get_embedder(store.embed_threads)  # the model is loaded before the clock starts, for both systems
    emb.embed(["warm-up"])
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

    from vectorstore.embed import get_embedder
    from vectorstore.parse import parse_paths

    emb = get_embedder()
    emb.embed(["warm-up"])
    embeddings = recipe_embeddings(emb)
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


def _child_main(fn: Callable[..., dict[str, Any]], kwargs: dict[str, Any], conn: Connection) -> None:
    try:
        result = fn(**kwargs)
        result["peak_rss_mb"] = own_peak_rss_mb()
        conn.send(("ok", result))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def in_child(fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """Run ``fn(**kwargs)`` in a fresh (spawned) Python process; its result gains the child's peak RSS."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, kwargs, send))
    proc.start()
    send.close()
    try:
        status, payload = recv.recv()
    except EOFError:
        proc.join()
        raise RuntimeError(f"{fn.__name__} died in its child process (exit code {proc.exitcode})") from None
    proc.join()
    if status != "ok":
        raise RuntimeError(f"{fn.__name__} failed in its child process:\n{payload}")
    result: dict[str, Any] = payload
    return result


# Starts a command from a small process and reports its wall time and peak RSS: measured from the big benchmark
# process, a child's ru_maxrss would start at the benchmark's own RSS.
LAUNCHER = """
import json, os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - t
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "maxrss_kb": usage.ru_maxrss, "rc": os.waitstatus_to_exitcode(status)}, fh)
"""


def run_cold(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (MB) and stdout of ``cmd`` run as a new process."""
    with tempfile.TemporaryDirectory() as d:
        out, err, result = Path(d) / "out", Path(d) / "err", Path(d) / "result.json"
        with out.open("wb") as fo, err.open("wb") as fe:
            subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(result), *cmd],
                           env=env, cwd=cwd, stdout=fo, stderr=fe, check=False)  # fmt: skip
        if not result.exists():
            raise RuntimeError(f"could not run {shlex.join(cmd)}: {err.read_text(errors='replace')}")
        r = json.loads(result.read_text())
        if r["rc"] != 0:
            raise RuntimeError(f"{shlex.join(cmd)} exited with {r['rc']}:\n{err.read_text(errors='replace')}")
        return float(r["seconds"]), r["maxrss_kb"] / 1024, out.read_text(errors="replace")


def speed(tmp: Path) -> Section:
    from vectorstore.config import StoreSettings
    from vectorstore.embed import get_embedder
    from vectorstore.parse import parse_paths
    from vectorstore.pipeline import ingest

    sec = Section("Speed (ICML 2024: 2,610 papers, title + abstract)")
    load_before = load()
    corpus = str(SPEED_CORPUS)
    log("speed: raw ONNX embedder (child process)")
    raw = in_child(speed_raw_embedder, corpus=corpus)
    log(f"speed: raw embedder {raw['n'] / raw['seconds']:.1f} texts/s; askpapers ingest + latency (child process)")
    ours = in_child(speed_askpapers, data_dir=str(tmp / "speed-askpapers"), corpus=corpus, questions=QUESTIONS)
    log(f"speed: askpapers ingest {ours['n'] / ours['seconds']:.1f}/s; recipe ingest + latency (child process)")
    theirs = in_child(speed_recipe, persist_dir=str(tmp / "speed-recipe"), corpus=corpus, questions=QUESTIONS)
    log(f"speed: recipe ingest {theirs['n'] / theirs['seconds']:.1f}/s; cold starts")

    # cold starts: a new process per question, against stores of the bundled corpus
    cold_ours_dir, cold_recipe_dir = tmp / "cold-askpapers", tmp / "cold-recipe"
    ingest([BUNDLED], StoreSettings(data_dir=cold_ours_dir, default_corpus=BUNDLED), progress=False)
    recipe_store(parse_paths([BUNDLED]).papers, cold_recipe_dir, get_embedder())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASKPAPERS_"))}
    env.update({"ASKPAPERS_DATA_DIR": str(cold_ours_dir), "ASKPAPERS_DEFAULT_CORPUS": str(BUNDLED),
                "ANONYMIZED_TELEMETRY": "False", "PYTHONPATH": str(ROOT)})  # fmt: skip
    exe = Path(sys.executable).parent / "askpapers"
    if not exe.exists():
        exe = ROOT / ".venv" / "bin" / "askpapers"
    cold: dict[str, list[tuple[float, float]]] = {"askpapers": [], "recipe": []}
    outputs = {}
    for _ in range(3):  # interleaved, so both see the same background load
        s, m, outputs["askpapers"] = run_cold([str(exe), "ask", COLD_QUESTION], env, tmp)
        cold["askpapers"].append((s, m))
        s, m, outputs["recipe"] = run_cold([sys.executable, "-c", RECIPE_COLD, str(cold_recipe_dir), COLD_QUESTION],
                                           env, tmp)  # fmt: skip
        cold["recipe"].append((s, m))
    if "Found" not in outputs["askpapers"]:
        log("warning: the cold askpapers ask printed no 'Found …' line:\n" + outputs["askpapers"][:500])
    load_after = load()

    n = raw["n"]
    raw_rate, our_rate, their_rate = n / raw["seconds"], ours["n"] / ours["seconds"], theirs["n"] / theirs["seconds"]
    chunk_rate = n / raw["chunk_seconds"]
    cold_ours = statistics.median(s for s, _ in cold["askpapers"])
    cold_theirs = statistics.median(s for s, _ in cold["recipe"])
    cold_rss_ours = max(m for _, m in cold["askpapers"])
    cold_rss_theirs = max(m for _, m in cold["recipe"])
    s_ms, a_ms, i_ms = ours["search_ms"], ours["ask_ms"], theirs["invoke_ms"]
    sec.lines += [
        f"Load average (1/5/15 min) before: {load_before}; after: {load_after}. Ratios are askpapers ÷ recipe, "
        "measured in this run (for rates higher is better; for times, memory and disk lower is better).",
        "",
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
        f"| warm `search` (k = 10) vs recipe `retriever.invoke` (k = 4), {len(s_ms)} questions: p50 "
        f"| {statistics.median(s_ms):.1f} ms | {statistics.median(i_ms):.1f} ms "
        f"| {ratio(statistics.median(s_ms), statistics.median(i_ms))} |",
        f"| … p95 | {pct(s_ms, 0.95):.1f} ms | {pct(i_ms, 0.95):.1f} ms | {ratio(pct(s_ms, 0.95), pct(i_ms, 0.95))} |",
        f"| warm extractive `ask` vs recipe `retriever.invoke`, {len(a_ms)} questions: p50 "
        f"| {statistics.median(a_ms):.1f} ms | {statistics.median(i_ms):.1f} ms "
        f"| {ratio(statistics.median(a_ms), statistics.median(i_ms))} |",
        f"| … p95 | {pct(a_ms, 0.95):.1f} ms | {pct(i_ms, 0.95):.1f} ms | {ratio(pct(a_ms, 0.95), pct(i_ms, 0.95))} |",
        f'| cold start, bundled corpus: `askpapers ask "…"` vs a new Python process that opens the recipe\'s '
        f"persisted store and invokes its retriever (median of 3) | {cold_ours:.2f} s | {cold_theirs:.2f} s "
        f"| {ratio(cold_ours, cold_theirs)} |",
        f"| peak RSS of that cold process | {cold_rss_ours:,.0f} MB | {cold_rss_theirs:,.0f} MB "
        f"| {ratio(cold_rss_ours, cold_rss_theirs)} |",
        f"| peak RSS of the ingest + query process | {ours['peak_rss_mb']:,.0f} MB | {theirs['peak_rss_mb']:,.0f} MB "
        f"| {ratio(ours['peak_rss_mb'], theirs['peak_rss_mb'])} |",
        f"| store on disk | {ours['disk_mb']:,.1f} MB | {theirs['disk_mb']:,.1f} MB "
        f"| {ratio(ours['disk_mb'], theirs['disk_mb'])} |",
        f"| peak RSS of the raw-embedder process | {raw['peak_rss_mb']:,.0f} MB | | |",
        "",
        f"askpapers' extractive `ask` cited {ours['mean_cited']:.1f} papers per question on average; the recipe "
        f"always returns {RECIPE_K}. askpapers ingests sentence windows of up to 256 tokens (chunks, no overlap) "
        "with the title prefixed, plus one record per paper and a BM25 index, so it embeds every token of a long "
        "abstract; the recipe embeds one text per paper, which the embedder cuts at 256 tokens. That extra text "
        "(abstracts longer than 256 tokens get a second chunk) is what separates the two raw-embedder rows; the "
        "rest of the gap to the chunk-text row is Chroma's writes, which hold the GIL. "
        "Both load the embedder before the clock starts and use the same one. Each system's ingest and "
        "latency run in a fresh child process, so their peak RSS figures are their own.",
    ]
    return sec


# -- main -----------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
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

    from rag.evaluate import default_cache

    t0 = time.perf_counter()
    started = datetime.now()
    cache = default_cache()
    command = shlex.join([".venv/bin/python", "bench/compare.py", *(argv if argv is not None else sys.argv[1:])])
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
                t = time.perf_counter()
                sec = run()
                sec.seconds = time.perf_counter() - t
                sections.append(sec)
                log(f"{sec.title}: done in {sec.seconds:.0f} s")
        if not args.skip_speed:
            t = time.perf_counter()
            sec = speed(tmp)
            sec.seconds = time.perf_counter() - t
            sections.append(sec)
    wall = time.perf_counter() - t0

    v = versions()
    head = [
        "# askpapers side by side: the plain LangChain + Chroma recipe and BM25 alone",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} on {machine()}.",
        "",
        "Packages: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        f"Command: `make bench` → `{command}` (wall time {wall / 60:.1f} min; peak RSS of the benchmark process "
        f"{peak_rss_mb():,.0f} MB; eval stores cached in `{cache}`).",
        "",
        "- **askpapers**: extractive `ask` (its cited set) and hybrid `search` (dense chunks + BM25, reciprocal-rank "
        "fusion), over eval stores built by `rag.evaluate`, so its quality figures are those of `askpapers eval`.",
        f"- **recipe**: `Chroma.from_documents(docs, embedding=E)` with E a LangChain `Embeddings` over askpapers' "
        "own ONNX embedder (all-MiniLM-L6-v2 int8), one Document per paper (the text askpapers ingests: real title, "
        f'then abstract; metadata `{{"id": …}}`), persisted in a temp dir, then '
        f'`.as_retriever(search_kwargs={{"k": {RECIPE_K}}})`; its top {RECIPE_K} is its answer.',
        "- **BM25**: askpapers' derived SQLite FTS5 index (Porter stemming) of the same eval store, on its own.",
    ]
    if args.limit is not None:
        head += ["", f"**Quick run: only the first {args.limit} questions of each gold set.**"]
    body = []
    for sec in sections:
        body += ["", f"## {sec.title}", "", *sec.lines, "", f"*Section time: {sec.seconds:.0f} s.*"]
    text = "\n".join(head + body) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    log(f"wrote {args.out} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
