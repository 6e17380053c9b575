"""The chat-model protocol and token accounting, apart from `rag.answer.llm` so that answering and chat
code can name them without importing openai (half a second at every start)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from rag.errors import LLMError
from rag.tokens import count_tokens

Message = dict[str, Any]  # role, content; an assistant turn may carry tool_calls, a tool turn tool_call_id


@dataclass(frozen=True)
class ToolCall:
    """A function call the model asks for: its id (echoed back with the result), the tool's name
    and its arguments as the JSON text the model wrote."""

    id: str
    name: str
    arguments: str

    def message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


class ToolsUnsupported(LLMError):
    """The endpoint refused a request because it carried tools (a model or server without function
    calling): the caller asks again without them."""


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

    def stream_turn(
        self, messages: list[Message], tools: list[dict[str, Any]], usage: Usage, max_tokens: int | None = None
    ) -> Iterator[str | ToolCall]:
        """Text pieces as they come, then the tool calls the model made (if any), whole. Raises
        ToolsUnsupported when the endpoint refuses the tools."""
        ...


def message_tokens(messages: list[Message]) -> int:
    """Tokens of a chat prompt: contents plus the ~4 tokens of framing per message."""
    return (
        sum(
            count_tokens(str(m.get("content") or "")) + count_tokens(str(m.get("tool_calls") or "")) + 4
            for m in messages
        )
        + 2
    )
