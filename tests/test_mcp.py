"""The MCP tools through the real `mcp` client against the real servers: `rag mcp` spawned over
stdio, and `rag ui --mcp` (Gradio's MCP server, streamable HTTP) in a subprocess. Both run over a
copy of the sample index, with no API key, so answers are extractive."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult

from tests.conftest import ROOT, free_port, wait_for_http
from tests.hostile_text import visible_escapes, write_escape_records

T = TypeVar("T")
TOOLS = {"search_papers", "ask", "lookup_paper", "bibtex", "count_papers", "list_papers"}
PAPER_KEYS = {
    "paper_id",
    "title",
    "label",
    "authors",
    "venue",
    "year",
    "track",
    "decision",
    "url",
    "abstract",
    "has_abstract",
}
ON_TOPIC = "Which paper introduced PersuasionBench?"
OFF_TOPIC = "What is the boiling point of water at sea level?"
# "Who painted …?" is read as a question for a paper's authors or about the abstracts by a hair
# (0.49 / 0.47 with the router of session 28, 0.38 / 0.58 before): either way it abstains
OFF_TOPIC_WHO = "Who painted the Mona Lisa?"
TIMEOUT = timedelta(seconds=120)


@pytest.fixture
def mcp_home(sample_home: Path, tmp_path: Path) -> Path:
    home = tmp_path / "mcp-home"
    shutil.copytree(sample_home, home)
    return home


def over_stdio(home: Path, log: Path, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Spawn `python -m rag.cli mcp` with RAG_HOME=home, run `body` in an initialised session."""

    async def main() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "rag.cli", "mcp"],
            cwd=str(ROOT),
            env={**os.environ, "RAG_HOME": str(home)},
        )
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
                    await session.initialize()
                    return await body(session)

    return asyncio.run(main())


def over_http(url: str, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    async def main() -> T:
        async with streamable_http_client(url) as (read, write, _):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
                await session.initialize()
                return await body(session)

    return asyncio.run(main())


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text", result.content
    return result.content[0].text


def data(result: CallToolResult) -> dict[str, Any]:
    """The JSON of a successful call; over stdio it must equal the structured content."""
    assert not result.isError, text_of(result)
    parsed: dict[str, Any] = json.loads(text_of(result))
    if result.structuredContent is not None:
        assert result.structuredContent == parsed
    return parsed


def error_of(result: CallToolResult) -> str:
    """A tool error: one line, no traceback, no repr quotes around it."""
    assert result.isError, f"expected a tool error, got {text_of(result)[:200]}"
    message = text_of(result)
    assert message and "\n" not in message and "Traceback" not in message, message
    assert message[0] not in "'\"", message
    return message


def check_answer(answer: dict[str, Any]) -> None:
    """Cited ids are retrieved ids, and citation numbers point at the retrieved source."""
    retrieved = {r["n"]: r["paper_id"] for r in answer["retrieved"]}
    assert not answer["abstained"], answer["answer"]
    assert answer["citations"], answer
    for citation in answer["citations"]:
        assert retrieved.get(citation["n"]) == citation["paper_id"]
        assert citation["quote"] and 0.0 <= citation["support"] <= 1.0
    assert "PersuasionBench" in answer["answer"]
    assert any("PersuasionBench" in c["label"] + c["title"] for c in answer["citations"])


def test_stdio_lists_tools_and_searches(mcp_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        results: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}
        results["hits"] = await session.call_tool(
            "search_papers", {"query": "sparse autoencoders interpretability", "k": 3}
        )
        results["icml"] = await session.call_tool(
            "search_papers", {"query": "language models", "venue": "icml", "mode": "keyword", "k": 50}
        )
        results["nobody"] = await session.call_tool(
            "search_papers", {"query": "sparse autoencoders", "venue": "NeurIPS"}
        )
        results["no_author"] = await session.call_tool(
            "search_papers", {"query": "sparse autoencoders", "author": "Zyxwvut Nobody"}
        )
        return results

    results = over_stdio(mcp_home, tmp_path / "server.log", body)
    tools = results["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert "Returns" in (tool.description or ""), tool.name
        assert tool.annotations is not None and tool.annotations.readOnlyHint
    search = tools["search_papers"].inputSchema
    assert search["required"] == ["query"]
    assert search["properties"]["k"]["minimum"] == 1 and search["properties"]["k"]["maximum"] == 50
    assert {"venue", "year", "track", "decision", "author", "mode"} <= set(search["properties"])
    assert tools["bibtex"].inputSchema["properties"]["paper_ids"]["type"] == "array"

    hits = data(results["hits"])
    assert hits["count"] == 3 == len(hits["papers"])
    assert [p["rank"] for p in hits["papers"]] == [1, 2, 3]
    scores = [p["score"] for p in hits["papers"]]
    assert scores == sorted(scores, reverse=True)
    for paper in hits["papers"]:
        assert set(paper) >= PAPER_KEYS
        assert paper["has_abstract"] is True and isinstance(paper["abstract"], str) and paper["abstract"]
    assert "sparse autoencoder" in hits["papers"][0]["abstract"].lower()

    icml = data(results["icml"])
    assert icml["count"] > 0 and icml["filters"] == {"venue": "icml"} and icml["mode"] == "keyword"
    assert {p["venue"] for p in icml["papers"]} == {"ICML"}
    for empty in ("nobody", "no_author"):
        assert data(results[empty])["count"] == 0 and data(results[empty])["papers"] == []


def test_stdio_ask_cites_retrieved_papers_and_abstains_off_topic(mcp_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("ask", {"question": ON_TOPIC, "k": 5}),
            await session.call_tool("ask", {"question": OFF_TOPIC}),
            await session.call_tool("ask", {"question": ON_TOPIC, "decision": "Oral"}),
            await session.call_tool("ask", {"question": OFF_TOPIC_WHO}),
        ]

    on_topic, off_topic, filtered_out, who = (data(r) for r in over_stdio(mcp_home, tmp_path / "server.log", body))
    check_answer(on_topic)
    assert len(on_topic["retrieved"]) == 5
    assert on_topic["mode"] == "extractive" and on_topic["unsupported_claims"] == 0
    assert off_topic["abstained"] is True and off_topic["citations"] == [] and off_topic["retrieved"]
    assert who["abstained"] is True and who["citations"] == []
    # the sample has no decisions, so this filter leaves nothing to retrieve or cite
    assert filtered_out["abstained"] is True and filtered_out["retrieved"] == [] and filtered_out["citations"] == []


def test_stdio_lookup_and_bibtex(mcp_home: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        found = data(await session.call_tool("lookup_paper", {"query": "PersuasionBench"}))
        pid = found["papers"][0]["paper_id"]
        listed = data(await session.call_tool("lookup_paper", {"venue": "ICML", "limit": 200}))
        author = next(p for p in listed["papers"] if p["authors"])
        surname = author["authors"][0].split()[-1]
        return {
            "found": found,
            "by_id": data(await session.call_tool("lookup_paper", {"paper_id": pid})),
            "listed": listed,
            "author": author,
            "surname": surname,
            "by_author": data(await session.call_tool("lookup_paper", {"author": surname})),
            "nobody": data(await session.call_tool("lookup_paper", {"query": "PersuasionBench", "year": 1999})),
            "bib": await session.call_tool("bibtex", {"paper_ids": [author["paper_id"], pid]}),
        }

    r = over_stdio(mcp_home, tmp_path / "server.log", body)
    first = r["found"]["papers"][0]
    assert "PersuasionBench" in first["title"] + first["label"] and set(first) >= PAPER_KEYS
    assert r["by_id"]["count"] == 1 and r["by_id"]["papers"][0] == first
    assert r["listed"]["count"] == len(r["listed"]["papers"]) > 0
    assert r["listed"]["matches"] >= r["listed"]["count"]  # every ICML paper of the sample, not a page of them
    assert {p["venue"] for p in r["listed"]["papers"]} == {"ICML"}
    assert r["author"]["paper_id"] in {p["paper_id"] for p in r["by_author"]["papers"]}
    for paper in r["by_author"]["papers"]:
        assert any(r["surname"].lower() in name.lower() for name in paper["authors"])
    assert r["nobody"] == {"count": 0, "matches": 0, "papers": []}

    bib = r["bib"]
    assert not bib.isError and bib.structuredContent is None
    entries = text_of(bib).strip().split("\n\n")
    assert len(entries) == 2 and all(e.startswith("@inproceedings{") for e in entries)
    for entry, paper in zip(entries, (r["author"], first)):
        assert f"title = {{{paper['title'] or paper['label']}}}" in entry
        assert f"x-paper-id = {{{paper['paper_id']}}}" in entry
    assert r["author"]["authors"][0] in entries[0]


def test_stdio_bad_input_gives_tool_errors_and_the_server_keeps_serving(mcp_home: Path, tmp_path: Path) -> None:
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        ("search_papers", {"query": "   "}, "empty"),
        ("search_papers", {"query": "x", "k": 0}, "k must be from 1 to 50, got 0"),
        ("search_papers", {"query": "x", "k": 51}, "k must be from 1 to 50, got 51"),
        ("search_papers", {"query": "x", "mode": "fuzzy"}, "fuzzy"),
        ("search_papers", {"query": "x", "bogus": 1}, "bogus"),
        ("ask", {"question": "   "}, "empty"),
        ("lookup_paper", {}, "query"),
        ("lookup_paper", {"paper_id": "no-such-paper"}, "no-such-paper"),
        ("lookup_paper", {"paper_id": "x", "query": "y"}, "paper_id"),
        ("bibtex", {"paper_ids": ["no-such-paper", "nor-this"]}, "no-such-paper, nor-this"),
        ("no_such_tool", {}, "no_such_tool"),
    ]

    async def body(session: ClientSession) -> tuple[list[CallToolResult], CallToolResult]:
        errors = [await session.call_tool(name, args) for name, args, _ in bad_calls]
        return errors, await session.call_tool("search_papers", {"query": "persuasion", "k": 1})

    errors, after = over_stdio(mcp_home, tmp_path / "server.log", body)
    for (name, args, expected), result in zip(bad_calls, errors):
        assert expected in error_of(result), (name, args)
    assert data(after)["count"] == 1
    assert "Traceback" not in (tmp_path / "server.log").read_text()


def test_stdio_without_an_index_reports_the_library_message(tmp_path: Path) -> None:
    from rag.app import App
    from rag.errors import RagError
    from rag.settings import Settings

    empty = tmp_path / "empty-home"
    with pytest.raises(RagError) as raised:
        App(Settings(home=empty)).search("persuasion")

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("search_papers", {"query": "persuasion"})

    assert error_of(over_stdio(empty, tmp_path / "server.log", body)) == str(raised.value)


@pytest.fixture
def ui_mcp_url(mcp_home: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "ui.log").open("w")  # read it when the server fails to start
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", "ui", "--mcp", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "RAG_HOME": str(mcp_home)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_http(url, proc, timeout=90)
        yield url + "gradio_api/mcp/"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_ui_serves_the_same_tools_over_gradio_mcp(ui_mcp_url: str) -> None:
    import inspect

    from rag.tools import SPECS, PaperTools

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "tools": {t.name: t for t in (await session.list_tools()).tools},
            "hits": await session.call_tool("search_papers", {"query": "sparse autoencoders interpretability", "k": 2}),
            "nobody": await session.call_tool("search_papers", {"query": "sparse autoencoders", "venue": "NeurIPS"}),
            "answer": await session.call_tool("ask", {"question": ON_TOPIC}),
            "abstain": await session.call_tool("ask", {"question": OFF_TOPIC}),
            "empty": await session.call_tool("search_papers", {"query": "  "}),
            "bad_k": await session.call_tool("ask", {"question": ON_TOPIC, "k": 0}),
            "unknown": await session.call_tool("bibtex", {"paper_ids": ["no-such-paper"]}),
        }

    r = over_http(ui_mcp_url, body)
    # only the four tools: the UI's own handlers (chat with gr.State, HTML panels) stay hidden
    assert set(r["tools"]) == TOOLS
    for name, tool in r["tools"].items():
        assert tool.description == SPECS[name].description
        parameters = set(inspect.signature(getattr(PaperTools, name)).parameters) - {"self"}
        assert set(tool.inputSchema["properties"]) == parameters, name
    assert r["tools"]["ask"].inputSchema["required"] == ["question"]

    hits = data(r["hits"])
    assert hits["count"] == 2 and all(set(p) >= PAPER_KEYS and p["has_abstract"] for p in hits["papers"])
    assert data(r["nobody"])["papers"] == []
    check_answer(data(r["answer"]))
    abstained = data(r["abstain"])
    assert abstained["abstained"] is True and abstained["citations"] == []
    assert error_of(r["empty"]) == "query is empty"
    assert error_of(r["bad_k"]) == "k must be from 1 to 50, got 0"
    assert "no-such-paper" in error_of(r["unknown"])


# -- bounded inputs and inert results (issue 21, item 11) -------------------------------------


def short_error(result: CallToolResult, *expected: str) -> str:
    """A tool error that says what was wrong without repeating the input: a 40-character run of
    one letter is a repeated input, never part of a message."""
    message = error_of(result)
    assert len(message) <= 300, message[:400]
    assert not re.search(r"(\w)\1{40}", message), message[:400]
    for part in expected:
        assert part in message, message
    return message


def test_stdio_big_inputs_get_short_errors_and_the_server_keeps_serving(mcp_home: Path, tmp_path: Path) -> None:
    """Values of megabytes are refused in a line, not quoted back (the SDK's schema check quoted a
    query of 3 MB whole); a request line beyond the limit gets a JSON-RPC error to its id, without
    the server reading it into memory, and the next call is served."""
    calls: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
        ("search_papers", {"query": "y" * 3_000_000}, ("3,000,000 characters", "2,000")),
        ("ask", {"question": "x" * 3_000_000}, ("3000000 characters",)),
        ("lookup_paper", {"query": "z" * 3000}, ("3,000 characters",)),
        ("lookup_paper", {"paper_id": "p" * 5000}, ("paper_id is 5,000 characters",)),
        ("search_papers", {"query": "x", "author": "a" * 100_000}, ("author is 100,000 characters",)),
        ("search_papers", {"query": "x", "mode": "m" * 100_000}, ("mode is 100,000 characters",)),
        ("search_papers", {"query": "x", "k": "k" * 100_000}, ("k must be a whole number",)),
        ("search_papers", {"query": "x", "q" * 100_000: 1}, ("takes no argument",)),
        ("bibtex", {"paper_ids": ["i" * 1000]}, ("paper id is 1,000 characters",)),
        ("bibtex", {"paper_ids": ["j" * 150] * 100}, ("not in the catalogue",)),
        ("t" * 100_000, {}, ("unknown tool",)),
    ]

    async def body(session: ClientSession) -> tuple[list[CallToolResult], str, CallToolResult]:
        results = [await session.call_tool(name, args) for name, args, _ in calls]
        with pytest.raises(McpError) as too_long:  # 12 MB: beyond the line limit
            await session.call_tool("ask", {"question": "w" * 12_000_000})
        return results, str(too_long.value), await session.call_tool("search_papers", {"query": "persuasion", "k": 1})

    results, too_long, after = over_stdio(mcp_home, tmp_path / "server.log", body)
    for (_, _, expected), result in zip(calls, results):
        short_error(result, *expected)
    assert re.fullmatch(r"request of 12,000,\d{3} bytes; the limit is 4,194,304 bytes", too_long), too_long
    assert data(after)["count"] == 1


@pytest.fixture
def escape_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Papers whose title, authors and abstract hold terminal escapes (stand-in embedder)."""
    monkeypatch.setenv("RAG_EMBEDDER", "hash")
    home = tmp_path / "escape-home"
    papers = write_escape_records(tmp_path / "escapes.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "rag.cli", "ingest", str(papers)],
        cwd=ROOT,
        env={**os.environ, "RAG_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return home


def test_stdio_results_carry_no_terminal_escapes(escape_home: Path, tmp_path: Path) -> None:
    """The CLI strips control sequences from its JSON; MCP results did not (they came as \\u001b)."""

    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("search_papers", {"query": "EscNet escapes", "k": 2}),
            await session.call_tool("ask", {"question": "What is EscNet?"}),
            await session.call_tool("lookup_paper", {"query": "EscNet"}),
            await session.call_tool("lookup_paper", {"paper_id": "esc-1"}),
            await session.call_tool("bibtex", {"paper_ids": ["esc-1"]}),
        ]

    results = over_stdio(escape_home, tmp_path / "server.log", body)
    for result in results:
        assert not result.isError, text_of(result)
        text = text_of(result)
        assert "EscNet" in text
        assert "\\u001b" not in text and "\\u009b" not in text and "\\u0007" not in text, text[:500]
        assert visible_escapes(text) == [], text[:500]
        if result.structuredContent is not None:
            assert "\x1b" not in json.dumps(result.structuredContent, ensure_ascii=False)


def test_gradio_mcp_bounds_inputs_and_strips_escapes(escape_home: Path, tmp_path: Path) -> None:
    """The same over `rag ui --mcp`: short errors for big values, no escape codes in results."""
    port = free_port()
    with (tmp_path / "ui.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rag.cli", "ui", "--mcp", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, "RAG_HOME": str(escape_home)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_http(f"http://127.0.0.1:{port}/", proc, timeout=90)

            async def body(session: ClientSession) -> list[CallToolResult]:
                return [
                    await session.call_tool("search_papers", {"query": "y" * 3_000_000}),
                    await session.call_tool("ask", {"question": "x" * 3_000_000}),  # 12 MB: 413 from the SDK
                    await session.call_tool("bibtex", {"paper_ids": ["i" * 1000]}),
                    await session.call_tool("search_papers", {"query": "EscNet escapes", "k": 2}),
                    await session.call_tool("ask", {"question": "What is EscNet?"}),
                    await session.call_tool("bibtex", {"paper_ids": ["esc-1"]}),
                ]

            r = over_http(f"http://127.0.0.1:{port}/gradio_api/mcp/", body)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    short_error(r[0], "3,000,000 characters")
    short_error(r[1], "3000000 characters")
    short_error(r[2], "1,000 characters")
    for result in r[3:]:
        text = text_of(result)
        assert not result.isError and "EscNet" in text, text[:300]
        assert "\\u001b" not in text and visible_escapes(text) == [], text[:500]
