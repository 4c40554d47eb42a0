"""The one settings object: environment variables (``ASKPAPERS_*``) and ``.env``."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from vectorstore.config import StoreSettings
from vectorstore.errors import ConfigError
from vectorstore.types import describe_validation


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
    auth: SecretStr | None = Field(
        default=None, description="user:password (several: comma-separated) to require a login"
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values the app answers (default: loopback names when bound to loopback)",
    )
    concurrency: int = Field(default=4, ge=1, le=64, description="Answers computed at once (others queue)")
    max_upload_mb: int = Field(default=200, ge=1, le=10_000, description="Largest uploaded file, in MB")

    @field_validator("auth")
    @classmethod
    def _pairs(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            _parse_auth(v.get_secret_value())  # raises with a message that never shows the secret
        return v

    def credentials(self) -> list[tuple[str, str]] | None:
        """The ``(user, password)`` pairs of ``ASKPAPERS_AUTH``, or None when no login is required."""
        if self.auth is None or not self.auth.get_secret_value().strip():
            return None
        return _parse_auth(self.auth.get_secret_value())


def _parse_auth(value: str) -> list[tuple[str, str]]:
    pairs = []
    for i, item in enumerate((p.strip() for p in value.split(",")), start=1):
        user, sep, password = item.partition(":")
        if not sep or not user.strip() or not password:
            raise ValueError(
                f"ASKPAPERS_AUTH must be user:password pairs separated by commas; pair {i} has "
                + ("no ':'" if not sep else "an empty user name" if not user.strip() else "an empty password")
            )
        pairs.append((user.strip(), password))
    return pairs


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
    """The settings from the environment and ``.env``; a malformed value is a :class:`ConfigError` naming it."""
    try:
        return Settings()
    except ValidationError as e:
        raise ConfigError(f"invalid setting: {describe_validation(e)}") from None
