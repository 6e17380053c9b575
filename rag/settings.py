"""The one settings object. Values come from `RAG_*` environment variables, plus the standard
`OPENAI_API_KEY` and `OPENAI_BASE_URL`. Only `rag.app` reads it; everything else is handed what
it needs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag.resources import asset_dir


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAG_", extra="ignore", populate_by_name=True)

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
    workers: int = Field(default=1, ge=1, le=64, description="Ingest: embedding processes (`rag ingest --workers`).")
    ingest_batch: int = Field(
        default=2000,
        ge=1,
        le=100_000,
        description="Papers per ingest batch: one log segment and one write to Chroma each.",
    )
    progress_seconds: float = Field(
        default=5.0, ge=0, description="Without a terminal, a progress line this often (seconds)."
    )
    embed_concurrency: int = Field(
        default=4, ge=1, le=64, description="Embedding requests in flight at once when embedder=openai."
    )
    embed_request_texts: int = Field(
        default=64, ge=1, le=2048, description="Texts per embedding request when embedder=openai."
    )
    chunk_tokens: int = Field(
        default=512, ge=64, description="Chunk size in tiktoken tokens; most abstracts fit in one."
    )
    chunk_overlap: int = Field(default=64, ge=0, description="Token overlap between chunks of one text.")
    k: int = Field(default=5, ge=1, le=100, description="Papers returned by search and used by answers.")
    mode: Literal["hybrid", "dense", "keyword"] = Field(
        default="hybrid", description="Retriever: dense and BM25 fused, or either alone."
    )
    rrf_k: int = Field(
        default=10,
        ge=1,
        description="Reciprocal-rank-fusion constant (10 beat 30, 60 and 100 on SciFact and the dev set).",
    )
    candidates: int = Field(default=50, ge=1, description="Chunks each retriever contributes before fusion.")
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
    answerer: Literal["auto", "llm", "extractive"] = Field(
        default="auto", description="auto: the LLM when an API key is set, else extractive."
    )
    context_tokens: int = Field(default=6000, ge=256, description="Token budget for the sources placed in the prompt.")
    max_answer_tokens: int = Field(default=600, ge=16, description="Completion token limit.")
    llm_timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout for the LLM.")
    llm_max_retries: int = Field(default=3, ge=0, description="Retries on 429 and 5xx, with exponential backoff.")
    llm_backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles each retry.")
    llm_verify: bool = Field(default=False, description="Ask the LLM to verify each cited claim (a second pass).")
    support_threshold: float = Field(
        default=0.5, ge=0, le=1, description="Below this support score a cited claim is flagged."
    )
    price_prompt_per_mtok: float = Field(
        default=0.15, ge=0, description="USD per million prompt tokens, for cost figures in evaluations."
    )
    price_completion_per_mtok: float = Field(
        default=0.60, ge=0, description="USD per million completion tokens, for cost figures in evaluations."
    )
    max_question_chars: int = Field(default=2000, ge=10, description="Longer questions are refused.")
    history_turns: int = Field(default=4, ge=0, description="Earlier turns a chat keeps for follow-ups.")

    @property
    def llm_configured(self) -> bool:
        return bool(self.openai_api_key)

    @property
    def answer_mode(self) -> Literal["llm", "extractive"]:
        if self.answerer == "auto":
            return "llm" if self.llm_configured else "extractive"
        return self.answerer
