"""Requests, tokens and wall time of one LLM answer over 51 matching papers, against the fake OpenAI-compatible
server on 127.0.0.1 with a fixed delay per request (``python -m bench.llm_mapreduce [--delay 0.05]``).

The corpus is the 60-paper fixture of tests/test_mapreduce.py (51 papers on model merging). The defaults of
``ASKPAPERS_LLM_CONTEXT_CHARS`` (12,000) and ``ASKPAPERS_LLM_MAX_CONCURRENCY`` (4) apply unless given. Nothing
is read from ../shared; the store is built in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05, help="seconds the server waits before each reply")
    ap.add_argument("--context-chars", type=int, default=12_000)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()

    from pydantic import SecretStr

    from askpapers.rag import Answer, AskPapers, Progress
    from askpapers.rag.settings import AnswerSettings, LLMSettings, Settings
    from askpapers.vectorstore import ingest
    from askpapers.vectorstore.config import StoreSettings
    from tests.fake_openai import FakeOpenAI
    from tests.test_mapreduce import MERGING, merging_records

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in merging_records()), encoding="utf-8")
        store = StoreSettings(data_dir=Path(tmp) / "store")
        ingest([corpus], store, progress=False)
        fake = FakeOpenAI().start()
        try:
            llm = LLMSettings(api_key=SecretStr("sk-bench"), base_url=fake.url, model="bench",
                              context_chars=args.context_chars, max_concurrency=args.concurrency,
                              max_retries=0)  # fmt: skip
            app = AskPapers(Settings(store=store, llm=llm, answer=AnswerSettings(max_list=100)))
            for run in ("first (cold: imports LangChain's OpenAI client)", "second (warm)"):
                script(fake, args.delay)
                started = time.perf_counter()
                first, answer = None, None
                for item in app.ask_stream(MERGING):
                    if isinstance(item, str) and first is None:
                        first = time.perf_counter() - started
                    if isinstance(item, Progress):
                        print(f"  {time.perf_counter() - started:6.3f} s  {item.text}")
                    if isinstance(item, Answer):
                        answer = item
                wall = time.perf_counter() - started
                assert answer is not None and first is not None
                steps = {s: fake.steps.count(s) for s in dict.fromkeys(fake.steps)}
                print(f"{run}: {len(answer.citations)} of {answer.total} papers cited, mode {answer.mode}; requests by "
                      f"step {steps}; usage {answer.usage}; first text after {first:.3f} s, answer after {wall:.3f} s "
                      f"({args.delay * 1000:.0f} ms per request)")  # fmt: skip
        finally:
            fake.stop()


def script(fake: Any, delay: float) -> None:
    """Every step answers after ``delay`` seconds: notes citing each paper of a batch, and a merge citing all."""
    from tests.fake_openai import Reply, echo_condense
    from tests.test_mapreduce import merged_answer, notes_citing_all

    fake.reset()
    fake.default("condense", Reply(echo_condense, hang=delay))
    fake.default("judge", Reply('{"verdicts": []}', hang=delay))
    fake.default("map", Reply(notes_citing_all, hang=delay))
    fake.default("reduce", Reply(merged_answer, hang=delay))


if __name__ == "__main__":
    main()
