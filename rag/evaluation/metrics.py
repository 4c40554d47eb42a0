"""Scoring answers against gold questions (shared by the benchmark and, later, ``askpapers eval``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from askpapers.rag.types import Answer

PREFIX = 80


def prf(predicted: set[str], relevant: set[str], acceptable: set[str] | None = None) -> tuple[float, float, float]:
    """Precision, recall and F1; ``acceptable`` predictions count neither way. Empty vs empty is perfect."""
    pred = {p for p in predicted if p in relevant or p not in (acceptable or set())}
    if not pred and not relevant:
        return 1.0, 1.0, 1.0
    tp = len(pred & relevant)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(relevant) if relevant else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def prefix(abstract: str) -> str:
    return abstract[:PREFIX]


@dataclass
class DevResult:
    qid: str
    kind: str
    question: str
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    ok: bool = False
    verbatim: bool = True
    cited: list[str] = field(default_factory=list)
    latency_s: float = 0.0


def score_dev(item: dict[str, Any], answer: Answer) -> DevResult:
    """Score one answer to a dev question (papers identified by the first 80 characters of their abstract)."""
    cited = [prefix(c.abstract) for c in answer.citations]
    relevant = {prefix(r) for r in item.get("relevant", [])}
    acceptable = {prefix(r) for r in item.get("acceptable", [])}
    p, r, f = prf(set(cited), relevant, acceptable)
    kind = item["kind"]
    res = DevResult(item["id"], kind, item["question"], p, r, f, cited=[c.title for c in answer.citations])
    res.verbatim = all(c.evidence and c.evidence in c.abstract for c in answer.citations)
    res.latency_s = answer.latency_s
    if kind == "factoid":
        first_ok = bool(cited) and cited[0] in relevant
        res.ok = first_ok and any(s in answer.text for s in item.get("answer_contains", []))
    elif kind == "none":
        res.ok = not answer.found and not answer.citations
    elif kind == "followup":
        res.ok = bool(cited) and set(cited) <= (relevant | acceptable) and bool(set(cited) & relevant)
    else:
        res.ok = f >= 0.85
    return res


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """Share of the relevant ids in the first ``k`` of ``ranked`` (1.0 when nothing is relevant)."""
    if not relevant:
        return 1.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg_at(ranked: list[str], gains: dict[str, float], k: int) -> float:
    """nDCG@k with graded gains (binary relevance: gain 1); ids not in ``gains`` count 0."""
    import math

    dcg = sum(gains.get(pid, 0.0) / math.log2(i + 2) for i, pid in enumerate(ranked[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0
