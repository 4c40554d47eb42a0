"""The store's and the embedder's settings: sections of the one settings tree, :class:`rag.settings.Settings`.

They are plain models: they read nothing from the environment themselves. The root reads it once and passes the
sections down.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from askpapers.vectorstore.resources import bundled_corpus


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "askpapers"


class EmbedderSettings(BaseModel):
    """The local embedder (all-MiniLM-L6-v2, int8 ONNX)."""

    model_config = ConfigDict(extra="forbid")

    threads: int = Field(default=0, ge=0, description="onnxruntime threads (0 = all cores)")


class StoreSettings(BaseModel):
    """Where the Chroma store lives and how ingestion batches its work."""

    model_config = ConfigDict(extra="forbid")

    data_dir: Path = Field(default_factory=_default_data_dir, description="Chroma store and derived indexes")
    collection: str = Field(
        default="askpapers", description="Chroma collection name (chunks; papers go in NAME_papers)"
    )
    default_corpus: Path = Field(default_factory=bundled_corpus, description="Corpus ingested when the store is empty")
    batch_size: int = Field(default=256, ge=1, le=5000, description="Papers per batch (one commit each)")
    chunk_sentences: int = Field(
        default=0, ge=0, le=50, description="Most sentences per chunk (0: as many as fit in 256 tokens)"
    )
    chunk_overlap: int = Field(default=0, ge=0, le=5, description="Sentences a chunk shares with the next")

    # -- where Chroma runs: embedded (default), a `chroma run` server, or Chroma Cloud ------------------
    chroma_host: str = Field(default="", description="Chroma server host; set it to use chromadb.HttpClient")
    chroma_port: int = Field(default=8000, ge=1, le=65535, description="Chroma server port")
    chroma_ssl: bool = Field(default=False, description="Use https to reach the Chroma server")
    chroma_headers: dict[str, str] = Field(
        default_factory=dict, description='Extra HTTP headers for the server, as JSON: {"X-Chroma-Token": "…"}'
    )
    chroma_token: SecretStr | None = Field(
        default=None, description="Chroma server auth token, sent as 'Authorization: Bearer …'"
    )
    chroma_tenant: str = Field(default="default_tenant", description="Chroma tenant (server and Cloud)")
    chroma_database: str = Field(default="default_database", description="Chroma database (server and Cloud)")
    chroma_cloud_api_key: SecretStr | None = Field(
        default=None, description="Chroma Cloud API key; set it to use chromadb.CloudClient"
    )

    @property
    def mode(self) -> str:
        """'cloud', 'server' or 'embedded'."""
        if self.chroma_cloud_api_key is not None:
            return "cloud"
        return "server" if self.chroma_host else "embedded"

    def describe(self) -> str:
        """Where the store is, for messages (never includes a secret)."""
        if self.mode == "cloud":
            return f"Chroma Cloud (tenant {self.chroma_tenant}, database {self.chroma_database})"
        if self.mode == "server":
            scheme = "https" if self.chroma_ssl else "http"
            return f"the Chroma server at {scheme}://{self.chroma_host}:{self.chroma_port}"
        return f"the Chroma store at {self.data_dir}"
