"""Shared fixtures: a store built once from the bundled corpus, in a temporary directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "icml2026"

# Never let a test touch the user's store, or reach a developer's LLM endpoint.
os.environ.setdefault("ASKPAPERS_DATA_DIR", "/nonexistent-askpapers-test-dir")
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ASKPAPERS_LLM_MODEL", "ASKPAPERS_MODE"):
    os.environ.pop(_var, None)


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from vectorstore.embed import get_embedder

    return get_embedder()


def make_settings(data_dir: Path, collection: str = "askpapers", llm=None):  # type: ignore[no-untyped-def]
    from rag.settings import LLMSettings, RetrievalSettings, Settings
    from vectorstore.config import StoreSettings

    return Settings(
        store=StoreSettings(data_dir=data_dir, collection=collection, default_corpus=CORPUS),
        retrieval=RetrievalSettings(),
        llm=llm or LLMSettings(api_key=None, base_url=None),
    )


@pytest.fixture(scope="session")
def corpus_settings(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Settings of a store holding the 38 bundled abstracts (built once per session)."""
    from vectorstore.pipeline import ingest

    settings = make_settings(tmp_path_factory.mktemp("store"))
    report = ingest([CORPUS], settings.store, progress=False)
    assert report.added == 38
    return settings


@pytest.fixture(scope="session")
def app(corpus_settings):  # type: ignore[no-untyped-def]
    from rag.api import AskPapers

    return AskPapers(corpus_settings)


@pytest.fixture()
def fresh_settings(tmp_path: Path) -> Iterator[object]:
    yield make_settings(tmp_path / "store")
