"""Shared fixtures: a store built once from the bundled corpus, in a temporary directory."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "icml2026"

# ASKPAPERS_TEST_CHROMA=server runs the store-backed tests against a real `chroma run` server (started once
# per session on a free port) instead of the embedded PersistentClient; `make test` runs both.
SERVER_MODE = os.environ.get("ASKPAPERS_TEST_CHROMA", "embedded") == "server"
_PORT_VAR = "ASKPAPERS_TEST_CHROMA_PORT"  # in the environment: test modules import this file a second time

# Never let a test touch the user's store, or reach a developer's LLM endpoint.
os.environ.setdefault("ASKPAPERS_DATA_DIR", "/nonexistent-askpapers-test-dir")
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ASKPAPERS_LLM_MODEL", "ASKPAPERS_MODE"):
    os.environ.pop(_var, None)


class RememberingEmbedder:
    """The real embedder, remembering the vectors of each batch it has embedded: the many tests that ingest the
    bundled corpus into a store of their own run the model on it once per session, not once per test. A batch
    seen before gets the same vectors the model gave it (the model is deterministic); anything else, queries
    included, runs the model."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._seen: dict[tuple[tuple[str, ...], int], Any] = {}
        self.model_runs = 0

    def embed(self, texts: Any, batch_size: int = 8) -> Any:
        key = (tuple(texts), batch_size)
        if key not in self._seen:
            self.model_runs += 1
            self._seen[key] = self._real.embed(texts, batch_size)
        return self._seen[key].copy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from askpapers.vectorstore.embed import get_embedder

    return RememberingEmbedder(get_embedder())


@pytest.fixture(scope="session", autouse=True)
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not SERVER_MODE:
        yield None
        return
    from tests.chroma_server import ChromaServer

    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data").start()
    os.environ[_PORT_VAR] = str(server.port)
    yield server
    server.stop()


def make_settings(data_dir: Path, collection: str = "askpapers", llm=None):  # type: ignore[no-untyped-def]
    """Settings for a store of its own: a data directory, and in server mode a collection on the test server."""
    from askpapers.rag.settings import LLMSettings, RetrievalSettings, Settings
    from askpapers.vectorstore.config import StoreSettings

    server: dict[str, Any] = {}
    if SERVER_MODE:
        assert os.environ.get(_PORT_VAR), "the chroma_server fixture has not started"
        tag = hashlib.sha1(str(data_dir).encode()).hexdigest()[:10]
        server = {"chroma_host": "127.0.0.1", "chroma_port": int(os.environ[_PORT_VAR])}
        collection = f"{collection}-{tag}"
    return Settings(
        store=StoreSettings(data_dir=data_dir, collection=collection, default_corpus=CORPUS, **server),
        retrieval=RetrievalSettings(),
        llm=llm or LLMSettings(api_key=None, base_url=None),
    )


def memory_app(root: Path, papers: dict[str, tuple[str, str]], embedder: Any) -> Any:
    """The facade over these papers (id: (title, abstract)) in an in-memory index, read from a JSONL file as an
    ingest reads it (the matcher reads papers through the index interface alone)."""
    import json

    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex

    rows = [{"id": pid, "title": t, "abstract": a} for pid, (t, a) in papers.items()]
    (root / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    index = MemoryIndex.from_files([root / "papers.jsonl"], embedder)
    assert index.count() == len(rows)
    return AskPapers(make_settings(root / "store"), index=index)


def with_filler(papers: dict[str, tuple[str, str]], filler: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The papers, then the filler papers under ids f-0, f-1, ..."""
    return {**papers, **{f"f-{i}": tf for i, tf in enumerate(filler)}}


@pytest.fixture(scope="session")
def corpus_settings(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Settings of a store holding the 38 bundled abstracts (built once per session)."""
    from askpapers.vectorstore.pipeline import ingest

    settings = make_settings(tmp_path_factory.mktemp("store"))
    report = ingest([CORPUS], settings.store, progress=False)
    assert report.added == 38
    return settings


@pytest.fixture(scope="session")
def app(corpus_settings):  # type: ignore[no-untyped-def]
    from askpapers.rag.api import AskPapers

    return AskPapers(corpus_settings)


@pytest.fixture()
def fresh_settings(tmp_path: Path) -> Iterator[object]:
    yield make_settings(tmp_path / "store")


@pytest.fixture
def every_unit_topical(monkeypatch: pytest.MonkeyPatch) -> None:
    """The topicality forest weighing every unit of a question as a topic (0.97): a test of the reading and of the
    corpus's measures, not of the model (the conference dev pool gave "q" 0.96, "contributions" 0.97, "impact"
    0.82-0.95)."""
    from askpapers.rag.read import resolve

    monkeypatch.setattr(resolve, "topicality", lambda units, lexicon: [0.97 for _ in units])
