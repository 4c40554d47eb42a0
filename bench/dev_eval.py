"""Per-question and mean figures over the dev questions (``make bench-dev``).

Usage: .venv/bin/python -m bench.dev_eval [QUESTIONS.jsonl]   (default ../shared/eval/dev_questions.jsonl)
Builds a fresh store of the bundled corpus in a temporary directory.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from askpapers.rag import AskPapers
from askpapers.rag.evaluation.metrics import load_jsonl, score_dev
from askpapers.rag.settings import RetrievalSettings, Settings
from bench.harness import SHARED, store_settings


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED / "eval" / "dev_questions.jsonl"
    items = load_jsonl(path)
    with tempfile.TemporaryDirectory() as tmp:
        app = AskPapers(Settings(store=store_settings(data_dir=Path(tmp)), retrieval=RetrievalSettings()))
        results = []
        for item in items:
            history = [{"role": "user", "content": h} for h in item.get("history", [])]
            res = score_dev(item, app.ask(item["question"], history))
            results.append(res)
            print(
                f"{res.qid} {res.kind:8} ok={res.ok!s:5} P={res.precision:.2f} R={res.recall:.2f} F1={res.f1:.2f} "
                f"{res.latency_s * 1000:6.0f} ms  {res.question}  -> {res.cited}"
            )
    lists = [r for r in results if r.kind == "list"]
    print()
    print(f"list mean F1 {statistics.mean(r.f1 for r in lists):.3f} over {len(lists)}")
    for kind in ("factoid", "none", "followup"):
        rs = [r for r in results if r.kind == kind]
        if rs:
            print(f"{kind}: {sum(r.ok for r in rs)}/{len(rs)} correct")
    print(f"evidence verbatim: {sum(r.verbatim for r in results)}/{len(results)} answers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
