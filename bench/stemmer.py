"""PyStemmer against the pure-Python Snowball stemmer on the whole vocabulary of the conference corpus.

``vectorstore.text`` stems with PyStemmer (C); it replaced ``snowballstemmer`` (pure Python, the same English
algorithm). This prints how many distinct words the corpus has, how many stem differently (expected: none) and how
long each stemmer takes over the vocabulary.

Usage: .venv/bin/python -m bench.stemmer [--corpus FILE.jsonl]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from bench.harness import CONFERENCE


def main(argv: Sequence[str] | None = None) -> int:
    import snowballstemmer
    import Stemmer

    from askpapers.vectorstore.text import tokens

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, default=CONFERENCE / "corpus_dev.jsonl")
    args = ap.parse_args(argv)
    vocab: set[str] = set()
    papers = 0
    with args.corpus.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                vocab.update(tokens(f"{r.get('title') or ''} {r.get('abstract') or ''}"))
                papers += 1
    words = sorted(vocab)
    t = time.perf_counter()
    pure = [snowballstemmer.stemmer("english").stemWord(w) for w in words]
    pure_s = time.perf_counter() - t
    c = Stemmer.Stemmer("english", 0)
    t = time.perf_counter()
    fast = [c.stemWord(w) for w in words]
    fast_s = time.perf_counter() - t
    diff = [(w, a, b) for w, a, b in zip(words, pure, fast, strict=True) if a != b]
    print(f"{args.corpus.name}: {papers:,} papers, {len(words):,} distinct words")
    print(f"different stems: {len(diff):,}" + (f" (first: {diff[:10]})" if diff else ""))
    print(f"snowballstemmer {pure_s:.2f} s ({pure_s / len(words) * 1e6:.1f} µs a word); "
          f"PyStemmer {fast_s:.2f} s ({fast_s / len(words) * 1e6:.2f} µs a word)")  # fmt: skip
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
