"""The tools of `rag.tools` inside the running UI, for `rag ui --mcp`.

Gradio's MCP server (`launch(mcp_server=True)`, streamable HTTP at /gradio_api/mcp/, SSE at
/gradio_api/mcp/sse) lists every public API endpoint as a tool, named after its function and
described by its docstring. So each tool becomes a typed function registered with `gr.api` under
its own name, with the docstring built from the shared spec, and the UI's own event handlers (which
carry per-tab gr.State and return HTML) become undocumented endpoints: the browser still calls them,
agents do not see them. The tools run unqueued, which Gradio's MCP server calls in-process instead
of through an HTTP loop back to itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from rag.app import App
from rag.errors import RagError
from rag.tools import SPECS, PaperTools, bounded

log = logging.getLogger(__name__)


class ToolError(gr.Error):
    """gr.Error whose str() is the bare message (gr.Error's is its repr, quotes included), since
    the MCP server sends str() of the exception as the tool error."""

    def __str__(self) -> str:
        return str(self.message)


def _run(tools: PaperTools, name: str, arguments: dict[str, Any]) -> str:
    """JSON (or BibTeX) text; a RagError becomes a tool error with the same one-line message."""
    try:
        result = tools.call(name, {k: v for k, v in arguments.items() if v is not None})
    except RagError as err:
        raise ToolError(bounded(str(err)), print_exception=False) from err
    except Exception as err:  # a bug, not a user error: log it, answer briefly
        log.exception("tool %s failed", name)
        raise ToolError(f"internal error ({type(err).__name__}); see the server log", print_exception=False) from err
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def tool_functions(tools: PaperTools) -> list[Callable[..., str]]:
    """One typed function per tool; Gradio reads the names, hints and docstrings."""

    def search_papers(
        query: str,
        k: int | None = None,
        venue: str | None = None,
        year: int | None = None,
        track: str | None = None,
        decision: str | None = None,
        author: str | None = None,
        mode: str | None = None,
    ) -> str:
        return _run(
            tools,
            "search_papers",
            dict(query=query, k=k, venue=venue, year=year, track=track, decision=decision, author=author, mode=mode),
        )

    def ask(
        question: str,
        k: int | None = None,
        venue: str | None = None,
        year: int | None = None,
        track: str | None = None,
        decision: str | None = None,
        author: str | None = None,
    ) -> str:
        return _run(
            tools,
            "ask",
            dict(question=question, k=k, venue=venue, year=year, track=track, decision=decision, author=author),
        )

    def lookup_paper(
        query: str | None = None,
        paper_id: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        track: str | None = None,
        decision: str | None = None,
        author: str | None = None,
        limit: int | None = None,
    ) -> str:
        return _run(
            tools,
            "lookup_paper",
            dict(
                query=query,
                paper_id=paper_id,
                venue=venue,
                year=year,
                track=track,
                decision=decision,
                author=author,
                limit=limit,
            ),
        )

    def bibtex(paper_ids: list[str]) -> str:
        return _run(tools, "bibtex", dict(paper_ids=paper_ids))

    def count_papers(
        venue: str | None = None,
        year: int | None = None,
        track: str | None = None,
        decision: str | None = None,
        author: str | None = None,
        topic: str | None = None,
    ) -> str:
        return _run(
            tools,
            "count_papers",
            dict(venue=venue, year=year, track=track, decision=decision, author=author, topic=topic),
        )

    def list_papers(
        venue: str | None = None,
        year: int | None = None,
        track: str | None = None,
        decision: str | None = None,
        author: str | None = None,
        topic: str | None = None,
        limit: int | None = None,
    ) -> str:
        return _run(
            tools,
            "list_papers",
            dict(venue=venue, year=year, track=track, decision=decision, author=author, topic=topic, limit=limit),
        )

    functions: list[Callable[..., str]] = [search_papers, ask, lookup_paper, bibtex, count_papers, list_papers]
    for fn in functions:
        fn.__doc__ = SPECS[fn.__name__].docstring()
    return functions


def add_tools(demo: gr.Blocks, app: App) -> None:
    """Register the tools on `demo` (before launch) and hide the UI's handlers from MCP."""
    for block_fn in demo.fns.values():
        if block_fn.api_visibility == "public":
            block_fn.api_visibility = "undocumented"
    with demo:
        for fn in tool_functions(PaperTools(app)):
            gr.api(fn, api_name=fn.__name__, queue=False)


def check_started(demo: gr.Blocks) -> None:
    """Gradio records a failure to start its MCP server in `mcp_error` and prints it only when not
    quiet, then serves the UI without the tools: close the app and fail loudly instead."""
    if not demo.mcp_server:
        demo.close()
        raise RuntimeError(getattr(demo, "mcp_error", None) or "Gradio's MCP server did not start")
