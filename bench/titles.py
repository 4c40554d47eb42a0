"""Derived titles against the real ones: 500 ICML 2024 abstracts with their titles removed.

For each abstract, the title ``vectorstore.titles.derive_title`` makes is compared with the paper's real title by
content stems (stop-words dropped, Snowball stems): *recall* is the share of the real title's stems found in the
derived one, *precision* the share of the derived title's stems found in the real one. Also: ms per paper, and how
many derived titles break the shape rules (end on a function word, hold a finite verb, are cut with "…").

    .venv/bin/python -m bench.titles [--n 500] [--start 0] [--show 20]

The rules were tuned on ``--start 500 --n 1000`` (issue 26); the default 500 are the figure the README quotes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench.harness import BUNDLED, CONFERENCE

ICML2024 = CONFERENCE / "icml2024.jsonl"


def load(path: Path = ICML2024, n: int = 500, start: int = 0) -> list[tuple[str, str]]:
    """(real title, abstract) of the first ``n`` records that have both, after the first ``start`` such records."""
    out: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            title, abstract = str(rec.get("title") or "").strip(), str(rec.get("abstract") or "").strip()
            if title and abstract:
                out.append((title, abstract))
            if len(out) >= start + n:
                break
    return out[start:]


def overlap(real: str, derived: str) -> tuple[float, float]:
    """(recall, precision) of ``derived`` against ``real`` over content stems."""
    from askpapers.vectorstore.text import content_stems

    r, d = set(content_stems(real)), set(content_stems(derived))
    if not r or not d:
        return 0.0, 0.0
    return len(r & d) / len(r), len(r & d) / len(d)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--start", type=int, default=0, help="skip this many records first (500: the tuning split)")
    ap.add_argument("--show", type=int, default=20, help="print this many (real, derived) pairs")
    args = ap.parse_args()

    from askpapers.vectorstore.parse import parse_paths
    from askpapers.vectorstore.titles import derive_title

    pairs = load(n=args.n, start=args.start)
    derive_title(pairs[0][1])  # warm (imports, caches)
    t0 = time.perf_counter()
    derived = [derive_title(a) for _, a in pairs]
    ms = (time.perf_counter() - t0) * 1000 / len(pairs)
    scores = [overlap(real, d) for (real, _), d in zip(pairs, derived, strict=True)]
    recall = statistics.mean(s[0] for s in scores)
    precision = statistics.mean(s[1] for s in scores)
    f1 = statistics.mean(2 * r * p / (r + p) if r + p else 0.0 for r, p in scores)
    words = statistics.mean(len(d.split()) for d in derived)
    cut = sum(d.endswith("…") for d in derived)
    for (real, _), d in list(zip(pairs, derived, strict=True))[: args.show]:
        print(f"  real:    {real}\n  derived: {d}\n")
    print("Bundled corpus (data/icml2026):")
    for p in parse_paths([BUNDLED]).papers:
        print(f"  {p.title}")
    print(
        f"\nICML 2024, {len(pairs)} abstracts from record {args.start}: recall {recall:.3f}, "
        f"precision {precision:.3f}, F1 {f1:.3f}, {words:.1f} words per title, {cut} cut with '…', "
        f"{ms:.2f} ms per paper"
    )


if __name__ == "__main__":
    main()
