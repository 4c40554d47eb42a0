"""A relaxed answer says so in LLM mode as in extractive mode: when no paper meets every part of the question, the
papers that come closest are listed under a first line that says none meets all of it (not "Found N papers
matching"). On the hand-made corpus of tests/test_match.py, against a real OpenAI-compatible HTTP server on
127.0.0.1 (tests/fake_openai.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import make_settings, memory_app, with_filler
from tests.test_match import FILLER, PAPERS

QUESTION = "Which papers study image generation navigation?"  # both parts stated, never in one paper


def test_a_relaxed_answer_says_so_in_llm_mode_too(tmp_path: Path, embedder: Any) -> None:
    from askpapers.rag.api import AskPapers
    from askpapers.rag.settings import LLMSettings
    from tests.fake_openai import FakeOpenAI, Reply

    app = memory_app(tmp_path, with_filler(PAPERS, FILLER), embedder)
    extractive = app.ask(QUESTION, mode="extractive", k=1000)
    assert extractive.text.startswith("No paper meets all of"), extractive.text
    fake = FakeOpenAI().start()
    try:
        fake.quiet_steps()
        fake.on("answer", Reply("These papers generate images [1]."))
        llm = LLMSettings(api_key="sk-test-0123456789", base_url=fake.url, model="test-model", timeout=5.0)
        with_llm = AskPapers(make_settings(tmp_path / "store", llm=llm), index=app.index)
        answer = with_llm.ask(QUESTION, mode="llm", k=1000)
    finally:
        fake.stop()
    assert answer.mode == "llm" and fake.of("answer"), answer.text
    first_line = answer.text.splitlines()[0]
    assert first_line.startswith("No paper meets all of") and "closest" in first_line, answer.text
    assert {c.paper_id for c in answer.citations} <= set(extractive.paper_ids)
