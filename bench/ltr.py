"""The learned reranker (rag.retrieve.rerank): features from the production search path, cross-validation, and training.

    python -m bench.ltr extract          # features of every dev query, through AskPapers.search's own path
    python -m bench.ltr cv               # 5-fold CV (grouped by query, 3 seeds) and the cross-domain transfers
    python -m bench.ltr train [OUT]      # the shipped model: SciFact train + conference dev (x5), rag/ranker/

Training data is the dev data only: SciFact train (809 claims), the conference dev which-papers questions and the
compound (two-facet) questions over the same pool. ICLR 2024 is never read. The eval stores are `askpapers eval`'s
(built on first use in ~/.cache/askpapers/eval); features are cached in ~/.cache/askpapers/ltr.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import CONFERENCE, ROOT, SHARED, log

SCIFACT = SHARED / "datasets" / "scifact"
OUT = Path.home() / ".cache" / "askpapers" / "ltr"
LGB_PARAMS: dict[str, Any] = dict(
    objective="lambdarank", metric="ndcg", eval_at=[10], num_leaves=5, learning_rate=0.1, min_data_in_leaf=200,
    feature_fraction=0.8, bagging_fraction=0.8, bagging_freq=1, lambda_l2=1.0, lambdarank_truncation_level=30,
    num_threads=2, verbose=-1, seed=1, deterministic=True, force_row_wise=True,
)  # fmt: skip
N_TREES = 100
CONF_REPEAT = 5  # the conference questions are 43 against 809 claims: each counts five times in training


# -- features ---------------------------------------------------------------------------------------------------
def _apps() -> dict[str, tuple[Any, list[dict[str, Any]]]]:
    from askpapers.rag.evaluation.evaluate import (
        beir_queries,
        beir_records,
        conference_app,
        default_cache,
        eval_store,
        read_qrels,
    )
    from askpapers.rag.evaluation.metrics import load_jsonl

    cache = default_cache()
    judged = read_qrels(SCIFACT / "qrels_train.tsv")
    beir = eval_store("beir", beir_records(SCIFACT / "corpus.jsonl"), cache)
    claims = [
        {"qid": str(q.get("_id", q.get("id"))), "text": q["text"], "gains": judged[str(q.get("_id", q.get("id")))],
         "unknown": [], "set": "scifact"}
        for q in beir_queries(SCIFACT / "queries_train.jsonl", judged, None)
    ]  # fmt: skip
    conf = conference_app(CONFERENCE / "corpus_dev.jsonl", CONFERENCE / "keyword_pool_dev.ids", cache)
    questions = []
    for name in ("gold_questions_dev.jsonl", "compound_questions_dev.jsonl"):  # never iclr2024.jsonl
        for it in load_jsonl(CONFERENCE / name):
            questions.append({
                "qid": it["qid"], "text": it["question"], "gains": dict.fromkeys(it["relevant_ids"], 1.0),
                "unknown": list(it.get("text_mention_only_ids", [])), "set": name.split("_")[0],
            })  # fmt: skip
    return {"scifact": (beir, claims), "conference": (conf, questions)}


def extract() -> None:
    """Each query through the production path (AskPapers.search_query, FusionRetriever.fuse and .pool)."""
    from askpapers.rag import clean_question

    OUT.mkdir(parents=True, exist_ok=True)
    for name, (app, qs) in _apps().items():
        retriever = app.parts.retriever
        rows = []
        for q in qs:
            query = app.search_query(clean_question(q["text"]))
            results, fused = retriever.fuse(query)
            pool = retriever.pool(query, None, results, fused)
            rows.append({**q, "pool": pool.ids, "X": pool.features, "fused": [c.paper_id for c in fused]})
        (OUT / f"{name}.pkl").write_bytes(pickle.dumps(rows, protocol=5))
        log(f"{name}: features of {len(rows)} queries -> {OUT / (name + '.pkl')}")


def _load(name: str) -> list[dict[str, Any]]:
    path = OUT / f"{name}.pkl"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `python -m bench.ltr extract` first")
    rows: list[dict[str, Any]] = pickle.loads(path.read_bytes())
    return rows


# -- metrics ----------------------------------------------------------------------------------------------------
def ranked(row: dict[str, Any], scores: np.ndarray | None) -> list[str]:
    """The search result: the pool in model order, then the fused papers outside the pool (as production)."""
    if scores is None:
        return list(row["fused"])
    head = [row["pool"][i] for i in np.argsort(-scores, kind="stable")]
    seen = set(head)
    return head + [p for p in row["fused"] if p not in seen]


def evaluate(rows: list[dict[str, Any]], scores: list[np.ndarray] | None) -> dict[str, dict[str, float]]:
    """As `askpapers eval`: the top 100, text-mention-only papers removed, per question set."""
    from askpapers.rag.evaluation.metrics import ndcg_at, recall_at

    per: dict[str, list[tuple[float, float, float]]] = {}
    for i, r in enumerate(rows):
        unknown = set(r["unknown"])
        top = [p for p in ranked(r, None if scores is None else scores[i])[:100] if p not in unknown]
        g = r["gains"]
        per.setdefault(r["set"], []).append(
            (ndcg_at(top, g, 10), recall_at(top, set(g), 50), recall_at(top, set(g), 100))
        )
    names = ("nDCG@10", "R@50", "R@100")
    return {
        s: {**{m: round(float(np.mean([v[j] for v in vals])), 4) for j, m in enumerate(names)}, "n": len(vals)}
        for s, vals in sorted(per.items())
    }


# -- training ---------------------------------------------------------------------------------------------------
def _matrix(rows: list[dict[str, Any]], repeat: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows: each pool minus its text-mention-only papers (they count neither way)."""
    xs, ys, gs = [], [], []
    for _ in range(repeat):
        for r in rows:
            unknown = set(r["unknown"])
            keep = [j for j, p in enumerate(r["pool"]) if p not in unknown]
            xs.append(r["X"][keep])
            ys.append([int(r["gains"].get(r["pool"][j], 0) > 0) for j in keep])
            gs.append(len(keep))
    return np.vstack(xs), np.concatenate(ys), np.array(gs)


def fit(rows: list[dict[str, Any]], extra: list[dict[str, Any]] | None = None, repeat: int = 1, seed: int = 1) -> Any:
    import lightgbm as lgb

    from askpapers.rag.retrieve.rank_features import FEATURES

    X, y, g = _matrix(rows)
    if extra:
        X2, y2, g2 = _matrix(extra, repeat)
        X, y, g = np.vstack([X, X2]), np.concatenate([y, y2]), np.concatenate([g, g2])
    data = lgb.Dataset(X, label=y, group=g, feature_name=FEATURES)
    return lgb.train(dict(LGB_PARAMS, seed=seed), data, num_boost_round=N_TREES)


def folds(rows: list[dict[str, Any]], seed: int, n_folds: int = 5) -> list[int]:
    """Folds grouped by query; queries sharing a relevant paper (SciFact's claim and negated claim, a compound
    question and its facets' questions) stay together, so no relevant paper is in both training and test."""
    parent = list(range(len(rows)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, int] = {}
    for i, r in enumerate(rows):
        for p in r["gains"]:
            if p in first:
                parent[find(i)] = find(first[p])
            else:
                first[p] = i
    groups = list(dict.fromkeys(find(i) for i in range(len(rows))))
    rng = np.random.default_rng(seed)
    fold_of = dict(zip(groups, rng.permutation(np.arange(len(groups)) % n_folds).tolist(), strict=True))
    return [fold_of[find(i)] for i in range(len(rows))]


def cross_val(
    rows: list[dict[str, Any]], extra: list[dict[str, Any]] | None = None, repeat: int = 1,
    seeds: tuple[int, ...] = (0, 1, 2), extra_first: bool = False,
) -> dict[str, dict[str, float]]:  # fmt: skip
    """Out-of-fold scores for ``rows`` (each fold trained on the other folds, plus all of ``extra``), averaged
    over seeds. ``extra_first``: ``extra`` is the main set and the training folds of ``rows`` repeat ``repeat``
    times (the conference CV with SciFact)."""
    runs = []
    for s in seeds:
        f = folds(rows, s)
        scores: list[Any] = [None] * len(rows)
        for k in range(5):
            train = [r for r, x in zip(rows, f, strict=True) if x != k]
            model = fit(extra, train, repeat, s + 1) if extra_first and extra else fit(train, extra, repeat, s + 1)
            for i in (i for i, x in enumerate(f) if x == k):
                scores[i] = model.predict(rows[i]["X"], num_threads=2)
        runs.append(evaluate(rows, scores))
    return {
        st: {m: round(float(np.mean([r[st][m] for r in runs])), 4) for m in ("nDCG@10", "R@50", "R@100")}
        for st in runs[0]
    }


def cv() -> None:
    sci, conf = _load("scifact"), _load("conference")
    out: dict[str, Any] = {
        "fused RRF (ASKPAPERS_RANKER=rrf)": {"scifact": evaluate(sci, None), "conference": evaluate(conf, None)},
        "SciFact 5-fold CV": {"scifact": cross_val(sci)},
        "SciFact 5-fold CV, + all conference (x5) in training": {"scifact": cross_val(sci, conf, CONF_REPEAT)},
        "conference 5-fold CV, conference only": {"conference": cross_val(conf)},
        "conference 5-fold CV, + all SciFact in training (conference x5)": {
            "conference": cross_val(conf, sci, CONF_REPEAT, extra_first=True)
        },
    }
    m = fit(sci)
    out["train SciFact -> test conference"] = {"conference": evaluate(conf, [m.predict(r["X"]) for r in conf])}
    m = fit(conf)
    out["train conference -> test SciFact"] = {"scifact": evaluate(sci, [m.predict(r["X"]) for r in sci])}
    for k, v in out.items():
        print(json.dumps({"experiment": k, **v}), flush=True)
    (OUT / "cv.json").write_text(json.dumps(out, indent=1), encoding="utf-8")


def train(path: Path) -> None:
    model = fit(_load("scifact"), _load("conference"), CONF_REPEAT)
    model.save_model(str(path))
    log(f"saved {path} ({path.stat().st_size:,} bytes, {model.num_trees()} trees)")


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else ""
    if cmd == "extract":
        extract()
    elif cmd == "cv":
        cv()
    elif cmd == "train":
        train(Path(argv[1]) if len(argv) > 1 else ROOT / "rag" / "ranker" / "reranker.txt")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
