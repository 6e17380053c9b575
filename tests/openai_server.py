"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: chat completions (plain and
streamed as server-sent events), embeddings, scripted replies and error codes.

Replies come from a queue, one per chat request; each is a dict:
    {"content": "..."}                 a normal answer (streamed if the request asks for it); "" is empty
    {"status": 429} / {"status": 500}  an error response with an OpenAI-style body
    {"status": 429, "retry_after": 2}  ... with a Retry-After header (seconds)
    {"cut_after": "partial text"}      a stream that sends some text, then drops the connection
    {"keepalive": 30}                  a stream that sends only SSE comments (": keep-alive"), one a
                                       second, for that many seconds, and no data
    {"raw": "...", "content_type": t}  a 200 with this body as is (an unreadable reply)
    {"endless": "word"}                a stream that repeats the word until the client hangs up
                                       (a server that ignores max_tokens)
    {"delay": 2.0, ...}                wait this long before answering (combines with the others)
    {"content": "...", "word_delay": 0.05}  a stream that waits this many seconds between words
    {"chunks": ["a", "b"]}             a stream of exactly these pieces (plain: their concatenation)
    {"reply": f}                       the text f(request body) returns, answered as "content"
    {"tool_calls": [{"name": n, "arguments": {...}}, ...]}  the model calls tools: streamed as
                                       OpenAI does, each call's id and name first, then its JSON
                                       arguments in pieces of a few characters ("whole": true sends
                                       each call in one chunk, as some servers do)
A server made with `tools=False` refuses every request that carries tools with a 400 naming them,
as Ollama does for a model without function calling.
When the queue is empty the server answers {"content": default}. Every request is recorded, and
every stream the server stops writing because the client went away is counted in `hangups`."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, default: str = "INSUFFICIENT_EVIDENCE", tools: bool = True) -> None:
        self.tools = tools
        self.replies: deque[dict[str, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.default = default
        self.valid_key = "test-key"
        self.models = {"test-model"}
        self.hangups = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, kind: str) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "code": status}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "body": body, "at": time.monotonic()})
                if self.headers.get("Authorization") != f"Bearer {server.valid_key}":
                    return self._error(401, "Incorrect API key provided", "invalid_request_error")
                if self.path.endswith("/embeddings"):
                    return self._embeddings(body)
                if not self.path.endswith("/chat/completions"):
                    return self._error(404, "unknown path", "invalid_request_error")
                if body.get("model") not in server.models:
                    return self._error(404, f"The model `{body.get('model')}` does not exist", "invalid_request_error")
                if body.get("tools") and not server.tools:
                    return self._error(400, "registry/test-model does not support tools", "invalid_request_error")
                reply = server.replies.popleft() if server.replies else {"content": server.default}
                if callable(reply.get("reply")):  # a reply written from the request (e.g. its tool results)
                    reply = {**reply, "content": reply["reply"](body)}
                if reply.get("delay"):
                    time.sleep(float(reply["delay"]))
                if "status" in reply:
                    if reply.get("retry_after") is not None:
                        return self._send(
                            int(reply["status"]),
                            {"error": {"message": "scripted failure", "type": "server_error"}},
                            {"Retry-After": str(reply["retry_after"])},
                        )
                    return self._error(int(reply["status"]), "scripted failure", "server_error")
                if "raw" in reply:
                    data = str(reply["raw"]).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", reply.get("content_type", "application/json"))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return None
                if body.get("stream") and "tool_calls" in reply:
                    return self._stream_tool_calls(reply)
                if body.get("stream"):
                    return self._stream(reply)
                return self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": reply.get("content", "".join(reply.get("chunks", []))),
                                },
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _embeddings(self, body: dict[str, Any]) -> None:
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = []
                for i, text in enumerate(inputs):
                    digest = hashlib.sha256(str(text).encode()).digest()
                    data.append({"object": "embedding", "index": i, "embedding": [b / 255 for b in digest[:16]]})
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )

            def _chunk(self, content: str | None, finish: str | None = None) -> bytes:
                event = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "test-model",
                    "choices": [
                        {"index": 0, "delta": {"content": content} if content else {}, "finish_reason": finish}
                    ],
                }
                return f"data: {json.dumps(event)}\n\n".encode()

            def _stream_tool_calls(self, reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def event(delta: dict[str, Any], finish: str | None = None) -> None:
                    body = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "test-model",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    data = f"data: {json.dumps(body)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

                for index, call in enumerate(reply["tool_calls"]):
                    arguments = json.dumps(call.get("arguments", {}))
                    head = {
                        "index": index,
                        "id": f"call_{index}",
                        "type": "function",
                        "function": {"name": call["name"]},
                    }
                    if reply.get("whole"):
                        head["function"]["arguments"] = arguments
                        event({"role": "assistant", "tool_calls": [head]})
                        continue
                    head["function"]["arguments"] = ""
                    event({"role": "assistant", "tool_calls": [head]})
                    for at in range(0, len(arguments), 5):
                        event({"tool_calls": [{"index": index, "function": {"arguments": arguments[at : at + 5]}}]})
                event({}, "tool_calls")
                data = b"data: [DONE]\n\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def _stream(self, reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def write(data: bytes) -> None:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

                try:
                    if "keepalive" in reply:
                        end = time.monotonic() + float(reply["keepalive"])
                        while time.monotonic() < end:
                            write(b": keep-alive\n\n")
                            time.sleep(1.0)
                        self.close_connection = True
                        return
                    if "endless" in reply:
                        while True:
                            write(self._chunk(" " + str(reply["endless"])))
                            time.sleep(0.001)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    server.hangups += 1
                    self.close_connection = True
                    return
                text = reply.get("content", reply.get("cut_after", ""))
                words = text.split(" ") if text else []
                pieces = reply.get("chunks") or [word if i == 0 else " " + word for i, word in enumerate(words)]
                for piece in pieces:
                    if reply.get("word_delay"):
                        time.sleep(float(reply["word_delay"]))
                    write(self._chunk(piece))
                if "cut_after" in reply:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                write(self._chunk(None, "stop"))
                write(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]
