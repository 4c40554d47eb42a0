"""Calibrate when a request word belongs to the topic beside it ("tool use", "architecture search", "one-shot"),
from dev data: :data:`rag.read.resolve.GLUE`.

Positive pairs come from the author keywords of ``corpus_dev.jsonl``: a keyword that two papers or more carry and
that holds a request word (``rag.read.cues.REQUEST_WORDS``, or "non") next to a topic word is a term with that word in
it. Negative pairs come from the generated wordings (``rag.evaluation.frames``) of the dev topics: a request word
typed next to the topic ("use *reinforcement* learning", "*GANs* papers") is no part of it. For each pair, two
measures of the corpus (the pool, abstracts only):

- ``share``: of the papers that hold both words, the share that state them as the pair (adjacency given
  co-occurrence);
- ``min``: the papers stating the pair over those of the rarer word (the measure before this calibration).

It prints, for each measure, the cut with the best balanced accuracy and the pairs on the wrong side of it::

    .venv/bin/python -m bench.glue
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass

from askpapers.rag.evaluation.evaluate import conference_app, default_cache
from askpapers.rag.evaluation.frames import PHRASINGS, REQUESTS, fill
from askpapers.rag.read.cues import REQUEST_WORDS
from askpapers.vectorstore.text import STOPWORDS

from .keyword_topics import norm
from .topicality import COMPOUND_TOPICS, CONF, DEV_TOPICS

ASKING = REQUEST_WORDS | {"non"}
WORD = re.compile(r"[a-z0-9]+")


def content(word: str) -> bool:
    return word not in REQUEST_WORDS and word not in STOPWORDS and not word.isdigit()


def positives(papers: list[dict[str, object]]) -> list[tuple[str, str, bool]]:
    counts = Counter(k for p in papers for k in {norm(str(k)) for k in p.get("keywords") or []})  # type: ignore[attr-defined]
    out = set()
    for kw, n in counts.items():
        if n < 2:
            continue
        words = WORD.findall(kw)
        for i, w in enumerate(words):
            if w not in ASKING:
                continue
            if i + 1 < len(words) and content(words[i + 1]):
                out.add((w, words[i + 1], True))
            if i > 0 and content(words[i - 1]):
                out.add((w, words[i - 1], False))
    return sorted(out)


def negatives() -> list[tuple[str, str, bool]]:
    conf = [json.loads(line)["question"] for line in (CONF / "gold_questions_dev.jsonl").open(encoding="utf-8")]
    topics = [re.sub(r"^Which papers use or study (the )?|\?$", "", q) for q in conf]
    topics += list(COMPOUND_TOPICS.values()) + DEV_TOPICS
    out = set()
    for template in (*REQUESTS, *PHRASINGS):
        for topic in topics:
            words = WORD.findall(norm(topic))
            if not words:
                continue
            text = norm(fill(template, topic))
            for m in re.finditer(rf"\b([a-z]+) {re.escape(' '.join(words))}\b", text):
                if m.group(1) in ASKING and content(words[0]):
                    out.add((m.group(1), words[0], True))
            for m in re.finditer(rf"\b{re.escape(' '.join(words))} ([a-z]+)\b", text):
                if m.group(1) in ASKING and content(words[-1]):
                    out.add((m.group(1), words[-1], False))
    return sorted(out)


@dataclass
class Row:
    pair: str
    y: int  # 1: a keyword term, 0: a request word beside a topic in a wording
    n: int  # papers stating the pair
    before: bool  # the request word comes before the topic word
    measures: dict[str, float]


def main() -> int:
    papers = list(map(json.loads, (CONF / "corpus_dev.jsonl").open(encoding="utf-8")))
    app = conference_app(CONF / "corpus_dev.jsonl", CONF / "keyword_pool_dev.ids", default_cache())
    lx = app.parts.lexicon
    rows: list[Row] = []
    for label, pairs in ((1, positives(papers)), (0, negatives())):
        for w, c, before in pairs:
            a, b = (w, c) if before else (c, w)
            n = lx.phrase_df(f"{a} {b}")
            if label and n < 2:  # (a keyword the abstracts never state: no measure can tell)
                continue
            both = lx.both_df(a, b)
            share, least = n / both if both else 0.0, n / max(1, min(lx.df(a), lx.df(b)))
            rows.append(Row(f"{a} {b}", label, n, before, {"share": share, "min": least}))
    print(f"{sum(r.y for r in rows)} keyword pairs, {sum(1 - r.y for r in rows)} wording pairs", file=sys.stderr)
    for position in ("before", "after"):
        at = [r for r in rows if r.before == (position == "before")]
        for measure in ("share", "min"):
            best = (0.0, 0.0)
            for cut in sorted({r.measures[measure] for r in at}):
                pos = [r.measures[measure] >= cut and r.n >= 2 for r in at if r.y]
                neg = [r.measures[measure] < cut or r.n < 2 for r in at if not r.y]
                acc = (sum(pos) / max(len(pos), 1) + sum(neg) / max(len(neg), 1)) / 2
                best = max(best, (acc, cut))
            acc, cut = best
            wrong = [r.pair for r in at if (r.measures[measure] >= cut and r.n >= 2) != bool(r.y)]
            print(
                f"{position} the topic ({sum(r.y for r in at)} keyword, {sum(1 - r.y for r in at)} wording pairs), "
                f"{measure}: cut {cut:.3f}, balanced accuracy {acc:.3f}; wrong: {', '.join(wrong)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
