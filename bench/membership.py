"""Train the membership model (``rag/ranker/membership.txt`` and its ``.json``): which candidates belong to an
answer set (:mod:`rag.decide.membership`).

Examples come from the dev data only: the conference "which papers use X" questions and the two-facet compound
questions over ``keyword_pool_dev``, each asked canonically and in generated wordings (:mod:`rag.evaluation.frames`).
Every candidate the matcher returns is one row, labelled by the question's relevant ids (papers that only mention the
keyword in passing are left out). Cross-validation holds out whole topics (grouped folds) and chooses the
probability cut with the best mean F1 per question::

    .venv/bin/python -m bench.membership cv      # held-out topics: mean F1 at the chosen cut
    .venv/bin/python -m bench.membership train   # writes rag/ranker/membership.{txt,json}

The rows are cached in ``$XDG_CACHE_HOME/askpapers/membership-rows.json`` (delete it after changing the matcher).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

import numpy as np

from askpapers.rag.decide.membership import FEATURES, decided, features, model_path
from askpapers.rag.evaluation.evaluate import CANONICAL, conference_app, default_cache
from askpapers.rag.evaluation.frames import fill, frames
from askpapers.rag.evaluation.metrics import load_jsonl

from .topicality import COMPOUND_TOPICS, CONF

# the features a higher value of which can only make membership more likely (+1) or less likely (-1)
MONOTONE = {
    "met_share": 1, "weighted_met": 1, "unmet_weight": -1, "phrase_share": 1, "min_cover": 1, "mean_cover": 1,
    "min_sim": 1, "mean_sim": 1, "unmet_sim": 1, "unmet_cover": 1, "optional_met": 1, "strict": 1, "log_rank": -1,
    "score_gap": -1, "q_sim": 1,
}  # fmt: skip
PARAMS = {
    "objective": "binary", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20, "feature_fraction": 0.9,
    "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0, "verbose": -1, "seed": 7, "num_threads": 2,
    "deterministic": True, "force_row_wise": True,
}  # fmt: skip
ROUNDS = 200
CUTS = [round(0.2 + 0.025 * i, 3) for i in range(25)]


def questions(wordings: int) -> list[dict[str, Any]]:
    """(topic id, question, relevant, unknown): each question canonically and in ``wordings`` generated frames."""
    out = []
    rng = random.Random(11)
    pool = frames(400, seed=5)
    for item in load_jsonl(CONF / "gold_questions_dev.jsonl"):
        m = CANONICAL.match(item["question"])
        topic = m.group(1) if m else ""
        texts = [item["question"], *(fill(t, topic) for t in rng.sample(pool, wordings) if topic)]
        for q in texts:
            out.append({"topic": item["qid"], "question": q, "relevant": item["relevant_ids"],
                        "unknown": item.get("text_mention_only_ids", [])})  # fmt: skip
    for item in load_jsonl(CONF / "compound_questions_dev.jsonl"):
        topic = COMPOUND_TOPICS.get(item["qid"], "")
        texts = [item["question"], *(fill(t, topic) for t in rng.sample(pool, wordings) if topic)]
        for q in texts:
            out.append({"topic": item["qid"], "question": q, "relevant": item["relevant_ids"],
                        "unknown": item.get("text_mention_only_ids", [])})  # fmt: skip
    return out


def collect(wordings: int) -> list[dict[str, Any]]:
    cache = default_cache()
    path = cache.parent / f"membership-rows-{wordings}.json"
    if path.exists():
        rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        return rows
    app = conference_app(CONF / "corpus_dev.jsonl", CONF / "keyword_pool_dev.ids", cache)
    matcher = app.parts.answerers["extractive"].matcher  # type: ignore[attr-defined]
    rows = []
    qs = questions(wordings)
    for n, q in enumerate(qs, 1):
        plan = app.read(q["question"])
        cands, _ = matcher.candidates(plan, plan.filters)
        n_strict = sum(all(f.met for f in c.facets) for c in cands)
        relevant, unknown = set(q["relevant"]), set(q["unknown"])
        for c in cands:
            if c.paper_id in unknown:
                continue
            rows.append({"x": features(c, n_strict), "y": int(c.paper_id in relevant), "topic": q["topic"],
                         "question": q["question"], "id": c.paper_id})  # fmt: skip
        # the relevant papers no candidate holds (recall no cut can reach)
        got = {c.paper_id for c in cands}
        rows.extend({"x": None, "y": 1, "topic": q["topic"], "question": q["question"], "id": pid}
                    for pid in relevant - got - unknown)  # fmt: skip
        if n % 20 == 0:
            print(f"{n}/{len(qs)} questions", file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows), encoding="utf-8")
    return rows


def train(rows: list[dict[str, Any]]) -> Any:
    import lightgbm as lgb

    x = np.array([r["x"] for r in rows if r["x"] is not None], dtype=np.float64)
    y = np.array([r["y"] for r in rows if r["x"] is not None])
    params = {**PARAMS, "monotone_constraints": [MONOTONE.get(f, 0) for f in FEATURES]}
    return lgb.train(params, lgb.Dataset(x, y, feature_name=FEATURES), ROUNDS)


def f1_by_question(rows: list[dict[str, Any]], probs: dict[int, float], cut: float) -> dict[str, float]:
    per: dict[str, list[int]] = {}  # question -> [tp, fp, fn]
    for i, r in enumerate(rows):
        t = per.setdefault(r["topic"] + "\t" + r["question"], [0, 0, 0])
        chosen = r["x"] is not None and probs[i] >= cut
        if chosen and r["y"]:
            t[0] += 1
        elif chosen:
            t[1] += 1
        elif r["y"]:
            t[2] += 1
    out = {}
    for q, (tp, fp, fn) in per.items():
        out[q] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def cross_validate(rows: list[dict[str, Any]], folds: int = 5) -> tuple[float, dict[str, Any]]:
    topics = sorted({r["topic"] for r in rows})
    random.Random(3).shuffle(topics)
    fold_of = {t: i % folds for i, t in enumerate(topics)}
    probs: dict[int, float] = {}
    for f in range(folds):
        train_rows = [r for r in rows if fold_of[r["topic"]] != f]
        model = train(train_rows)
        test = [i for i, r in enumerate(rows) if fold_of[r["topic"]] == f and r["x"] is not None]
        if test:
            p = model.predict(np.array([rows[i]["x"] for i in test], dtype=np.float64))
            probs.update({i: decided(v, rows[i]["x"]) for i, v in zip(test, p.tolist(), strict=True)})
    table = {}
    for cut in CUTS:
        f1 = f1_by_question(rows, probs, cut)
        compound = [v for q, v in f1.items() if q.startswith("kwpool-c")]
        single = [v for q, v in f1.items() if not q.startswith("kwpool-c")]
        table[cut] = (float(np.mean(single)), float(np.mean(compound)))
    best = max(CUTS, key=lambda c: sum(table[c]))
    strict = f1_by_question(rows, {i: float(r["x"][FEATURES.index("strict")]) for i, r in enumerate(rows)
                                   if r["x"] is not None}, 0.5)  # fmt: skip
    s_single = float(np.mean([v for q, v in strict.items() if not q.startswith("kwpool-c")]))
    s_compound = float(np.mean([v for q, v in strict.items() if q.startswith("kwpool-c")]))
    report = {
        "cut": best, "held-out single F1": round(table[best][0], 4), "held-out compound F1": round(table[best][1], 4),
        "strict rule single F1": round(s_single, 4), "strict rule compound F1": round(s_compound, 4),
        "by cut": {str(c): [round(a, 4), round(b, 4)] for c, (a, b) in table.items()},
    }  # fmt: skip
    return best, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.membership")
    ap.add_argument("step", choices=["cv", "train"])
    ap.add_argument("--wordings", type=int, default=3, help="generated wordings per question")
    args = ap.parse_args(argv)
    rows = collect(args.wordings)
    n = sum(r["x"] is not None for r in rows)
    print(f"{n} candidate rows ({sum(r['y'] for r in rows if r['x'] is not None)} relevant), "
          f"{sum(r['x'] is None for r in rows)} relevant papers no candidate holds", file=sys.stderr)  # fmt: skip
    cut, report = cross_validate(rows)
    print(json.dumps({k: v for k, v in report.items() if k != "by cut"}, indent=1))
    if args.step == "cv":
        print(json.dumps(report["by cut"]))
        return 0
    model = train(rows)
    path = model_path()
    model.save_model(str(path))
    meta = {"features": FEATURES, "cut": cut, "rounds": ROUNDS, "trained_on": n, "cv": report}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} (cut {cut})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
