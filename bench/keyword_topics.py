"""New "which papers use or study X?" questions over the dev keyword pool, for topics the dev questions do not ask.

The 29 conference dev questions are a small sample of topics. This draws more from the same pool with the dataset's
own label rule (``datasets/README.md``): a paper is relevant iff one of its author keywords, lowercased with ``-``,
``_`` and ``/`` read as spaces, holds the phrase as a whole word (a trailing ``s``/``es`` allowed); papers whose title
or abstract holds it but whose keywords do not are ``text_mention_only_ids`` (unknown). Topics are author keywords
that 4-40 pool papers carry, drawn at random (seeded), without the dev questions' keywords and aliases and without
phrases that hold one of them. The output reads like ``gold_questions_dev.jsonl``::

    .venv/bin/python -m bench.keyword_topics --n 60 --seed 1 > /tmp/topics.jsonl
    .venv/bin/askpapers eval /tmp/topics.jsonl --corpus $C/corpus_dev.jsonl --pool $C/keyword_pool_dev.ids --json

``--pairs`` draws two-facet questions instead, for facet combinations the topicality model never saw: a keyword
of the held-out topics above (seeds 1-3, whose keywords ``bench.topicality`` leaves out of training) and another
author keyword (10-150 pool papers) that 3-40 pool papers carry together, asked "X in Y", "X for Y", "X with Y" or
"Y for X"; a paper is relevant iff its keywords hold both (the same rule), mentions are papers whose text holds
both::

    .venv/bin/python -m bench.keyword_topics --pairs --n 50 --seed 11 > /tmp/pairs.jsonl

Dev data only (``corpus_dev.jsonl``); ICLR 2024 stays held out.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from typing import Any

from bench.harness import CONFERENCE

RULE = (
    "relevant iff one of the paper's author keywords, lowercased with '-', '_' and '/' read as spaces, holds the "
    "phrase as a whole word with an optional trailing 's'/'es'; title and abstract are not used for labels"
)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[-_/]", " ", text.lower())).strip()


def pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?:s|es)?(?![a-z0-9])")


def pool_papers() -> list[dict[str, Any]]:
    """The papers of the dev keyword pool, in the corpus file's order."""
    pool = set((CONFERENCE / "keyword_pool_dev.ids").read_text(encoding="utf-8").split())
    papers = []
    with (CONFERENCE / "corpus_dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in pool:
                papers.append(r)
    return papers


def _carry(papers: list[dict[str, Any]], name: str) -> set[str]:
    pat = pattern(name)
    return {p["id"] for p in papers if any(pat.search(norm(str(k))) for k in p.get("keywords") or [])}


HELD_OUT_SEEDS = (1, 2, 3)  # the seeds of the held-out topics (60 each) whose keywords lead the pairs
PAIR_JOINS = ("{a} in {b}", "{a} for {b}", "{a} with {b}", "{b} for {a}")


def held_out_keywords() -> set[str]:
    """The keywords of the held-out topics (:data:`HELD_OUT_SEEDS`): ``bench.topicality`` never trains on them."""
    return {norm(str(t["keyword"])) for s in HELD_OUT_SEEDS for t in topics(60, s)}


def pairs(n: int, seed: int, low: int = 3, high: int = 40) -> list[dict[str, object]]:
    """Two-facet questions over held-out keywords (see the module text)."""
    papers = pool_papers()
    held = sorted(held_out_keywords())
    counts = Counter(k for p in papers for k in {norm(str(k)) for k in p.get("keywords") or []})
    others = sorted(k for k, c in counts.items()
                    if 10 <= c <= 150 and re.fullmatch(r"[a-z][a-z ]*", k) and len(k.split()) <= 3)  # fmt: skip
    carried = {k: _carry(papers, k) for k in others}
    found = []
    for a in held:
        with_a = _carry(papers, a)
        for b in others:
            if set(a.split()) & set(b.split()) or b in held:
                continue
            relevant = sorted(with_a & carried[b])
            if low <= len(relevant) <= high and len(relevant) < len(with_a):
                found.append((a, b, relevant))
    random.Random(seed).shuffle(found)
    texts = {p["id"]: norm(p.get("title", "") + " . " + p["abstract"]) for p in papers}
    out: list[dict[str, object]] = []
    used: set[str] = set()
    for a, b, relevant in found:
        if a in used:
            continue
        used.add(a)
        pa, pb = pattern(a), pattern(b)
        mentions = sorted(i for i, t in texts.items() if i not in relevant and pa.search(t) and pb.search(t))
        topic = PAIR_JOINS[len(out) % len(PAIR_JOINS)].format(a=a, b=b)
        out.append({
            "qid": f"kwpair-{seed}-{len(out):03d}", "question": f"Which papers use or study {topic}?",
            "facets": [[a], [b]], "relevant_ids": relevant, "text_mention_only_ids": mentions,
            "label_rule": RULE + " (both keywords)",
        })  # fmt: skip
        if len(out) == n:
            break
    return out


def topics(n: int, seed: int, low: int = 4, high: int = 40) -> list[dict[str, object]]:
    papers = pool_papers()
    taken: set[str] = set()
    for name in ("gold_questions_dev.jsonl", "compound_questions_dev.jsonl"):
        with (CONFERENCE / name).open(encoding="utf-8") as fh:
            for line in fh:
                item = json.loads(line)
                taken.update(norm(k) for k in [item.get("keyword", ""), *item.get("aliases", [])] if k)
                taken.update(norm(k) for facet in item.get("facets", []) for k in facet)
    counts = Counter(k for p in papers for k in {norm(k) for k in p.get("keywords") or []})
    names = sorted(
        k for k, c in counts.items()
        if low <= c and 1 <= len(k.split()) <= 3 and re.fullmatch(r"[a-z][a-z0-9 ]*", k)
        and not any(pattern(t).search(k) or pattern(k).search(t) for t in taken)
    )  # fmt: skip
    out: list[dict[str, object]] = []
    for i, name in enumerate(random.Random(seed).sample(names, len(names))):
        pat = pattern(name)
        relevant = sorted(p["id"] for p in papers if any(pat.search(norm(k)) for k in p.get("keywords") or []))
        if not low <= len(relevant) <= high:
            continue
        mentions = sorted(
            p["id"] for p in papers
            if p["id"] not in relevant and pat.search(norm(p.get("title", "") + " . " + p["abstract"]))
        )  # fmt: skip
        out.append({
            "qid": f"kwtopic-{seed}-{i:03d}", "question": f"Which papers use or study {name}?", "keyword": name,
            "aliases": [], "relevant_ids": relevant, "text_mention_only_ids": mentions, "label_rule": RULE,
        })  # fmt: skip
        if len(out) == n:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.keyword_topics")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pairs", action="store_true", help="two-facet questions over held-out keywords")
    args = ap.parse_args(argv)
    for item in pairs(args.n, args.seed) if args.pairs else topics(args.n, args.seed):
        sys.stdout.write(json.dumps(item) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
