"""Calibrate when units joined by a link are one term ("theory of mind", "structure from motion") rather than two
topics asked together ("bias in LLMs"), from dev data: :data:`rag.read.lexicon.TERM_SHARE`.

Positive phrases come from the author keywords of ``corpus_dev.jsonl``: a keyword that two papers or more carry, with
one link word (``rag.read.cues.LINKS``) between content words, is a term with the link in it. Negative phrases are
two of the pool's commonest keywords joined by a link ("foundation models in robotics"): two topics, typed together.
Only phrases the pool (abstracts only) states in at least ``MIN_TERM_PAPERS`` papers count, and only those the rules
before this one do not already join (a part too common to carry a topic, the same word either side, ``TERM``). For
each, the measure is the share of the papers holding both units that state them linked; the script prints the cut
with the best balanced accuracy and the phrases on the wrong side of it::

    .venv/bin/python -m bench.links          # about ten minutes: it counts many phrases in the index
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

from askpapers.rag.evaluation.evaluate import conference_app, default_cache
from askpapers.rag.read.cues import LINKS
from askpapers.rag.read.lexicon import MIN_TERM_PAPERS, TERM, assoc, common_unit

from .glue import content
from .keyword_topics import norm
from .topicality import CONF

WORD = re.compile(r"[a-z0-9]+")
TOPICS = 100  # the pool's commonest keywords paired for the negatives


def positives(papers: list[dict[str, object]]) -> set[tuple[str, str, str]]:
    counts = Counter(k for p in papers for k in {norm(str(k)) for k in p.get("keywords") or []})  # type: ignore[attr-defined]
    out = set()
    for kw, n in counts.items():
        words = WORD.findall(kw)
        at = [i for i, w in enumerate(words) if w in LINKS]
        if n < 2 or len(at) != 1:
            continue
        left, right = words[: at[0]], words[at[0] + 1 :]
        if left and right and all(content(w) for w in left + right):
            out.add((" ".join(left), words[at[0]], " ".join(right)))
    return out


def negatives(
    papers: list[dict[str, object]], pool: set[str], keywords: set[tuple[str, str, str]]
) -> set[tuple[str, str, str]]:
    counts = Counter(
        k
        for p in papers
        if p["id"] in pool
        for k in {norm(str(k)) for k in p.get("keywords") or []}  # type: ignore[attr-defined]
    )
    top = [k for k, _ in counts.most_common(4 * TOPICS) if not set(WORD.findall(k)) & LINKS][:TOPICS]
    return {(a, link, b) for a in top for b in top if a != b for link in sorted(LINKS)} - keywords


def main() -> int:
    papers = list(map(json.loads, (CONF / "corpus_dev.jsonl").open(encoding="utf-8")))
    pool = set((CONF / "keyword_pool_dev.ids").read_text(encoding="utf-8").split())
    app = conference_app(CONF / "corpus_dev.jsonl", CONF / "keyword_pool_dev.ids", default_cache())
    lx = app.parts.lexicon
    pos = positives(papers)
    rows: list[tuple[int, str, int, float]] = []  # (label, phrase, papers stating it, share of those holding both)
    for label, phrases in ((1, pos), (0, negatives(papers, pool, pos))):  # (sorted: the same order every run)
        for left, link, right in sorted(phrases):
            if label == 0 and lx.both_df(left, right) < MIN_TERM_PAPERS:
                continue
            whole = f"{left} {link} {right}"
            n = lx.phrase_df(whole)
            if n < MIN_TERM_PAPERS:
                continue
            lw, rw = left.split(), right.split()
            if common_unit(lw, lx) or common_unit(rw, lx) or lw[-1] == rw[0] or assoc(whole, left, right, lx) >= TERM:
                continue  # (joined by the rules before this one)
            rows.append((label, whole, n, n / max(1, lx.both_df(left, right))))
    npos, nneg = sum(r[0] for r in rows), sum(1 - r[0] for r in rows)
    print(f"{npos} keyword terms, {nneg} pairs of keyword topics (stated by {MIN_TERM_PAPERS}+ papers)")
    best = (0.0, 0.0)
    for cut in sorted({r[3] for r in rows}):
        tp = sum(r[3] >= cut for r in rows if r[0]) / max(npos, 1)
        tn = sum(r[3] < cut for r in rows if not r[0]) / max(nneg, 1)
        best = max(best, ((tp + tn) / 2, cut))
    acc, cut = best
    below = max((r[3] for r in rows if not r[0] and r[3] < cut), default=0.0)
    print(f"share: cut {cut:.3f} (the highest pair below it {below:.3f}), balanced accuracy {acc:.3f}")
    for label, whole, n, share in sorted(rows, key=lambda r: -r[3]):
        side = "wrong" if (share >= cut) != bool(label) else "     "
        print(f"  {side} {'term' if label else 'pair'} {share:.3f} ({n} papers) {whole}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
