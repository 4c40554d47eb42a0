"""How many store lookups the planner and the answer make per question: counted, not timed.

Every call of a :class:`~rag.retrieve.chroma_index.PaperIndex` method that reads Chroma or the BM25 index is counted,
per question asked once with extractive ``ask``: while the question is read (the planner, :meth:`AskPapers.read`) and
while it is answered (the retrievers, the reranker and the matcher). A lookup answered from a per-revision
cache without reaching SQLite or Chroma is not counted: the counts are of the calls that reach
:class:`~vectorstore.lexical.LexicalIndex` and :class:`~vectorstore.store.Store`.

Usage: .venv/bin/python -m bench.lookups [--data-dir DIR --collection NAME] [--json]
(default: the bundled corpus's store; ``--data-dir`` a store such as ``bench.scale``'s random 50k one).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness import log, store_settings

# what reaches the BM25 index (SQLite) and what reaches Chroma
LEXICAL = ["word_df", "words_with_stems", "vocabulary", "phrase_count", "facet_count", "venues", "size", "search",
           "phrase_search", "facet_search", "all_words_search", "phrase_ids", "all_words_ids", "field_scores",
           "doc_texts", "state"]  # fmt: skip
STORE = ["get_papers", "chunk_vectors", "paper_vectors", "chunk_texts", "nearest_chunk_ids", "nearest_paper_ids",
         "query_chunks", "count", "iter_papers"]  # fmt: skip


class Counts:
    def __init__(self) -> None:
        self.phase = "other"
        self.calls: Counter[tuple[str, str]] = Counter()
        self.args: Counter[tuple[str, str, str]] = Counter()

    def wrap(self, obj: Any, names: Sequence[str], kind: str) -> None:
        for name in names:
            real = getattr(obj, name, None)
            if real is None:
                continue
            setattr(obj, name, self._counted(real, f"{kind}.{name}"))

    def _counted(self, real: Callable[..., Any], label: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[(self.phase, label)] += 1
            self.args[(self.phase, label, repr((args, kwargs))[:300])] += 1
            return real(*args, **kwargs)

        return call

    def reset(self) -> None:
        self.calls.clear()
        self.args.clear()


def count_lookups(data_dir: Path | None, collection: str | None, qs: list[str]) -> dict[str, Any]:
    from askpapers.rag.api import AskPapers
    from askpapers.rag.settings import get_settings
    from askpapers.vectorstore.lexical import LexicalIndex

    settings = get_settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"store": store_settings(data_dir=data_dir, collection=collection)})
    app = AskPapers(settings, warm=False)
    index = app.store_index
    counts = Counts()
    for name in LEXICAL:  # (on the class: the index object is replaced when it is rebuilt)
        if hasattr(LexicalIndex, name):
            setattr(LexicalIndex, name, counts._counted(getattr(LexicalIndex, name), f"lexical.{name}"))
    counts.wrap(index.store, STORE, "chroma")
    real_read = app.read

    def read(question: str) -> Any:  # (ask reads the question first: those lookups are the planner's)
        counts.phase = "plan"
        try:
            return real_read(question)
        finally:
            counts.phase = "answer"

    app.read = read  # type: ignore[method-assign]
    per_question: list[dict[str, Any]] = []
    for q in qs:
        counts.reset()
        counts.phase = "answer"
        app.ask(q, mode="extractive")
        plan = sum(n for (phase, _), n in counts.calls.items() if phase == "plan")
        ask = sum(n for (phase, _), n in counts.calls.items() if phase == "answer")
        repeats = sum(n - 1 for n in counts.args.values() if n > 1)
        per_question.append({"question": q, "plan": plan, "answer": ask, "repeated": repeats,
                             "calls": {f"{p}:{k}": n for (p, k), n in sorted(counts.calls.items())}})  # fmt: skip
    return {"size": index.size(), "questions": per_question}


def main(argv: Sequence[str] | None = None) -> int:
    from bench.scale import first_time_questions

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--collection", default="scale")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = count_lookups(args.data_dir, args.collection if args.data_dir else None, first_time_questions())
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    qs = result["questions"]
    total: Counter[str] = Counter()
    for q in qs:
        total.update(q["calls"])
    log(f"{result['size']:,} papers, {len(qs)} questions, first time each")
    for key in ("plan", "answer", "repeated"):
        values = [q[key] for q in qs]
        print(f"{key}: mean {statistics.mean(values):.1f}, median {statistics.median(values)}, max {max(values)}")
    for label, n in total.most_common():
        print(f"  {label}: {n / len(qs):.1f} a question")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
