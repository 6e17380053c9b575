"""The only module that imports openai: chat (streaming or not) and embeddings against any
OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Retries are ours, not the client's, so the bound and the final message are explicit: 429 and 5xx
(and connection errors) are retried with exponential backoff up to `llm_max_retries`; 401 and 404
are not, since waiting cannot fix a key or a model name. A stream cut before its first token is
retried; one cut later raises, because part of the answer has already been shown."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import openai

from rag.chatmodel import Message, Usage, message_tokens
from rag.chunk import count_tokens
from rag.errors import LLMError
from rag.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class OpenAIChat:
    settings: Settings
    name: str = ""
    _client: openai.OpenAI = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.name = self.name or self.settings.llm_model
        self._client = openai.OpenAI(
            api_key=self.settings.openai_api_key or "unset",
            base_url=self.settings.openai_base_url,
            timeout=self.settings.llm_timeout_s,
            max_retries=0,
        )

    def _where(self) -> str:
        return self.settings.openai_base_url or "https://api.openai.com/v1"

    def _error(self, err: Exception) -> LLMError:
        where = self._where()
        if isinstance(err, openai.AuthenticationError):
            return LLMError(f"the LLM endpoint {where} refused the API key (401): check OPENAI_API_KEY")
        if isinstance(err, openai.PermissionDeniedError):
            return LLMError(f"the LLM endpoint {where} denied access (403): check OPENAI_API_KEY")
        if isinstance(err, openai.NotFoundError):
            return LLMError(f"model '{self.name}' not found at {where} (404): check RAG_LLM_MODEL and OPENAI_BASE_URL")
        if isinstance(err, openai.RateLimitError):
            return LLMError(f"the LLM endpoint {where} is rate-limiting (429) after {self.settings.llm_max_retries} retries: wait, or check your quota")
        if isinstance(err, openai.APITimeoutError):
            return LLMError(f"the LLM endpoint {where} timed out after {self.settings.llm_timeout_s:g}s: check RAG_LLM_TIMEOUT_S or the server")
        if isinstance(err, openai.APIConnectionError):
            return LLMError(f"cannot reach the LLM endpoint {where}: check OPENAI_BASE_URL and that the server runs")
        if isinstance(err, openai.APIStatusError):
            return LLMError(f"the LLM endpoint {where} failed ({err.status_code}) after {self.settings.llm_max_retries} retries: the server is failing; try later")
        return LLMError(f"the LLM call to {where} failed: {err}")

    @staticmethod
    def _retryable(err: Exception) -> bool:
        if isinstance(err, (openai.RateLimitError, openai.APIConnectionError)):
            return True
        return isinstance(err, openai.APIStatusError) and err.status_code >= 500

    def stream(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> Iterator[str]:
        max_tokens = max_tokens or self.settings.max_answer_tokens
        attempt = 0
        while True:
            produced: list[str] = []
            try:
                response = self._client.chat.completions.create(
                    model=self.name, messages=messages, stream=True, temperature=0, max_tokens=max_tokens  # type: ignore[arg-type]
                )
                usage.calls += 1
                usage.prompt_tokens += message_tokens(messages)
                for event in response:  # type: ignore[union-attr]
                    if not getattr(event, "choices", None):
                        continue
                    delta = event.choices[0].delta.content or ""  # type: ignore[union-attr]
                    if delta:
                        produced.append(delta)
                        yield delta
                usage.completion_tokens += count_tokens("".join(produced))
                return
            except Exception as err:  # openai errors, and httpx errors while reading the body
                usage.completion_tokens += count_tokens("".join(produced))
                if produced:
                    raise LLMError(f"the answer stream from {self._where()} was cut off mid-way: try again") from err
                if self._may_retry(err, attempt, usage):
                    attempt += 1
                    continue
                raise self._error(err) from err

    def _may_retry(self, err: Exception, attempt: int, usage: Usage) -> bool:
        """Back off and say yes while the error is transient and the bound is not reached."""
        transient = self._retryable(err) if isinstance(err, openai.APIError) else True
        if not transient or attempt >= self.settings.llm_max_retries:
            return False
        log.warning("LLM call failed (%s); retrying", err)
        usage.retries += 1
        time.sleep(self.settings.llm_backoff_s * (2**attempt))
        return True

    def complete(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> str:
        return "".join(self.stream(messages, usage, max_tokens))


class OpenAIEmbedder:
    """Embeddings from the endpoint's /embeddings (OPENAI_BASE_URL honoured: OpenAI,
    text-embeddings-inference, vLLM, Infinity, Ollama). Texts go in requests of
    `embed_request_texts`, up to `embed_concurrency` in flight at once, each retried as chat
    requests are; the vectors come back in order."""

    dim = 0

    def __init__(self, settings: Settings) -> None:
        if not settings.openai_api_key:
            raise LLMError("RAG_EMBEDDER=openai needs OPENAI_API_KEY")
        self.name = settings.openai_embedding_model
        self.request_texts = settings.embed_request_texts
        self.concurrency = settings.embed_concurrency
        self._chat = OpenAIChat(settings)
        self._client = self._chat._client
        self._pool: ThreadPoolExecutor | None = None

    def _request(self, texts: list[str]) -> np.ndarray:
        attempt = 0
        while True:
            try:
                got = self._client.embeddings.create(model=self.name, input=texts)
                break
            except openai.APIError as err:
                if not self._chat._may_retry(err, attempt, Usage()):
                    raise self._chat._error(err) from err
                attempt += 1
        return np.array([d.embedding for d in sorted(got.data, key=lambda d: d.index)], dtype=np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        parts = [texts[i : i + self.request_texts] for i in range(0, len(texts), self.request_texts)]
        if len(parts) > 1 and self.concurrency > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="embed")
            matrix = np.vstack(list(self._pool.map(self._request, parts)))
        else:
            matrix = np.vstack([self._request(part) for part in parts])
        self.dim = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)
