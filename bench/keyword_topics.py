"""New "which papers use or study X?" questions over the dev keyword pool, for topics the dev questions do not ask.

The 29 conference dev questions are a small sample of topics. This draws more from the same pool with the dataset's
own label rule (``datasets/README.md``): a paper is relevant iff one of its author keywords, lowercased with ``-``,
``_`` and ``/`` read as spaces, holds the phrase as a whole word (a trailing ``s``/``es`` allowed); papers whose title
or abstract holds it but whose keywords do not are ``text_mention_only_ids`` (unknown). Topics are author keywords
that 4-40 pool papers carry, drawn at random (seeded), without the dev questions' keywords and aliases and without
phrases that hold one of them. The output reads like ``gold_questions_dev.jsonl``::

    .venv/bin/python -m bench.keyword_topics --n 60 --seed 1 > /tmp/topics.jsonl
    .venv/bin/askpapers eval /tmp/topics.jsonl --corpus $C/corpus_dev.jsonl --pool $C/keyword_pool_dev.ids --json

Dev data only (``corpus_dev.jsonl``); ICLR 2024 stays held out.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter

from bench.harness import CONFERENCE

RULE = (
    "relevant iff one of the paper's author keywords, lowercased with '-', '_' and '/' read as spaces, holds the "
    "phrase as a whole word with an optional trailing 's'/'es'; title and abstract are not used for labels"
)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[-_/]", " ", text.lower())).strip()


def pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?:s|es)?(?![a-z0-9])")


def topics(n: int, seed: int, low: int = 4, high: int = 40) -> list[dict[str, object]]:
    pool = set((CONFERENCE / "keyword_pool_dev.ids").read_text(encoding="utf-8").split())
    papers = []
    with (CONFERENCE / "corpus_dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in pool:
                papers.append(r)
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
    args = ap.parse_args(argv)
    for item in topics(args.n, args.seed):
        sys.stdout.write(json.dumps(item) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
