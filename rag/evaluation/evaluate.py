"""``askpapers eval``: score answers and search against gold sets, in a store of their own.

Three gold formats:
- dev questions (``kind``, ``relevant`` abstract prefixes): P/R/F1 of cited papers, factoid hits, abstention;
- conference "which papers" questions (``relevant_ids`` over a pool of ids): F1/recall of the cited set,
  recall@10/50 and nDCG@10 of ``search``; ``text_mention_only_ids`` count neither way;
- BEIR (corpus.jsonl, queries.jsonl, qrels TSV): nDCG@10 and recall@100 of ``search``.

Each corpus is ingested (with exactly the fields the gold set intends) into a cache directory keyed by its
content, and reused while unchanged; the user's main store is never touched.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from askpapers.rag.api import AskPapers
from askpapers.rag.evaluation.frames import PHRASINGS, fill
from askpapers.rag.evaluation.metrics import load_jsonl, ndcg_at, prf, recall_at, score_dev
from askpapers.rag.settings import Settings, get_settings
from askpapers.vectorstore.embed import EMBEDDER_ID, get_embedder
from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.pipeline import ingest

EVAL_MAX_LIST = 1000  # papers an answer may cite in evaluation: every match


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "askpapers" / "eval"


@dataclass
class EvalReport:
    name: str
    summary: dict[str, float]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "summary": self.summary, "rows": self.rows}

    def table(self) -> str:
        lines = [f"## {self.name}", ""]
        if self.rows:
            keys = [k for k in self.rows[0] if k not in ("cited", "question")] + ["question"]
            lines.append("| " + " | ".join(keys) + " |")
            lines.append("|" + "---|" * len(keys))
            for r in self.rows:
                lines.append("| " + " | ".join(_fmt(r.get(k)) for k in keys) + " |")
            lines.append("")
        lines.append("| summary | value |")
        lines.append("|---|---|")
        lines += [f"| {k} | {_fmt(v)} |" for k, v in self.summary.items()]
        return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v).replace("|", "\\|")


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return round(statistics.mean(vals), 4) if vals else 0.0


def eval_store(name: str, records: list[dict[str, Any]], cache: Path, settings: Settings | None = None) -> AskPapers:
    """An AskPapers over a store holding exactly ``records``, built once per content in ``cache``."""
    base = settings or get_settings()
    digest = hashlib.sha256()
    for r in records:
        digest.update(json.dumps(r, sort_keys=True, ensure_ascii=False).encode())
    digest.update(f"{EMBEDDER_ID}|{base.store.chunk_sentences}|{base.store.chunk_overlap}".encode())
    store_dir = cache / f"{name}-{digest.hexdigest()[:16]}"
    store = base.store.model_copy(update={"data_dir": store_dir, "collection": "eval"})
    done = store_dir / "COMPLETE"
    if not done.exists():
        store_dir.mkdir(parents=True, exist_ok=True)
        # one build per store: an eval started beside another on the same papers waits for it, then reads its store
        with (store_dir / ".build.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                corpus = store_dir / "corpus.jsonl"
                text = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
                corpus.write_text(text, encoding="utf-8")
                # resumable: an interrupted build continues where it stopped
                ingest([corpus], store, embedder=get_embedder(base.embedder.threads))
                corpus.unlink()
                done.write_text("ok\n")
    # the whole set of matches is scored: the cap on how many an answer shows is lifted
    answer = base.answer.model_copy(update={"max_list": EVAL_MAX_LIST})
    return AskPapers(base.model_copy(update={"store": store, "answer": answer}))


def eval_dev(gold: Path, corpus: list[Path], cache: Path, settings: Settings | None = None) -> EvalReport:
    from askpapers.vectorstore.parse import parse_paths

    items = load_jsonl(gold)
    papers = parse_paths(corpus).papers
    records = [{"id": p.paper_id, "abstract": p.abstract, "venue": p.venue, "year": p.year} for p in papers]
    app = eval_store("dev", records, cache, settings)
    rows = []
    results = []
    for item in items:
        history = [{"role": "user", "content": h} for h in item.get("history", [])]
        res = score_dev(item, app.ask(item["question"], history, mode="extractive"))
        results.append(res)
        rows.append({"id": res.qid, "kind": res.kind, "P": res.precision, "R": res.recall, "F1": res.f1,
                     "ok": res.ok, "verbatim": res.verbatim, "question": res.question})  # fmt: skip
    by = {k: [r for r in results if r.kind == k] for k in ("list", "factoid", "none", "followup")}
    summary: dict[str, float] = {}
    for kind, rs in by.items():
        if rs:
            summary[f"{kind} mean P"] = _mean(r.precision for r in rs)
            summary[f"{kind} mean R"] = _mean(r.recall for r in rs)
            summary[f"{kind} mean F1"] = _mean(r.f1 for r in rs)
    if by["factoid"]:
        summary["factoid hit"] = _mean(float(r.ok) for r in by["factoid"])
    if by["none"]:
        summary["abstention accuracy"] = _mean(float(r.ok) for r in by["none"])
    if by["followup"]:
        summary["followup correct"] = _mean(float(r.ok) for r in by["followup"])
    summary["evidence verbatim"] = _mean(float(r.verbatim) for r in results)
    return EvalReport("dev questions", summary, rows)


def _read_ids(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


CANONICAL = re.compile(r"^Which papers use or study (.+?)\?$")


def conference_app(corpus: Path, pool: Path | None, cache: Path, settings: Settings | None = None) -> AskPapers:
    """The eval store of a pool of conference papers (abstracts only)."""
    pool_ids = set(_read_ids(pool)) if pool else None
    records = []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if pool_ids is None or r["id"] in pool_ids:
                records.append({"id": r["id"], "abstract": r["abstract"]})
    if pool_ids is not None and len(records) != len(pool_ids):
        raise InputError(f"{corpus}: holds {len(records)} of the {len(pool_ids)} pool papers in {pool}")
    return eval_store("conference", records, cache, settings)


def eval_phrasings(
    gold: Path, corpus: Path, pool: Path | None, cache: Path, settings: Settings | None = None, limit: int | None = None
) -> EvalReport:
    """Each canonical question's topic asked in every one of :data:`PHRASINGS`: the F1 of the cited set and the
    search figures per phrasing, against the canonical question's."""
    items = [i for i in load_jsonl(gold)[:limit] if CANONICAL.match(i["question"])]
    app = conference_app(corpus, pool, cache, settings)
    figures: list[dict[str, float]] = []
    templates = ("Which papers use or study {x}?", *PHRASINGS)
    for template in templates:
        scores: dict[str, list[float]] = {"F1": [], "R": [], "R@50": [], "nDCG@10": []}
        for item in items:
            m = CANONICAL.match(item["question"])
            assert m is not None
            question = fill(template, m.group(1))
            relevant, unknown = set(item["relevant_ids"]), set(item.get("text_mention_only_ids", []))
            cited = {c.paper_id for c in app.ask(question, mode="extractive").citations}
            _, r, f = prf(cited, relevant, unknown)
            ranked = [h.paper_id for h in app.search(question, 100) if h.paper_id not in unknown]
            scores["F1"].append(f)
            scores["R"].append(r)
            scores["R@50"].append(recall_at(ranked, relevant, 50))
            scores["nDCG@10"].append(ndcg_at(ranked, dict.fromkeys(relevant, 1.0), 10))
        figures.append({k: _mean(v) for k, v in scores.items()})
    canonical = figures[0]["F1"]
    for fig in figures:
        fig["F1 / canonical"] = round(fig["F1"] / canonical, 3) if canonical else 0.0
    others = figures[1:]
    summary = {"questions": float(len(items)), "canonical F1": canonical,
               "worst phrasing F1": min(f["F1"] for f in others),
               "worst F1 / canonical": min(f["F1 / canonical"] for f in others),
               "mean phrasing F1": _mean(f["F1"] for f in others),
               "worst R@50": min(f["R@50"] for f in figures),
               "worst nDCG@10": min(f["nDCG@10"] for f in figures)}  # fmt: skip
    rows: list[dict[str, Any]] = [{"phrasing": t, **f} for t, f in zip(templates, figures, strict=True)]
    return EvalReport("conference topics in every phrasing", summary, rows)


def eval_conference(
    gold: Path, corpus: Path, pool: Path | None, cache: Path, settings: Settings | None = None,
    limit: int | None = None, answer: Callable[[AskPapers, str], list[str]] | None = None,
) -> EvalReport:  # fmt: skip
    """Which-papers questions over a pool of papers, ingested with their abstracts only."""
    items = load_jsonl(gold)[:limit]
    app = conference_app(corpus, pool, cache, settings)
    rows = []
    for item in items:
        relevant = set(item["relevant_ids"])
        unknown = set(item.get("text_mention_only_ids", []))
        cited = answer(app, item["question"]) if answer else [
            c.paper_id for c in app.ask(item["question"], mode="extractive").citations
        ]  # fmt: skip
        p, r, f = prf(set(cited), relevant, unknown)
        ranked = [h.paper_id for h in app.search(item["question"], 100)]
        ranked = [pid for pid in ranked if pid not in unknown]
        rows.append({
            "qid": item["qid"], "relevant": len(relevant), "cited": len(cited), "P": p, "R": r, "F1": f,
            "R@10": recall_at(ranked, relevant, 10), "R@50": recall_at(ranked, relevant, 50),
            "nDCG@10": ndcg_at(ranked, dict.fromkeys(relevant, 1.0), 10), "question": item["question"],
        })  # fmt: skip
    summary = {k: _mean(r[k] for r in rows) for k in ("P", "R", "F1", "R@10", "R@50", "nDCG@10")}
    return EvalReport("conference which-papers questions", summary, rows)


def read_qrels(path: Path) -> dict[str, dict[str, float]]:
    """BEIR qrels TSV (query-id, corpus-id, score; optional header) → {query: {doc: gain > 0}}."""
    judged: dict[str, dict[str, float]] = {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        parts = line.split("\t")
        if i == 0 and not parts[-1].strip().lstrip("-").isdigit():
            continue  # header
        if len(parts) >= 3 and float(parts[2]) > 0:
            judged.setdefault(parts[0], {})[parts[1]] = float(parts[2])
    return judged


def beir_records(corpus: Path) -> list[dict[str, Any]]:
    """The records a BEIR corpus is ingested as: id, title, abstract."""
    records = []
    for r in load_jsonl(corpus):
        text = r.get("abstract") or r.get("text") or ""
        if isinstance(text, list):
            text = " ".join(text)
        records.append({"id": str(r.get("_id", r.get("id"))), "title": r.get("title", ""), "abstract": text})
    return records


def beir_queries(queries: Path, judged: dict[str, dict[str, float]], limit: int | None) -> list[dict[str, Any]]:
    return [q for q in load_jsonl(queries) if str(q.get("_id", q.get("id"))) in judged][:limit]


def eval_beir(
    corpus: Path, queries: Path, qrels: Path, cache: Path, settings: Settings | None = None, limit: int | None = None
) -> EvalReport:
    """nDCG@10 and recall@100 of search on a BEIR-format set (title + abstract ingested)."""
    judged = read_qrels(qrels)
    app = eval_store("beir", beir_records(corpus), cache, settings)
    qs = beir_queries(queries, judged, limit)
    rows = []
    for q in qs:
        qid = str(q.get("_id", q.get("id")))
        ranked = [h.paper_id for h in app.search(q["text"], 100)]
        gains = judged[qid]
        rows.append({"qid": qid, "nDCG@10": ndcg_at(ranked, gains, 10),
                     "R@100": recall_at(ranked, set(gains), 100), "question": q["text"]})  # fmt: skip
    summary = {"queries": float(len(rows)), "nDCG@10": _mean(r["nDCG@10"] for r in rows),
               "R@100": _mean(r["R@100"] for r in rows)}  # fmt: skip
    return EvalReport("BEIR", summary, rows)


def detect(gold: Path) -> str:
    """'dev', 'conference' or 'beir' from the first record of a gold file."""
    try:
        first = json.loads(next(line for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()))
    except (StopIteration, ValueError, OSError) as e:
        raise InputError(f"{gold}: not a JSONL gold file ({e})") from None
    if "relevant_ids" in first:
        return "conference"
    if "kind" in first and "question" in first:
        return "dev"
    if "text" in first:
        return "beir"
    raise InputError(f"{gold}: unknown gold format (expected dev questions, conference questions or BEIR queries)")
