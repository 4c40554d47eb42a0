"""The one settings tree: a root :class:`Settings` read once from the environment and ``.env``, with plain sections.

Sections are ordinary pydantic models (store, embedder, retrieval, answer, llm, ui) that read nothing themselves;
the root is built once (:func:`get_settings`, or by a caller) and passed down. Each field has one environment
variable: ``ASKPAPERS_`` plus its name (``ASKPAPERS_LLM_`` for the llm section), unless the field names others
(``OPENAI_API_KEY``). :func:`settings_rows` lists them all; a test checks the README's table against it.
"""

from __future__ import annotations

import json
import os
import typing
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from askpapers.vectorstore.config import EmbedderSettings, StoreSettings
from askpapers.vectorstore.errors import ConfigError
from askpapers.vectorstore.upload import UploadLimits


class RetrievalSettings(BaseModel):
    """How many candidates each retriever contributes and how they are fused."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=10, ge=1, le=500, description="Papers returned by search (and cap for factoid answers)")
    dense_candidates: int = Field(default=100, ge=10, description="Chunks fetched from Chroma per query")
    lexical_candidates: int = Field(default=200, ge=10, description="Papers fetched from BM25 per query")
    rrf_k: int = Field(default=10, ge=1, description="Reciprocal-rank-fusion constant")
    ranker: Literal["learned", "rrf"] = Field(
        default="learned", description="How search orders the fused candidates: the shipped LightGBM reranker over "
        "the top 200 (learned) or reciprocal-rank fusion alone (rrf)"
    )  # fmt: skip


class AnswerSettings(BaseModel):
    """The extractive answerer's decision rule and the citation checks, with why each value is what it is."""

    model_config = ConfigDict(extra="forbid")

    max_list: int = Field(
        default=50, ge=1, description="Papers a which-papers answer lists unless k asks for more (up to 1,000); the "
        "count is always the true total"
    )  # fmt: skip
    dense_alone: float = Field(
        default=0.62, ge=0, le=1, description="Cosine at which a paper matches a topic it does not state, if its best "
        "sentence holds half the topic's words (tuned on the dev questions)"
    )  # fmt: skip
    dense_with_terms: float = Field(
        default=0.45, ge=0, le=1, description="Cosine at which a paper matches when one sentence holds all the "
        "topic's words (below it, such sentences were mostly other topics)"
    )  # fmt: skip
    factoid_min_coverage: float = Field(
        default=0.34, ge=0, le=1, description="Share of a factoid question's words the quoted sentence must hold, "
        "else the answer abstains (a third: one of three content words)"
    )  # fmt: skip
    dense_spellings: int = Field(
        default=3, ge=1, le=10, description="Spellings of a topic searched densely (each costs one embedding; the "
        "rest are searched only as phrases)"
    )  # fmt: skip
    dense_topic_chunks: int = Field(
        default=100, ge=10, le=1000, description="Nearest chunks fetched per spelling of a topic"
    )
    support_lexical: float = Field(
        default=0.3, ge=0, le=1, description="Share of a generated claim's words that one sentence of a cited "
        "abstract must hold for the claim to count as supported"
    )  # fmt: skip
    support_cosine: float = Field(
        default=0.55, ge=0, le=1, description="Or: cosine of the claim to one sentence of a cited abstract"
    )
    support_common_zipf: float = Field(
        default=4.5, ge=0, le=8, description="A generated claim's words at least this frequent in English (wordfreq's "
        "Zipf scale: 'fraud' 4.4, 'method' 4.8) need not be in the cited abstracts; rarer ones must be"
    )  # fmt: skip


class LLMSettings(BaseModel):
    """The optional OpenAI-compatible endpoint (OpenAI, Azure-style gateways, Ollama, vLLM, llama.cpp, LM Studio)."""

    model_config = ConfigDict(extra="forbid")

    api_key: SecretStr | None = Field(
        default=None,
        description="key for the OpenAI-compatible endpoint (never logged or shown)",
        json_schema_extra={"env": ["OPENAI_API_KEY", "ASKPAPERS_OPENAI_API_KEY"]},
    )
    base_url: str | None = Field(
        default=None,
        description="base URL of another OpenAI-compatible server",
        json_schema_extra={"env": ["OPENAI_BASE_URL", "ASKPAPERS_OPENAI_BASE_URL"]},
    )
    model: str = Field(default="gpt-4.1-mini", description="model name sent to the endpoint")
    temperature: float = Field(default=0.1, ge=0, le=2, description="sampling temperature")
    timeout: float = Field(default=60.0, gt=0, description="seconds before a request times out")
    max_retries: int = Field(default=2, ge=0, le=10, description="retries for timeouts, 429 and 5xx (with backoff)")
    max_tokens: int = Field(
        default=700, ge=16, description="generation budget (sent as max_completion_tokens, and max_tokens for "
        "non-OpenAI servers)"
    )  # fmt: skip
    context_chars: int = Field(
        default=12_000, ge=500, description="characters of abstracts per request; a larger set of matching papers is "
        "read in batches (map-reduce)"
    )  # fmt: skip
    context_papers: int = Field(default=12, ge=1, le=50, description="most papers in a factoid question's context")
    max_concurrency: int = Field(default=4, ge=1, le=32, description="batch requests in flight at once")
    judge: bool = Field(default=True, description="let the model judge borderline papers (yes/no and a verbatim quote)")
    judge_max: int = Field(default=24, ge=0, le=200, description="most borderline papers judged per question")
    price_in: float | None = Field(
        default=None, ge=0, description="price per million input tokens, for the cost estimate of each answer"
    )
    price_out: float | None = Field(
        default=None, ge=0, description="price per million output tokens, for the cost estimate of each answer"
    )

    @property
    def configured(self) -> bool:
        """An endpoint counts as configured when a key or a base URL is set."""
        key = self.api_key.get_secret_value() if self.api_key else ""
        return bool(key.strip() or (self.base_url or "").strip())


class UISettings(BaseModel):
    """The Gradio app."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="interface the web app binds (loopback by default)")
    port: int = Field(default=7860, ge=0, le=65535, description="port of the web app")
    auth: SecretStr | None = Field(
        default=None, description="user:password to require a login in the web app (several pairs: comma-separated)"
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values the web app answers, as JSON (default: loopback names when bound to "
        'loopback; ["*"] for any)',
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses of reverse proxies whose X-Forwarded-For the web app believes, as JSON (default: none; "
        "the login back-off then counts the connection's address)",
    )
    concurrency: int = Field(default=4, ge=1, le=64, description="answers the web app computes at once (others queue)")
    max_upload_mb: int = Field(default=200, ge=1, le=10_000, description="largest file the web app accepts, in MB")
    upload_max_papers: int = Field(
        default=20_000, ge=1, le=10_000_000, description="records one upload to the web app may hold (more: use "
        "`askpapers ingest`)"
    )  # fmt: skip
    upload_max_text_mb: float = Field(
        default=50.0, gt=0, le=10_000, description="text one upload to the web app may hold after decoding, in MB"
    )
    upload_min_abstract: int = Field(
        default=20, ge=1, le=10_000, description="fewest characters of an abstract in an upload to the web app"
    )
    ingest_concurrency: int = Field(
        default=1, ge=1, le=16, description="uploads the web app ingests at once (others wait their turn, in order)"
    )
    map_points: int = Field(
        default=20_000, ge=2, le=1_000_000, description="most papers the Map draws: a larger corpus is shown as a "
        "sample of this many (chosen by a hash of their ids), plus the papers the last answer cited"
    )  # fmt: skip
    page_size: int = Field(default=100, ge=1, le=10_000, description="papers per page of the Papers tab's table")

    @field_validator("auth")
    @classmethod
    def _pairs(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            _parse_auth(v.get_secret_value())  # raises with a message that never shows the secret
        return v

    def upload_limits(self) -> UploadLimits:
        return UploadLimits(max_papers=self.upload_max_papers, max_bytes=int(self.upload_max_text_mb * 1e6),
                            min_abstract=self.upload_min_abstract)  # fmt: skip

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


SECTION_PREFIX = {"store": "ASKPAPERS_", "embedder": "ASKPAPERS_EMBED_", "retrieval": "ASKPAPERS_",
                  "answer": "ASKPAPERS_", "llm": "ASKPAPERS_LLM_", "ui": "ASKPAPERS_"}  # fmt: skip


class Settings(BaseSettings):
    """Everything askpapers reads from the environment, in one place."""

    model_config = SettingsConfigDict(extra="ignore")

    store: StoreSettings = Field(default_factory=StoreSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    ui: UISettings = Field(default_factory=UISettings)
    mode: Literal["auto", "extractive", "llm"] = Field(
        default="auto", description="default answer mode: auto (LLM if configured), extractive or llm"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit arguments first, then the environment, then ``.env`` in the working directory."""
        return init_settings, FlatEnvSource(settings_cls, os.environ), FlatEnvSource(settings_cls, _dotenv())


def _dotenv(path: Path = Path(".env")) -> dict[str, str]:
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def env_names(section: str | None, name: str, field: FieldInfo) -> list[str]:
    """The environment variables a field is read from, first match wins."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    names = extra.get("env")
    if isinstance(names, list):
        return [str(n) for n in names]
    return [SECTION_PREFIX.get(section or "", "ASKPAPERS_") + name.upper()]


def _fields() -> Iterator[tuple[str | None, str, FieldInfo]]:
    """(section or None for the root, field name, field) for every leaf setting."""
    for name, field in Settings.model_fields.items():
        model = field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            for sub, sub_field in model.model_fields.items():
                yield name, sub, sub_field
        else:
            yield None, name, field


def _decode(raw: str, field: FieldInfo) -> Any:
    """Lists and dicts are given as JSON; everything else as the text pydantic parses."""
    origin = typing.get_origin(field.annotation)
    if origin in (list, dict) or field.annotation in (list, dict):
        try:
            return json.loads(raw)
        except ValueError:
            return raw  # pydantic then reports the type error
    return raw


class FlatEnvSource(PydanticBaseSettingsSource):
    """Reads ``ASKPAPERS_K`` into ``retrieval.k`` and so on, from a mapping of variables."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.env = {k.upper(): v for k, v in env.items()}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # (unused: __call__ reads every field at once)

    def __call__(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for section, name, field in _fields():
            for var in env_names(section, name, field):
                if var.upper() in self.env:
                    value = _decode(self.env[var.upper()], field)
                    if section is None:
                        out[name] = value
                    else:
                        out.setdefault(section, {})[name] = value
                    break
        return out


def settings_rows() -> list[tuple[str, str, str]]:
    """(variable, default, meaning) for every setting: the README's configuration table."""
    rows = []
    for section, name, field in _fields():
        names = env_names(section, name, field)
        if field.default_factory is not None:
            default: Any = field.default_factory()  # type: ignore[call-arg]
        else:
            default = field.default
        if name == "data_dir":
            shown = "`$XDG_DATA_HOME/askpapers` (`~/.local/share/askpapers`)"
        elif name == "default_corpus":
            shown = "the bundled `data/icml2026`"
        elif default is None or default in ("", [], {}):
            shown = "unset"
        elif isinstance(default, bool):
            shown = f"`{str(default).lower()}`"
        else:
            shown = f"`{json.dumps(default) if isinstance(default, list | dict) else default}`"
        rows.append((" or ".join(f"`{n}`" for n in names), shown, field.description or ""))
    return rows


def settings_table() -> str:
    lines = ["| variable | default | meaning |", "| --- | --- | --- |"]
    lines += [f"| {v} | {d} | {m} |" for v, d, m in settings_rows()]
    return "\n".join(lines)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings from the environment and ``.env``; a malformed value is a :class:`ConfigError` naming it."""
    try:
        return Settings()
    except ValidationError as e:
        raise ConfigError(f"invalid setting: {describe_settings_error(e)}") from None


def describe_settings_error(e: ValidationError) -> str:
    """Each problem named by its environment variable (never with the value, which may be a secret)."""
    where = {(section, name): env_names(section, name, field)[0] for section, name, field in _fields()}
    parts = []
    for err in e.errors()[:5]:
        loc = tuple(str(x) for x in err.get("loc", ()))
        var = where.get((loc[0], loc[1]) if len(loc) > 1 else (None, loc[0] if loc else ""), ".".join(loc))
        parts.append(f"{var}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}")
    return "; ".join(parts)
