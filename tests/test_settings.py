"""The one settings tree: flat environment variables fill its sections, nothing else reads the environment, and
the README's table is the tree's own list."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from askpapers.rag.settings import Settings, settings_rows, settings_table
from tests.conftest import ROOT


def test_the_readme_table_is_the_settings_tree() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert settings_table() in readme, "regenerate the README table with askpapers.rag.settings.settings_table()"
    names = [v for v, _, _ in settings_rows()]
    assert len(names) == len(set(names)) and len(names) > 40


def test_only_the_root_reads_the_environment() -> None:
    found = []
    for pkg_name in ("askpapers.rag", "askpapers.vectorstore", "askpapers.ui"):
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            if info.name in ("askpapers.ui.app", "askpapers.ui.app_events", "askpapers.ui.app_tabs"):  # (gradio)
                continue
            mod = importlib.import_module(info.name)
            for n, v in vars(mod).items():
                if isinstance(v, type) and issubclass(v, BaseSettings) and v.__module__ == mod.__name__:
                    found.append(f"{info.name}.{n}")
    assert found == ["askpapers.rag.settings.Settings"]


def test_flat_variables_fill_the_sections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for k, v in {"ASKPAPERS_K": "3", "ASKPAPERS_LLM_MODEL": "m1", "OPENAI_API_KEY": "sk-x",
                 "ASKPAPERS_ALLOWED_HOSTS": '["a.example"]', "ASKPAPERS_DENSE_ALONE": "0.7",
                 "ASKPAPERS_EMBED_THREADS": "1", "ASKPAPERS_MODE": "extractive",
                 "ASKPAPERS_CHROMA_HEADERS": '{"X-T": "1"}'}.items():  # fmt: skip
        monkeypatch.setenv(k, v)
    s = Settings()
    assert (s.retrieval.k, s.llm.model, s.ui.allowed_hosts, s.answer.dense_alone) == (3, "m1", ["a.example"], 0.7)
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "sk-x" and s.llm.configured
    assert (s.embedder.threads, s.mode, s.store.chroma_headers) == (1, "extractive", {"X-T": "1"})
    (tmp_path / ".env").write_text("ASKPAPERS_PORT=7999\nASKPAPERS_K=9\n")
    s = Settings()
    assert s.ui.port == 7999 and s.retrieval.k == 3, "the environment wins over .env"
    explicit = Settings(retrieval={"k": 5})  # type: ignore[arg-type]
    assert explicit.retrieval.k == 5 and explicit.llm.model == "m1"


def test_askpapers_k_sets_search_size(monkeypatch: pytest.MonkeyPatch, corpus_settings: Settings) -> None:
    from askpapers.rag.api import search

    monkeypatch.setenv("ASKPAPERS_K", "3")
    settings = Settings(store=corpus_settings.store)
    assert len(search("information bottleneck", settings=settings)) == 3
    assert len(search("information bottleneck", k=7, settings=settings)) == 7


def test_a_malformed_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from askpapers.rag.settings import get_settings
    from askpapers.vectorstore.errors import ConfigError

    monkeypatch.setenv("ASKPAPERS_K", "many")
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigError, match="ASKPAPERS_K"):
            get_settings()
    finally:
        get_settings.cache_clear()
