"""Train the topicality model (``rag/ranker/topicality.txt``, its features in ``.json``): which units of a question are
its topic.

Examples come from the dev data only: the topics of the conference questions (single and two-facet), of the
bundled corpus's list questions, and generated two-facet topics (:func:`keyword_pairs`: two author keywords that pool
papers carry together, joined as a researcher would, "privacy in federated learning", "lstm and rnn", and
:data:`APART` that few papers carry together, "fairness in language models"), each asked
canonically and wrapped in generated frames (:mod:`rag.evaluation.frames`). Every facet the planner reads is labelled
topical when all its words belong to the topic, and not topical when they come from the frame. The features are
corpus and general-English statistics (:mod:`rag.read.topicality`), so they carry over to topics and frames the model
never saw. Cross-validation holds out whole request shapes, whole topics, and generated topics whose keywords the
training never saw::

    .venv/bin/python -m bench.topicality cv      # held-out request shapes, topics and keywords (--linear: logistic)
    .venv/bin/python -m bench.topicality train   # writes rag/ranker/topicality.txt and .json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from askpapers.rag.evaluation.evaluate import CANONICAL, conference_app, default_cache, eval_store
from askpapers.rag.evaluation.frames import GREETINGS, POLITENESS, PURPOSES, QUALIFIERS, REQUESTS, fill
from askpapers.rag.evaluation.metrics import load_jsonl
from askpapers.rag.read.cues import REQUEST_WORDS
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.query import plan
from askpapers.rag.read.topicality import FEATURES, MONOTONE, features, model_path

from .keyword_topics import held_out_keywords, norm, pattern, pool_papers

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
PAIR_PAPERS = 3  # a generated two-facet topic joins two author keywords that this many pool papers carry together
PAIRS = 260  # at most this many of them (the pool has fewer)
APART = 130  # and this many that few papers carry together ("fairness in language models"): a topic asked is a topic
APART_SHARE = 0.05  # … of keywords stated by at most this share of the papers (a word in most narrows nothing)
PAIR_FRAMES = 24  # each asked canonically and in this many frames drawn from frame_templates
PAIR_JOINS = ("{a} in {b}", "{a} for {b}", "{a} of {b}", "{a} with {b}", "{a} and {b}", "{b} {a}")
APART_JOINS = PAIR_JOINS[:-1]  # the pairs of few joint papers are joined by a word ("{b} {a}" reads as one term)
SEED = 7


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


def keyword_pairs(share: Callable[[str], float] | None = None) -> list[tuple[str, str, str]]:
    """Two-facet topics as (name, topic, keyword side): two author keywords of the pool that at least
    :data:`PAIR_PAPERS` papers carry together, sharing no word, joined in one of :data:`PAIR_JOINS`, then (given
    each keyword's ``share`` of the papers that state it) the pairs of :func:`_apart`. The dev questions
    ask few combinations (a common noun beside a term, "safety of language models", is not among them). Keywords of
    the held-out topic probe (``bench.keyword_topics.held_out_keywords``) are left out. Each keyword falls
    on side A or B at random: a pair is "A" or "B" when both its keywords do (cross-validation trains on A and tests
    on B), "X" otherwise."""
    held = held_out_keywords()
    together: Counter[tuple[str, str]] = Counter()
    carried: Counter[str] = Counter()
    for paper in pool_papers():
        kws = {norm(str(k)) for k in paper.get("keywords") or []}
        kws = {k for k in kws if re.fullmatch(r"[a-z][a-z ]*", k) and 1 <= len(k.split()) <= 3
               and not set(k.split()) & REQUEST_WORDS and not any(pattern(h).search(k) for h in held)}  # fmt: skip
        together.update((a, b) for a in kws for b in kws if a < b and not set(a.split()) & set(b.split()))
        carried.update(kws)
    pairs = sorted(pair for pair, c in together.items() if c >= PAIR_PAPERS)
    rng = random.Random(SEED)
    rng.shuffle(pairs)
    side = {k: rng.random() < 0.5 for k in sorted({k for pair in pairs for k in pair})}
    out = _asked(pairs[:PAIRS], 0, PAIR_JOINS, side, rng)
    if share is None:
        return out
    # (drawn with a random generator of their own, so the pairs above stay as they were)
    rng = random.Random(SEED + 1)
    apart = _apart(carried, together, share, rng)
    side |= {k: rng.random() < 0.5 for k in sorted({k for pair in apart for k in pair} - set(side))}
    # (two topics the corpus seldom pairs are joined by a word: set side by side they would read as one term)
    return out + _asked(apart, len(out), APART_JOINS, side, rng)


def _asked(
    pairs: list[tuple[str, str]], start: int, joins: tuple[str, ...], side: dict[str, bool], rng: random.Random
) -> list[tuple[str, str, str]]:
    """The pairs as (name, topic, keyword side), numbered from ``start``: each in a random order, joined in turn by
    one of ``joins``; "A" or "B" when both keywords fall on that side, "X" otherwise."""
    out = []
    for i, (a, b) in enumerate(pairs, start):
        if rng.random() < 0.5:
            a, b = b, a
        split = "A" if side[a] and side[b] else "B" if not (side[a] or side[b]) else "X"
        out.append((f"pair{i}", joins[i % len(joins)].format(a=a, b=b), split))
    return out


def _apart(
    carried: Counter[str], together: Counter[tuple[str, str]], share: Callable[[str], float], rng: random.Random
) -> list[tuple[str, str]]:
    """:data:`APART` pairs of keywords that :data:`PAIR_PAPERS` papers or more carry each but fewer carry together,
    sharing no word, each stated by at most :data:`APART_SHARE` of the papers (``share``), drawn at random (seeded):
    a researcher asks for combinations the corpus barely holds ("fairness in language models"), and each keyword is
    still a topic of the question. (The pairs carried together alone taught that a topic co-occurs with the other.)"""
    kws = sorted(k for k, c in carried.items() if c >= PAIR_PAPERS and share(k) <= APART_SHARE)
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(APART * 50):
        if len(out) >= APART or len(kws) < 2:
            break
        a, b = sorted(rng.sample(kws, 2))
        if (a, b) in seen or together[(a, b)] >= PAIR_PAPERS or set(a.split()) & set(b.split()):
            continue
        seen.add((a, b))
        out.append((a, b))
    return out


def examples(lexicon: Lexicon, topics: list[tuple[str, str]], frames: int | None = None,
             split: dict[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One row per facet the planner reads: features, label, topic, request-shape fold (and the topic's keyword side,
    for generated pairs). ``frames``: ask each topic in this many frames drawn at random (seeded), not in all."""
    rows = []
    every = frame_templates()
    rng = random.Random(SEED)
    for name, topic in topics:
        want = words(topic)
        drawn = every if frames is None else rng.sample(every, frames)
        for template, fold in [("Which papers use or study {x}?", -1), *drawn]:
            q = plan(fill(template, topic), lexicon, weigh=False)
            units = [f.alternatives[0] for f in q.facets]
            if not units:
                continue
            for unit, row in zip(units, features(units, lexicon), strict=True):
                rows.append({"x": row, "y": int(words(unit) <= want), "topic": name, "fold": fold,
                             "unit": unit, "question": fill(template, topic),
                             "split": (split or {}).get(name, "")})  # fmt: skip
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
    lexicon = app.parts.lexicon
    pairs = keyword_pairs(lambda k: lexicon.phrase_df(k) / max(lexicon.size, 1))
    rows += examples(app.parts.lexicon, [(n, t) for n, t, _ in pairs], PAIR_FRAMES, {n: s for n, _, s in pairs})
    from askpapers.vectorstore.parse import parse_paths

    papers = parse_paths([Path(__file__).resolve().parents[1] / "data" / "icml2026"]).papers
    records = [{"id": p.paper_id, "abstract": p.abstract, "venue": p.venue, "year": p.year} for p in papers]
    dev = eval_store("dev", records, cache)
    rows += examples(dev.parts.lexicon, [(f"dev{i}", t) for i, t in enumerate(DEV_TOPICS)])
    return rows


TREES = 150  # the forest: trees, leaves per tree, examples per leaf, learning rate (not tuned: a small forest)
LEAVES = 8
LEAF_EXAMPLES = 50
RATE = 0.05

Predict = Callable[[np.ndarray], np.ndarray]


def fit(x: np.ndarray, y: np.ndarray, linear: bool = False) -> tuple[Predict, Any]:
    """The forest (monotone in :data:`MONOTONE`, balanced classes), or with ``linear`` the logistic model shipped
    before it (for comparison); returns its probabilities and the fitted model."""
    if linear:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced")).fit(x, y)
        return (lambda z: np.asarray(lr.predict_proba(z))[:, 1]), lr
    import lightgbm as lgb

    forest = lgb.LGBMClassifier(
        n_estimators=TREES, learning_rate=RATE, num_leaves=LEAVES, min_child_samples=LEAF_EXAMPLES,
        class_weight="balanced", monotone_constraints=MONOTONE, random_state=SEED, verbose=-1,
    ).fit(x, y)  # fmt: skip
    return (lambda z: np.asarray(forest.predict_proba(z))[:, 1]), forest


def _read_right(rows: list[dict[str, Any]], pred: np.ndarray) -> float:
    """The share of questions whose topic facets all gate and whose frame facets all only rank."""
    by_q: dict[str, bool] = {}
    for r, p in zip(rows, pred, strict=True):
        key = r["question"] + r["topic"]
        by_q[key] = by_q.get(key, True) and ((p >= 0.5) == (r["y"] == 1))
    return round(sum(by_q.values()) / max(len(by_q), 1), 4)


def cv(rows: list[dict[str, Any]], linear: bool = False) -> dict[str, float]:
    """Accuracy on held-out request shapes (trained on the others), on held-out topics, and on generated topics
    whose keywords training never saw (side B, trained on everything but the generated pairs of side B or mixed);
    and the share of framed questions read right (topic facets all gate, frame facets all only rank)."""
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
            pred[test] = fit(x[~test], y[~test], linear)[0](x[test])
        scored = fold != -1
        ok = ((pred >= 0.5) == (y == 1))[scored]
        out[f"{name}: facet accuracy"] = round(float(ok.mean()), 4)
        out[f"{name}: frame facets kept as topic"] = round(float(((pred >= 0.5) & (y == 0))[scored].sum()), 0)
        out[f"{name}: topic facets demoted"] = round(float(((pred < 0.5) & (y == 1))[scored].sum()), 0)
        out[f"{name}: questions read right"] = _read_right([r for r, s in zip(rows, scored, strict=True) if s],
                                                           pred[scored])  # fmt: skip
    split = np.array([r["split"] for r in rows])
    train, test = ~np.isin(split, ["B", "X"]), split == "B"
    pred = fit(x[train], y[train], linear)[0](x[test])
    tested = [r for r, t in zip(rows, test, strict=True) if t]
    out["unseen keywords: questions read right"] = _read_right(tested, pred)
    out["unseen keywords: topic facets gated"] = round(float((pred[y[test] == 1] >= 0.5).mean()), 4)
    out["unseen keywords: frame facets kept as topic"] = round(float((pred[y[test] == 0] >= 0.5).mean()), 4)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.topicality")
    ap.add_argument("step", choices=["cv", "train"])
    ap.add_argument("--linear", action="store_true", help="cv: score the logistic model shipped before the forest")
    ap.add_argument("--show", action="store_true", help="print the misread facets")
    ap.add_argument("--rows", type=Path, help="keep the examples in this JSON file and read them from it when there")
    args = ap.parse_args(argv)
    if args.rows and args.rows.exists():
        rows = json.loads(args.rows.read_text(encoding="utf-8"))
    else:
        rows = collect()
        if args.rows:
            args.rows.write_text(json.dumps(rows), encoding="utf-8")
    print(f"{len(rows)} facets, {sum(r['y'] for r in rows)} topical", file=sys.stderr)
    x, y = np.array([r["x"] for r in rows]), np.array([r["y"] for r in rows])
    if args.step == "cv":
        print(json.dumps(cv(rows, args.linear), indent=1))
        if args.show:
            p = fit(x, y, args.linear)[0](x)
            for r, pi in zip(rows, p, strict=True):
                if (pi >= 0.5) != (r["y"] == 1):
                    print(f"{pi:.2f} y={r['y']} {r['unit']!r} in {r['question']!r}")
        return 0
    _, forest = fit(x, y)
    path = model_path()
    forest.booster_.save_model(str(path))
    topics = len({r["topic"] for r in rows})
    meta = {"features": FEATURES, "monotone": MONOTONE, "trained_on": len(rows), "topics": topics, "trees": TREES,
            "leaves": LEAVES, "leaf_examples": LEAF_EXAMPLES, "rate": RATE}  # fmt: skip
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(rows)} facets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
