"""The chat-model protocol and token accounting, apart from `rag.llm` so that answering and chat
code can name them without importing openai (half a second at every start)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from rag.chunk import count_tokens

Message = dict[str, str]


@dataclass
class Usage:
    """Token counts measured with tiktoken (the server's own counts are not always sent)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    # The answer's deadline and start (time.monotonic()), set by the first LLM call made for it
    # and shared by every later one, so that retries and second passes count against one limit.
    deadline: float | None = None
    started: float | None = None

    def public(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "llm_calls": self.calls,
            "retries": self.retries,
        }


class ChatModel(Protocol):
    name: str

    def stream(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> Iterator[str]: ...

    def complete(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> str: ...


def message_tokens(messages: list[Message]) -> int:
    """Tokens of a chat prompt: contents plus the ~4 tokens of framing per message."""
    return sum(count_tokens(m["content"]) + 4 for m in messages) + 2
