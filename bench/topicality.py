"""Train the topicality model (``rag/ranker/topicality.json``): which units of a question are its topic.

Examples come from the dev data only: the topics of the conference questions (single and two-facet) and of the
bundled corpus's list questions, each asked canonically and wrapped in generated frames (:mod:`rag.evaluation.frames`).
Every facet the planner reads is labelled topical when all its words belong to the topic, and not topical when they
come from the frame. The features are corpus and general-English statistics (:mod:`rag.read.topicality`), so they carry
over to topics and frames the model never saw. Cross-validation holds out whole request shapes and whole topics::

    .venv/bin/python -m bench.topicality cv      # held-out request shapes and topics
    .venv/bin/python -m bench.topicality train   # writes rag/ranker/topicality.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from askpapers.rag.evaluation.evaluate import CANONICAL, conference_app, default_cache, eval_store
from askpapers.rag.evaluation.frames import GREETINGS, POLITENESS, PURPOSES, QUALIFIERS, REQUESTS, fill
from askpapers.rag.evaluation.metrics import load_jsonl
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.query import plan
from askpapers.rag.read.topicality import FEATURES, features, model_path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONF = SHARED / "datasets" / "conference"
# the two-facet conference questions' topics as noun phrases a frame can wrap
COMPOUND_TOPICS = {
    "kwpool-c01": "reinforcement learning for robotic manipulation",
    "kwpool-c02": "large language models for robot planning or manipulation",
    "kwpool-c03": "imitation learning for manipulation",
    "kwpool-c04": "diffusion models as robot policies",
    "kwpool-c05": "reasoning in large language models",
    "kwpool-c06": "retrieval-augmented generation with language models",
    "kwpool-c07": "GANs for image generation",
    "kwpool-c08": "sim-to-real transfer of reinforcement learning policies",
    "kwpool-c09": "recurrent networks for language modeling",
    "kwpool-c10": "adversarial examples against deep neural networks",
    "kwpool-c11": "safety or alignment of language models",
    "kwpool-c12": "planning for autonomous driving",
    "kwpool-c13": "generative models with variational inference",
    "kwpool-c14": "language-guided navigation",
}
DEV_TOPICS = [
    "information bottleneck", "federated learning", "uncertainty estimation or out-of-distribution detection",
    "machine unlearning or model extraction attacks", "recommender systems",
    "multimodal large language models or vision-language models", "the Koopman operator", "reservoir computing",
    "contextual bandits", "joint-embedding predictive architectures",
]  # fmt: skip
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def frame_templates(held_out: int | None = None, folds: int = 4) -> list[tuple[str, int]]:
    """Frames as (template, request-shape fold): each request shape with a few greetings, purposes and politeness
    forms, so every shape is seen with every kind of part."""
    out = []
    for r, request in enumerate(REQUESTS):
        for k in range(3):
            g = GREETINGS[(r + k) % len(GREETINGS)]
            p = PURPOSES[(2 * r + k) % len(PURPOSES)]
            q = POLITENESS[(3 * r + k) % len(POLITENESS)]
            body = request
            if p:
                body = body.rstrip("?") + f" {p}" + ("?" if body.endswith("?") else "")
            if q:
                body = body + (" " if body.endswith("?") else ", ") + q
            out.append((f"{g} {body}".strip(), r % folds))
        # the request with what it asks of the papers beside their topic ("…, ideally with experiments")
        body, qualifier = request.rstrip("?"), QUALIFIERS[r % len(QUALIFIERS)]
        out.append((f"{body}, {qualifier}" + ("?" if request.endswith("?") else ""), r % folds))
    return out


def examples(lexicon: Lexicon, topics: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per facet the planner reads: features, label, topic and request-shape fold."""
    rows = []
    templates = [("Which papers use or study {x}?", -1), *frame_templates()]
    for name, topic in topics:
        want = words(topic)
        for template, fold in templates:
            q = plan(fill(template, topic), lexicon, weigh=False)
            units = [f.alternatives[0] for f in q.facets]
            if not units:
                continue
            for unit, row in zip(units, features(units, lexicon), strict=True):
                rows.append({"x": row, "y": int(words(unit) <= want), "topic": name, "fold": fold,
                             "unit": unit, "question": fill(template, topic)})  # fmt: skip
    return rows


def collect() -> list[dict[str, Any]]:
    cache = default_cache()
    app = conference_app(CONF / "corpus_dev.jsonl", CONF / "keyword_pool_dev.ids", cache)
    topics = []
    for item in load_jsonl(CONF / "gold_questions_dev.jsonl"):
        m = CANONICAL.match(item["question"])
        if m:
            topics.append((item["qid"], m.group(1)))
    topics += [(qid, t) for qid, t in COMPOUND_TOPICS.items()]
    rows = examples(app.parts.lexicon, topics)
    from askpapers.vectorstore.parse import parse_paths

    papers = parse_paths([Path(__file__).resolve().parents[1] / "data" / "icml2026"]).papers
    records = [{"id": p.paper_id, "abstract": p.abstract, "venue": p.venue, "year": p.year} for p in papers]
    dev = eval_store("dev", records, cache)
    rows += examples(dev.parts.lexicon, [(f"dev{i}", t) for i, t in enumerate(DEV_TOPICS)])
    return rows


def fit(x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    lr = LogisticRegression(C=c, max_iter=2000, class_weight="balanced").fit((x - mean) / scale, y)
    return mean, scale, lr.coef_[0], float(lr.intercept_[0])


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray, float], x: np.ndarray) -> np.ndarray:
    mean, scale, w, b = model
    p: np.ndarray = 1 / (1 + np.exp(-(((x - mean) / scale) @ w + b)))
    return p


def cv(rows: list[dict[str, Any]], c: float) -> dict[str, float]:
    """Accuracy on held-out request shapes (trained on the others), and on held-out topics; and the share of
    framed questions whose topic facets all gate and whose frame facets all only rank."""
    x = np.array([r["x"] for r in rows])
    y = np.array([r["y"] for r in rows])
    out: dict[str, float] = {}
    for name, key in (("shapes", "fold"), ("topics", "topic")):
        groups = sorted({r[key] for r in rows}, key=str)
        if key == "topic":
            groups_of = {g: i % 4 for i, g in enumerate(groups)}
            fold = np.array([groups_of[r["topic"]] for r in rows])
        else:
            fold = np.array([r["fold"] for r in rows])
        pred = np.zeros(len(rows))
        for f in sorted(set(fold.tolist()) - {-1}):
            test = fold == f
            model = fit(x[~test], y[~test], c)
            pred[test] = predict(model, x[test])
        scored = fold != -1
        ok = ((pred >= 0.5) == (y == 1))[scored]
        out[f"{name}: facet accuracy"] = round(float(ok.mean()), 4)
        out[f"{name}: frame facets kept as topic"] = round(float(((pred >= 0.5) & (y == 0))[scored].sum()), 0)
        out[f"{name}: topic facets demoted"] = round(float(((pred < 0.5) & (y == 1))[scored].sum()), 0)
        by_q: dict[str, bool] = {}
        for r, p, s in zip(rows, pred, scored, strict=True):
            if s:
                by_q[r["question"] + r["topic"]] = by_q.get(r["question"] + r["topic"], True) and (
                    (p >= 0.5) == (r["y"] == 1)
                )
        out[f"{name}: questions read right"] = round(sum(by_q.values()) / max(len(by_q), 1), 4)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.topicality")
    ap.add_argument("step", choices=["cv", "train"])
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--show", action="store_true", help="print the misread facets")
    args = ap.parse_args(argv)
    rows = collect()
    print(f"{len(rows)} facets, {sum(r['y'] for r in rows)} topical", file=sys.stderr)
    if args.step == "cv":
        print(json.dumps(cv(rows, args.c), indent=1))
        if args.show:
            x, y = np.array([r["x"] for r in rows]), np.array([r["y"] for r in rows])
            p = predict(fit(x, y, args.c), x)
            for r, pi in zip(rows, p, strict=True):
                if (pi >= 0.5) != (r["y"] == 1):
                    print(f"{pi:.2f} y={r['y']} {r['unit']!r} in {r['question']!r}")
        return 0
    x, y = np.array([r["x"] for r in rows]), np.array([r["y"] for r in rows])
    mean, scale, w, b = fit(x, y, args.c)
    model_path().write_text(
        json.dumps(
            {
                "features": FEATURES,
                "mean": mean.round(6).tolist(),
                "scale": scale.round(6).tolist(),
                "weights": w.round(6).tolist(),
                "bias": round(b, 6),
                "trained_on": len(rows),
                "C": args.c,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {model_path()}: " + ", ".join(f"{f} {v:+.2f}" for f, v in zip(FEATURES, w, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
