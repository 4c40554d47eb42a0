"""Settings that the store needs (a nested part of :class:`rag.settings.Settings`)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "askpapers"


class StoreSettings(BaseSettings):
    """Where the Chroma store lives and how ingestion batches its work."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir, description="Chroma store and derived indexes")
    collection: str = Field(
        default="askpapers", description="Chroma collection name (chunks; papers go in NAME_papers)"
    )
    default_corpus: Path = Field(
        default=PROJECT_ROOT / "data" / "icml2026", description="Corpus ingested when the store is empty"
    )
    batch_size: int = Field(default=64, ge=1, le=5000, description="Papers embedded and written per batch")
    embed_threads: int = Field(default=0, ge=0, description="onnxruntime threads (0 = all cores)")
    chunk_sentences: int = Field(
        default=6, ge=1, le=50, description="Most sentences per chunk (windows overlap by one)"
    )
