"""The only module that imports openai: chat (streaming or not) and embeddings against any
OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Every call made for one answer shares one deadline, `llm_timeout_s` from the first call (kept on
the answer's `Usage`), and every wait counts against it: the server's response, each streamed
piece, retries and their back-off. So a stream that sends only keep-alive comments, a server that
answers very slowly, or a string of 429s ends in one line after about `llm_timeout_s` seconds,
and that line reports the real time spent. The stream is read on a helper thread so that the
deadline holds even while a read blocks.

Retries are ours, not the client's, so the bound and the final message are explicit: 429 and 5xx
(and connection errors, empty or unreadable replies) are retried with exponential backoff, or
after the server's `Retry-After` when it sends one, up to `llm_max_retries`; 401 and 404 are not,
since waiting cannot fix a key or a model name. A stream cut before its first token is retried;
one cut later raises, because part of the answer has already been shown. The answer is capped at
`max_tokens`: asked of the server, and enforced here for a server that ignores it."""

from __future__ import annotations

import contextlib
import email.utils
import logging
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openai

from rag.answer.chatmodel import Message, ToolCall, ToolsUnsupported, Usage, message_tokens
from rag.errors import LLMError
from rag.settings import Settings
from rag.tokens import count_tokens, encoding

log = logging.getLogger(__name__)
# No streamed piece is read beyond this many characters per allowed token (a piece is tokenised
# to enforce max_tokens, and a 1 MB piece must not be).
CHARS_PER_TOKEN_CAP = 8


class _Empty(Exception):
    """The server answered 200 but sent no text."""


class _Deadline(Exception):
    """The answer's deadline passed while waiting."""


def _refuses_tools(err: Exception) -> bool:
    """The server's refusal of a request because of its tools ("does not support tools",
    "tool choice requires --enable-auto-tool-choice", "tools param requires --jinja flag")."""
    if not isinstance(err, openai.APIStatusError) or err.status_code not in (400, 404, 422, 500, 501):
        return False
    text = f"{getattr(err, 'message', '')} {getattr(err, 'body', '')}".lower()
    return "tool" in text or "function" in text


def retry_after(err: Exception) -> float | None:
    """Seconds the server asks us to wait (`retry-after-ms`, `retry-after` in seconds or as an
    HTTP date), or None."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) / divisor, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is not None:
            return max(parsed.timestamp() - time.time(), 0.0)
    return None


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

    def _error(self, err: Exception, elapsed: float, attempts: int) -> LLMError:
        where = self._where()
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(err, (_Deadline, openai.APITimeoutError)):
            return LLMError(
                f"the LLM endpoint {where} gave no complete answer within the deadline: gave up after "
                f"{elapsed:.1f} s ({tries}; RAG_LLM_TIMEOUT_S={self.settings.llm_timeout_s:g}): check the server"
            )
        if isinstance(err, openai.AuthenticationError):
            return LLMError(f"the LLM endpoint {where} refused the API key (401): check OPENAI_API_KEY")
        if isinstance(err, openai.PermissionDeniedError):
            return LLMError(f"the LLM endpoint {where} denied access (403): check OPENAI_API_KEY")
        if isinstance(err, openai.NotFoundError):
            return LLMError(f"model '{self.name}' not found at {where} (404): check RAG_LLM_MODEL and OPENAI_BASE_URL")
        if isinstance(err, openai.RateLimitError):
            return LLMError(
                f"the LLM endpoint {where} is rate-limiting (429) after {attempts - 1} retries; gave up after "
                f"{elapsed:.1f} s: wait, or check your quota"
            )
        if isinstance(err, openai.APIConnectionError):
            return LLMError(f"cannot reach the LLM endpoint {where}: check OPENAI_BASE_URL and that the server runs")
        if isinstance(err, openai.APIStatusError):
            return LLMError(
                f"the LLM endpoint {where} failed ({err.status_code}) after {attempts - 1} retries; gave up after "
                f"{elapsed:.1f} s: the server is failing; try later"
            )
        if isinstance(err, _Empty):
            return LLMError(
                f"the LLM endpoint {where} returned an empty answer ({tries}): check RAG_LLM_MODEL and the server"
            )
        return LLMError(
            f"the LLM endpoint {where} sent a reply that cannot be read ({tries}; {type(err).__name__}): "
            "check OPENAI_BASE_URL points at an OpenAI-compatible API"
        )

    @staticmethod
    def _retryable(err: Exception) -> bool:
        if isinstance(err, (_Empty, openai.RateLimitError, openai.APIConnectionError)) and not isinstance(
            err, openai.APITimeoutError
        ):
            return True
        if isinstance(err, openai.APIStatusError):
            return err.status_code >= 500
        return not isinstance(err, (openai.APIError, _Deadline))  # an unreadable body: try again

    def stream(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> Iterator[str]:
        for piece in self._stream(messages, usage, max_tokens, None):
            if isinstance(piece, str):
                yield piece

    def stream_turn(
        self, messages: list[Message], tools: list[dict[str, Any]], usage: Usage, max_tokens: int | None = None
    ) -> Iterator[str | ToolCall]:
        return self._stream(messages, usage, max_tokens, tools or None)

    def _stream(
        self, messages: list[Message], usage: Usage, max_tokens: int | None, tools: list[dict[str, Any]] | None
    ) -> Iterator[str | ToolCall]:
        max_tokens = max_tokens or self.settings.max_answer_tokens
        now = time.monotonic()
        if usage.deadline is None:  # the first call for this answer starts its clock
            usage.deadline, usage.started = now + self.settings.llm_timeout_s, now
        started = usage.started if usage.started is not None else now
        attempt = 0
        while True:
            produced: list[str] = []
            calls = 0
            try:
                for piece in self._attempt(messages, usage, max_tokens, tools):
                    if isinstance(piece, ToolCall):
                        calls += 1
                        usage.completion_tokens += count_tokens(piece.name + piece.arguments)
                    else:
                        produced.append(piece)
                    yield piece
                if not "".join(produced).strip() and not calls:
                    raise _Empty()
                usage.completion_tokens += count_tokens("".join(produced))
                return
            except Exception as err:  # openai errors, httpx errors while reading, our own
                usage.completion_tokens += count_tokens("".join(produced))
                if tools and not produced and _refuses_tools(err):
                    raise ToolsUnsupported(
                        f"the LLM endpoint {self._where()} does not take tools (function calling) for model "
                        f"'{self.name}': answering from the retrieved sources alone"
                    ) from err
                if produced and "".join(produced).strip():
                    if isinstance(err, _Deadline):
                        raise self._error(err, time.monotonic() - started, attempt + 1) from None
                    raise LLMError(f"the answer stream from {self._where()} was cut off mid-way: try again") from err
                if self._may_retry(err, attempt, usage):
                    attempt += 1
                    continue
                raise self._error(err, time.monotonic() - started, attempt + 1) from (
                    None if isinstance(err, _Deadline) else err
                )

    def _attempt(
        self, messages: list[Message], usage: Usage, max_tokens: int, tools: list[dict[str, Any]] | None
    ) -> Iterator[str | ToolCall]:
        """One request, read on a helper thread; every wait is bounded by the deadline. Streamed
        tool calls arrive in fragments (a name, then pieces of the arguments, per index): they are
        assembled and yielded whole after the text."""
        assert usage.deadline is not None
        remaining = usage.deadline - time.monotonic()
        if remaining <= 0:
            raise _Deadline()
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        response = self._client.chat.completions.create(
            model=self.name,
            messages=messages,  # type: ignore[arg-type]  # plain role/content dicts, as the API takes
            stream=True,
            temperature=0,
            max_tokens=max_tokens,
            timeout=remaining,
            **extra,
        )
        usage.calls += 1
        usage.prompt_tokens += message_tokens(messages)
        events: queue.Queue[tuple[str, Any]] = queue.Queue()

        def pump() -> None:
            try:
                for event in response:
                    events.put(("event", event))
                events.put(("end", None))
            except BaseException as err:
                events.put(("error", err))

        threading.Thread(target=pump, name="llm-stream", daemon=True).start()
        cap = max_tokens * CHARS_PER_TOKEN_CAP  # characters: no piece is tokenised beyond this
        tokens = 0
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        try:
            while True:
                remaining = usage.deadline - time.monotonic()
                try:
                    kind, value = events.get(timeout=max(remaining, 0.0))
                except queue.Empty:
                    raise _Deadline() from None
                if kind == "end":
                    for index in sorted(calls):
                        call_id, name, arguments = calls[index]
                        yield ToolCall(call_id or f"call_{index}", name, arguments[:cap])
                    return
                if kind == "error":
                    raise value
                choices = getattr(value, "choices", None)
                if not choices:
                    continue
                for fragment in getattr(choices[0].delta, "tool_calls", None) or []:
                    slot = calls.setdefault(int(getattr(fragment, "index", 0) or 0), ["", "", ""])
                    function = getattr(fragment, "function", None)
                    slot[0] = slot[0] or (getattr(fragment, "id", None) or "")
                    slot[1] += (getattr(function, "name", None) or "") if function else ""
                    slot[2] += (getattr(function, "arguments", None) or "") if function else ""
                delta = getattr(choices[0].delta, "content", None) or ""
                if not delta:
                    continue
                delta = delta[:cap]
                size = count_tokens(delta)
                if tokens + size > max_tokens:  # the server ignores max_tokens: stop reading
                    log.warning("LLM reply cut at %d tokens (max_tokens)", max_tokens)
                    keep = encoding().decode(encoding().encode(delta, disallowed_special=())[: max_tokens - tokens])
                    if keep:
                        yield keep
                    return
                tokens += size
                yield delta
        finally:
            with contextlib.suppress(Exception):
                response.close()  # type: ignore[union-attr]

    def _may_retry(self, err: Exception, attempt: int, usage: Usage) -> bool:
        """Back off and say yes while the error is transient, the bound is not reached and the
        wait (the server's Retry-After, else exponential) ends before the deadline."""
        if not self._retryable(err) or attempt >= self.settings.llm_max_retries:
            return False
        wait = self.settings.llm_backoff_s * (2**attempt)
        asked = retry_after(err)
        if asked is not None:
            wait = max(wait, asked)
        if usage.deadline is not None and time.monotonic() + wait >= usage.deadline:
            return False
        log.info("LLM call failed (%s); retrying in %.1f s", type(err).__name__, wait)
        usage.retries += 1
        time.sleep(wait)
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
        usage = Usage()
        started = time.monotonic()
        usage.deadline = started + self._chat.settings.llm_timeout_s
        while True:
            try:
                got = self._client.embeddings.create(model=self.name, input=texts)
                break
            except openai.APIError as err:
                if not self._chat._may_retry(err, attempt, usage):
                    raise self._chat._error(err, time.monotonic() - started, attempt + 1) from err
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
