"""The one settings object. Values come from `RAG_*` environment variables, plus the standard
`OPENAI_API_KEY` and `OPENAI_BASE_URL`. Only `rag.app` reads it; everything else is handed what
it needs.

The fields are grouped by concern, one pydantic model per group (`GROUPS`), and `Settings`
inherits them all. Why inheritance and not nested models (`settings.llm.timeout_s`): nesting
would rename every environment variable (`RAG_LLM__TIMEOUT_S`) and every `rag eval --config`
key, which users, scripts and the docs already use; the groups give the structure without that.

Unknown names are errors, not silently ignored: a misspelled `RAG_EMBEDER=hash` or an unknown
`rag eval --config name:kk=10` key raises SettingsError naming it, the nearest valid name and all
valid names (the CLI prints that one line and exits 2), as does a bad value (`RAG_EMBEDDER=foo`)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir
from pydantic import AliasChoices, BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag.errors import SettingsError
from rag.resources import asset_dir
from rag.types import Mode

PREFIX = "RAG_"


class StorageSettings(BaseModel):
    """Where the index lives."""

    home: Path = Field(
        default_factory=lambda: Path(user_data_dir("paper-rag", appauthor=False)),
        description="Data folder: Chroma database, catalogue, keyword index (default: the user data folder).",
    )
    sample_dir: Path = Field(
        default_factory=lambda: asset_dir("sample"),
        description="The bundled sample corpus (96 ICLR/ICML 2025 abstracts).",
    )
    chroma_host: str | None = Field(
        default=None, description="Chroma server host; when set, use the HTTP client, not the local folder."
    )
    chroma_port: int = Field(default=8000, description="Chroma server port (with RAG_CHROMA_HOST).")


class EmbeddingSettings(BaseModel):
    """Which model turns text into vectors, and how hard it is driven."""

    embedder: Literal["local", "openai", "hash"] = Field(
        default="local",
        description="local: all-MiniLM-L6-v2 int8 on onnxruntime; openai: the embeddings endpoint; "
        "hash: hashed words, for benchmarks and tests only.",
    )
    openai_embedding_model: str = Field(
        default="text-embedding-3-small", description="Embedding model when embedder=openai."
    )
    embed_batch: int = Field(
        default=8, ge=1, le=256, description="Token windows per ONNX run of the local model (8 measured fastest here)."
    )
    embed_threads: int = Field(default=0, ge=0, description="ONNX intra-op threads (0: onnxruntime decides).")
    embed_concurrency: int = Field(
        default=4, ge=1, le=64, description="Embedding requests in flight at once when embedder=openai."
    )
    embed_request_texts: int = Field(
        default=64, ge=1, le=2048, description="Texts per embedding request when embedder=openai."
    )


class IngestSettings(BaseModel):
    """How paper lists become chunks (the chunking also names the collections)."""

    chunk_tokens: int = Field(
        default=512, ge=64, description="Chunk size in tiktoken tokens; most abstracts fit in one."
    )
    chunk_overlap: int = Field(default=64, ge=0, description="Token overlap between chunks of one text.")
    workers: int = Field(default=1, ge=1, le=64, description="Ingest: embedding processes (`rag ingest --workers`).")
    ingest_batch: int = Field(
        default=2000,
        ge=1,
        le=20_000,  # 20,000 synthetic papers make a 9.5 MB segment; a Chroma server refuses requests of about 42 MB
        description="Papers per ingest batch: one log segment and one write to Chroma each.",
    )
    snapshot_every: int = Field(
        default=50,
        ge=0,
        description="Ingest publishes a snapshot of its cache for new machines once the log holds this many "
        "segments the newest snapshot lacks (0: never; `rag snapshot` publishes one now).",
    )
    progress_seconds: float = Field(
        default=5.0, ge=0, description="Without a terminal, a progress line this often (seconds)."
    )


class RetrievalSettings(BaseModel):
    """How a query finds papers."""

    k: int = Field(default=5, ge=1, le=100, description="Papers returned by search and used by answers.")
    mode: Mode = Field(default=Mode.HYBRID, description="Retriever: dense and BM25 fused, or either alone.")
    dense_weight: float = Field(
        default=0.35,
        ge=0.0,
        le=1.0,
        description="Share of the dense ranker in hybrid search (the keyword ranker gets the rest), "
        "chosen on held-out validation splits.",
    )
    title_only_lift: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Hybrid search: added to the fused score of a paper with no abstract that the dense ranker puts "
        "first (BM25 rarely ranks a bare title). Off: 0.25 found more papers on validation, but the answer models "
        "were fitted without it and turned one more answerable question away (docs/benchmarks.md, session 29).",
    )
    candidates: int = Field(default=50, ge=1, description="Chunks each retriever contributes before fusion.")
    rerank_depth: int = Field(
        default=5,
        ge=0,
        le=100,
        description="Hybrid search with the local model: the fused ranking's first papers reordered by "
        "their best sentence (0: no reordering), chosen on held-out validation splits.",
    )
    rerank_weight: float = Field(
        default=0.8, ge=0.0, le=10.0, description="Weight of a paper's best sentence cosine when reordering."
    )


class LLMSettings(BaseModel):
    """The OpenAI-compatible endpoint and how its failures are survived."""

    openai_api_key: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "RAG_OPENAI_API_KEY"),
        description="API key; with it, answers come from the LLM.",
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "RAG_OPENAI_BASE_URL"),
        description="Any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server).",
    )
    llm_model: str = Field(default="gpt-4o-mini", description="Chat model name for the LLM answerer.")
    llm_timeout_s: float = Field(
        default=60.0,
        gt=0,
        validation_alias=AliasChoices("RAG_LLM_TIMEOUT_S", "RAG_LLM_TIMEOUT"),
        description="Seconds all LLM calls for one answer may take together (RAG_LLM_TIMEOUT is the same).",
    )
    llm_max_retries: int = Field(default=3, ge=0, description="Retries on 429 and 5xx, with exponential backoff.")
    llm_backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles each retry.")
    llm_verify: bool = Field(default=False, description="Ask the LLM to verify each cited claim (a second pass).")


class AnswerSettings(BaseModel):
    """How an answer is written and checked."""

    answerer: Literal["auto", "llm", "extractive"] = Field(
        default="auto", description="auto: the LLM when an API key is set, else extractive."
    )
    context_tokens: int = Field(default=6000, ge=256, description="Token budget for the sources placed in the prompt.")
    max_answer_tokens: int = Field(default=600, ge=16, description="Completion token limit.")
    support_threshold: float = Field(
        default=0.5, ge=0, le=1, description="Below this support score a cited claim is flagged."
    )
    max_question_chars: int = Field(default=2000, ge=10, description="Longer questions are refused.")
    history_turns: int = Field(default=4, ge=0, description="Earlier turns a chat keeps for follow-ups.")
    abstain_threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Offline answers abstain when no retrieved paper is at least this likely to answer "
        "(unset: the deciding models' own thresholds, for a question, for a chat turn read as a "
        "follow-up and for a topic among the papers of a filter the question named, each chosen on "
        "held-out questions; lower answers more, higher abstains more).",
    )
    abstain_on_unknown_names: bool = Field(
        default=True,
        description="Offline answers say the collection does not say when the question names a coined "
        "name (LoomAttention, HELIOS-Tab) that no paper of the collection mentions, or asks the paper it "
        "names for a detail its abstract does not mention (GPU hours, a score) or a number it does not state "
        "(how many experts), or asks whether a method was applied to a setting and the paper it would "
        "lead with does not name the method or the setting.",
    )


class CostSettings(BaseModel):
    """Prices for the cost figures of evaluations."""

    price_prompt_per_mtok: float = Field(
        default=0.15, ge=0, description="USD per million prompt tokens, for cost figures in evaluations."
    )
    price_completion_per_mtok: float = Field(
        default=0.60, ge=0, description="USD per million completion tokens, for cost figures in evaluations."
    )


class UISettings(BaseModel):
    """Who may use the chat UI (`rag ui`)."""

    ui_auth: SecretStr | None = Field(
        default=None,
        description="Password for the UI and its MCP endpoint, as user:password (or a password for any "
        "user name); the MCP endpoint takes it as `Authorization: Bearer <password>`. Required to "
        "serve beyond 127.0.0.1 unless `rag ui --no-auth`.",
    )


GROUPS: dict[str, type[BaseModel]] = {
    "storage": StorageSettings,
    "embedding": EmbeddingSettings,
    "ingest": IngestSettings,
    "retrieval": RetrievalSettings,
    "llm": LLMSettings,
    "answer": AnswerSettings,
    "cost": CostSettings,
    "ui": UISettings,
}


def env_names(field: str) -> list[str]:
    """The environment variables that set a field (its aliases, else RAG_<FIELD>)."""
    info = Settings.model_fields[field]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [PREFIX + field.upper()]


def field_names() -> list[str]:
    """Every setting's name (the keys of `rag eval --config`), in group order."""
    return [field for group in GROUPS.values() for field in group.model_fields]


def known_variables() -> list[str]:
    """Every `RAG_*` variable Settings reads, in group order."""
    return [name for field in field_names() for name in env_names(field) if name.startswith(PREFIX)]


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """`RAG_*` variables in `environ` that no setting reads (misspellings, removed settings)."""
    known = set(known_variables())
    return sorted(name for name in environ if name.upper().startswith(PREFIX) and name.upper() not in known)


def _nearest(name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name.upper(), [v.upper() for v in valid], n=1, cutoff=0.6)
    return next((v for v in valid if v.upper() == close[0]), "") if close else ""


def _unknown_message(names: list[str], valid: list[str], what: str) -> str:
    parts = []
    for name in names:
        near = _nearest(name, valid)
        parts.append(f"{name}" + (f" (did you mean {near}?)" if near else ""))
    return f"unknown {what} {', '.join(parts)}; the valid names are {', '.join(valid)}"


def _value_message(err: ValidationError, given: Mapping[str, Any]) -> str:
    """One line for pydantic's errors: the variable (or key) named as the user wrote it."""
    problems, unknown = [], []
    for item in err.errors():
        field = str(item["loc"][0]) if item["loc"] else ""
        if item["type"] == "extra_forbidden":
            unknown.append(field)
            continue
        name = field
        if field in Settings.model_fields and field not in given:  # it came from the environment
            name = env_names(field)[0]
        allowed = str(item.get("ctx", {}).get("expected", ""))
        problems.append(
            f"{name}={item.get('input')!r}: {item['msg']}"
            + (f" (allowed: {allowed})" if allowed and allowed not in item["msg"] else "")
        )
    if unknown:
        problems.insert(0, _unknown_message(unknown, field_names(), "setting"))
    return "bad setting: " + "; ".join(problems)


class Settings(
    BaseSettings,
    StorageSettings,
    EmbeddingSettings,
    IngestSettings,
    RetrievalSettings,
    LLMSettings,
    AnswerSettings,
    CostSettings,
    UISettings,
):
    """All groups in one object, read from the environment (RAG_ prefix) and keyword arguments."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="forbid", populate_by_name=True)

    def __init__(self, **values: Any) -> None:
        unknown = unknown_variables(os.environ)
        if unknown:
            raise SettingsError("bad setting: " + _unknown_message(unknown, known_variables(), "variable"))
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise SettingsError(_value_message(err, values)) from None

    @property
    def answer_mode(self) -> Literal["llm", "extractive"]:
        """The answerer in use: `auto` means the LLM when an API key is set."""
        if self.answerer == "auto":
            return "llm" if self.openai_api_key else "extractive"
        return self.answerer
