"""The one settings object: environment variables (``ASKPAPERS_*``) and ``.env``."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from vectorstore.config import StoreSettings


class RetrievalSettings(BaseSettings):
    """How many candidates each retriever contributes and how they are fused."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    k: int = Field(default=10, ge=1, le=500, description="Papers returned by search (and cap for factoid answers)")
    dense_candidates: int = Field(default=300, ge=10, description="Chunks fetched from Chroma per query")
    lexical_candidates: int = Field(default=200, ge=10, description="Papers fetched from BM25 per query")
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant")
    max_list: int = Field(default=50, ge=1, description="Most papers a which-papers answer cites")


class Settings(BaseSettings):
    """Everything askpapers reads from the environment, in one place."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    store: StoreSettings = Field(default_factory=StoreSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
