"""The one settings object: environment variables (``ASKPAPERS_*``) and ``.env``."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from vectorstore.config import StoreSettings


class RetrievalSettings(BaseSettings):
    """How many candidates each retriever contributes and how they are fused."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    k: int = Field(default=10, ge=1, le=500, description="Papers returned by search (and cap for factoid answers)")
    dense_candidates: int = Field(default=100, ge=10, description="Chunks fetched from Chroma per query")
    lexical_candidates: int = Field(default=200, ge=10, description="Papers fetched from BM25 per query")
    rrf_k: int = Field(default=10, ge=1, description="Reciprocal-rank-fusion constant")
    max_list: int = Field(default=50, ge=1, description="Most papers a which-papers answer cites")


class LLMSettings(BaseSettings):
    """The optional OpenAI-compatible endpoint (OpenAI, Azure-style gateways, Ollama, vLLM, llama.cpp, LM Studio)."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore", populate_by_name=True)

    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "ASKPAPERS_OPENAI_API_KEY")
    )
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "ASKPAPERS_OPENAI_BASE_URL")
    )
    model: str = Field(default="gpt-4.1-mini", validation_alias=AliasChoices("ASKPAPERS_LLM_MODEL"))
    temperature: float = Field(default=0.1, ge=0, le=2, validation_alias=AliasChoices("ASKPAPERS_LLM_TEMPERATURE"))
    timeout: float = Field(default=60.0, gt=0, validation_alias=AliasChoices("ASKPAPERS_LLM_TIMEOUT"))
    max_retries: int = Field(default=2, ge=0, le=10, validation_alias=AliasChoices("ASKPAPERS_LLM_MAX_RETRIES"))
    max_tokens: int = Field(default=700, ge=16, validation_alias=AliasChoices("ASKPAPERS_LLM_MAX_TOKENS"))
    context_chars: int = Field(default=12_000, ge=500, validation_alias=AliasChoices("ASKPAPERS_LLM_CONTEXT_CHARS"))
    context_papers: int = Field(default=12, ge=1, le=50, validation_alias=AliasChoices("ASKPAPERS_LLM_CONTEXT_PAPERS"))

    @property
    def configured(self) -> bool:
        """An endpoint counts as configured when a key or a base URL is set."""
        key = self.api_key.get_secret_value() if self.api_key else ""
        return bool(key.strip() or (self.base_url or "").strip())


class UISettings(BaseSettings):
    """The Gradio app."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Interface to bind (loopback by default)")
    port: int = Field(default=7860, ge=0, le=65535)
    auth: SecretStr | None = Field(default=None, description="user:password to require a login")

    def credentials(self) -> tuple[str, str] | None:
        if not self.auth or ":" not in self.auth.get_secret_value():
            return None
        user, _, password = self.auth.get_secret_value().partition(":")
        return user, password


class Settings(BaseSettings):
    """Everything askpapers reads from the environment, in one place."""

    model_config = SettingsConfigDict(env_prefix="ASKPAPERS_", env_file=".env", extra="ignore")

    store: StoreSettings = Field(default_factory=StoreSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    ui: UISettings = Field(default_factory=UISettings)
    mode: Literal["auto", "extractive", "llm"] = Field(default="auto", description="Default answer mode")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
