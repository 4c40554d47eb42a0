"""Long evidence sentences: the share of papers whose longest sentence (as ``vectorstore.text.sentence_spans`` reads
it) runs past 400 characters, on ICML 2024, ICLR 2024 (an export where 14% of abstracts lack the space after a full
stop) and ``corpus_dev.jsonl``; also the longest quote shown once such a sentence is trimmed around its words.

    .venv/bin/python -m bench.sentences [--limit 400] [--n 0]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from bench.harness import CONFERENCE

SETS = ("icml2024", "iclr2024", "corpus_dev")
_NO_SPACE = re.compile(r"[a-z]{2,}\.[A-Z][a-z]")


def abstracts(path: Path, n: int = 0) -> list[str]:
    out: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            a = str(json.loads(line).get("abstract") or "").strip()
            if a:
                out.append(a)
            if n and len(out) >= n:
                break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--n", type=int, default=0, help="only the first n abstracts of each set (0: all)")
    args = ap.parse_args()

    from askpapers.vectorstore import text

    trim = getattr(text, "trim", None)  # (absent before issue 26: the whole sentence was quoted)
    most = getattr(text, "QUOTE_MOST", 0)

    print(f"| set | papers | no space after a full stop | longest sentence > {args.limit} | longest quote shown | s |")
    print("|---|---|---|---|---|---|")
    for name in SETS:
        texts = abstracts(CONFERENCE / f"{name}.jsonl", args.n)
        t0 = time.perf_counter()
        long = 0
        shown = 0
        for a in texts:
            spans = text.sentence_spans(a)
            s, e = max(spans, key=lambda x: x[1] - x[0])
            long += e - s > args.limit
            quote = trim(a[s:e], text.content_stems(a[s:e])[:3], most) if trim else a[s:e]
            assert quote in a
            shown = max(shown, len(quote))
        secs = time.perf_counter() - t0
        gap = sum(bool(_NO_SPACE.search(a)) for a in texts)
        print(f"| {name} | {len(texts)} | {gap / len(texts):.1%} | {long / len(texts):.1%} | {shown} | {secs:.1f} |")


if __name__ == "__main__":
    main()
